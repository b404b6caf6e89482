// Time and restarts review (helper 30): a cooldown longer than a day. The limits are judged against
// the plan history the store reads for a turn, and that read went back 24 h (and the current epoch)
// only: a rule with `cooldown: 3d` found its plan of yesterday's epoch gone from the history after
// 24 h and fired again, every day. Real cycle, SQLite store and sandbox; only time is fake.
import { afterEach, describe, expect, it } from 'vitest';
import type { Rule } from '../../src/domain.js';
import { DAY, HOUR, openRig, SOL, type Rig } from './trust-rig.js';

const EVERY_THREE_DAYS: Rule = {
  name: 'compound',
  id: 'compound',
  when: [{ field: 'pending_sol', op: 'gte', value: SOL / 2n }],
  do: [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'percent', ppm: 500_000 } }],
  limits: { oncePerEpoch: true, cooldownMs: 3 * DAY, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
};

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
