// Issue 24, finding 3: "Epochs are believed whatever they say." A server moving `epoch` forward a
// day a second made a fixed 0.1 SOL once-per-epoch rule deposit 8 times in 8 seconds; backward, 8
// more; 2099-01-01 was accepted. Replayed against the real sandbox (its ledger is the truth), the
// real client, executor and wallet cycle, and a real SQLite state (trust-rig.ts). SPEC §2: an epoch
// that is not a real date, lies more than a day from our UTC date, or goes backward for the wallet
// is refused: the poll fails with INVALID_EPOCH and nothing is decided from it.
import { afterEach, describe, expect, it } from 'vitest';
import type { Rule } from '../../src/domain.js';
import { DAY, openRig, SOL, type Rig } from './trust-rig.js';

/** The rule of the report: a fixed 0.1 SOL deposit, once per epoch, paid from the wallet's balance. */
const DEPOSIT_ONCE_PER_EPOCH: Rule = {
  name: 'topup',
  id: 'topup',
  when: [{ field: 'pending_sol', op: 'gte', value: 0n }],
  do: [{ kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'fixed', lamports: SOL / 10n } }],
  limits: { oncePerEpoch: true, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
};

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const open = () => openRig({ rule: DEPOSIT_ONCE_PER_EPOCH, pendingLamports: 0n, balanceLamports: 100n * SOL });
const refusals = (r: Rig) => r.events('poll.failed').map((e) => [e['epoch'], e['why']]);
const summaryWith = (r: Rig, epoch: string) => JSON.stringify({ address: r.wallet.address, epoch, pending_sol: 0, lifetime_sol: 0, rank: 1, tier: 'Gold' });

describe('finding 3: a server epoch is a claim about the calendar', () => {
  it('forward a day every poll: only the epochs within a day of our date act (2 deposits, not 8)', async () => {
    const r = (rig = await open());
    const today = r.sandbox.world.epoch();
    for (let i = 0; i < 8; i++) {
      await r.cycle();
      r.sandbox.advanceEpoch();
      r.time.advance(1_000);
    }
    const deposits = r.ledger('deposit');
    expect(deposits.map((d) => d.epoch)).toEqual([today, new Date(Date.parse(today) + DAY).toISOString().slice(0, 10)]);
    expect(r.plans()).toHaveLength(2);
    const failed = r.events('poll.failed');
    expect(failed).toHaveLength(6);
    for (const e of failed) {
      expect(e['err']).toMatch(/^INVALID_EPOCH: epoch refused: epoch \d{4}-\d{2}-\d{2} is \d+ days ahead of this machine's UTC date/);
      expect(e['why']).toBe('too_far');
    }
    // Nothing was decided from a refused epoch, and the wallet's record keeps the last believed one.
    expect(r.events('rule.fired')).toHaveLength(2);
    expect(r.store.walletState(r.wallet.address)?.epoch).toBe(deposits[1]?.epoch);
  });

  it('backward: an epoch before the last one recorded for the address is refused, and stays refused', async () => {
    const r = (rig = await open());
    await r.cycle();
    expect(r.ledger('deposit')).toHaveLength(1);
    for (let i = 0; i < 8; i++) {
      r.time.serverOffset -= DAY; // the server's calendar goes back a day each poll
      r.time.advance(1_000);
      await r.cycle();
    }
    expect(r.ledger('deposit')).toHaveLength(1);
    expect(r.plans()).toHaveLength(1);
    // Yesterday is within a day of our date, but behind what was recorded: backward; then too far.
    expect(refusals(r)[0]).toEqual([expect.any(String), 'backward']);
    expect(refusals(r).slice(1).every(([, why]) => why === 'too_far')).toBe(true);
    expect(refusals(r)).toHaveLength(8);
    // The day the server is right again, the wallet resumes: once per epoch still holds for today.
    r.time.serverOffset = 0;
    await r.cycle();
    expect(r.events('poll.ok')).toHaveLength(2);
    expect(r.ledger('deposit')).toHaveLength(1);
  });

  it.each([
    ['2099-01-01', 'too_far', /^INVALID_EPOCH: epoch refused: epoch 2099-01-01 is \d+ days ahead/],
    ['2025-02-30', undefined, /^INVALID_EPOCH: GET .* : invalid response: epoch: expected a date YYYY-MM-DD, got the string "2025-02-30"/],
  ])('a summary saying epoch %s is refused: INVALID_EPOCH, no plan, no deposit', async (epoch, why, err) => {
    const r = (rig = await open());
    r.fault({ kind: 'malformed', match: { op: 'summary' }, body: summaryWith(r, epoch), times: 3 });
    for (let i = 0; i < 3; i++) await r.cycle();
    expect(r.ledger()).toEqual([]);
    expect(r.plans()).toEqual([]);
    const failed = r.events('poll.failed');
    expect(failed).toHaveLength(3);
    for (const e of failed) {
      expect(e['err']).toMatch(err);
      expect(e['why']).toBe(why);
    }
    expect(r.store.walletState(r.wallet.address)?.epoch ?? null).toBeNull();
    // The next honest summary is believed.
    await r.cycle();
    expect(r.ledger('deposit')).toHaveLength(1);
  });
});
