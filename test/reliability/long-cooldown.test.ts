// Time and restarts review (helper 30): a cooldown longer than a day. The limits are judged against
// the plan history the store reads for a turn, and that read went back 24 h (and the current epoch)
// only: a rule with `cooldown: 3d` found its plan of yesterday's epoch gone from the history after
// 24 h and fired again, every day. And a cooldown counted from when a plan was recorded, not from
// when it last moved money: a plan held for hours (an unknown deposit until an operator resolved
// it, a daemon down) sent its mint, and the rule fired again in the same turn, two mints minutes
// apart under a 6 h cooldown. Real cycle, SQLite store and sandbox; only time is fake.
import { afterEach, describe, expect, it } from 'vitest';
import type { Rule } from '../../src/domain.js';
import { cooldownRule, DAY, HOUR, openRig, SOL, type Rig } from './trust-rig.js';

const EVERY_THREE_DAYS = cooldownRule({ cooldownMs: 3 * DAY });

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('a cooldown longer than a day', () => {
  it('cooldown 3d: no second plan on the next days\' epochs, in-process and after a restart; the rule fires again after 3 days', async () => {
    rig = await openRig({ rule: EVERY_THREE_DAYS, pendingLamports: SOL, lifetimeLamports: SOL, balanceLamports: 10n * SOL });
    const r = rig;
    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);

    // 25 h, 49 h (a restart first: a new process, a new decision clock) and 71 h after the first plan.
    for (const [hours, step] of [[25, 25], [49, 24], [71, 22]] as const) {
      r.time.advance(step * HOUR);
      if (hours === 49) r.restart();
      r.setPending(SOL);
      await r.cycle();
      expect(r.ledger().map((e) => e.op), `${hours} h after the first plan`).toEqual(['claim', 'deposit']);
      expect(r.events('rule.skipped').at(-1)).toMatchObject({ reason: 'cooldown' });
    }

    r.time.advance(2 * HOUR); // 73 h
    r.setPending(SOL);
    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['claim', 'deposit', 'claim', 'deposit']);
  });
});

const DEPOSIT_THEN_MINT: Rule = {
  name: 'ladder',
  id: 'ladder',
  when: [{ field: 'pending_sol', op: 'gte', value: SOL / 2n }],
  do: [
    { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'fixed', lamports: SOL } },
    { kind: 'mint', symbol: 'SOL5X', amount: { kind: 'fixed', lamports: SOL } },
  ],
  limits: { oncePerEpoch: false, cooldownMs: 6 * HOUR, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
};

describe('a cooldown runs from the last money a plan moved', () => {
  it('a plan held 7 h by an unknown deposit sends its mint once resolved: the rule does not fire again for 6 h from then', async () => {
    rig = await openRig({ rule: DEPOSIT_THEN_MINT, pendingLamports: SOL, balanceLamports: 10n * SOL });
    const r = rig;
    r.fault({ kind: 'apply_then_5xx', match: { op: 'deposit' }, status: 500 });
    await r.cycle();
    const deposit = r.plans()[0]?.steps[0];
    expect(deposit?.state).toBe('unknown');

    r.time.advance(7 * HOUR); // the operator looks on chain 7 h later
    r.store.resolve(deposit!.id, true, 'seen on chain');
    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['deposit', 'mint']);
    expect(r.events('rule.skipped').at(-1)).toMatchObject({ reason: 'cooldown' });

    r.time.advance(6 * HOUR);
    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['deposit', 'mint', 'deposit', 'mint']);
  });
});
