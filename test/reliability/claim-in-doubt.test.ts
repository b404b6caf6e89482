// Found by the trust regressions (issue 11): a claim answered `202 pending` that the server never
// applied stays unknown; meanwhile another claim (the same rule without once_per_epoch, or a second
// claiming rule) moved lifetime, and reconciliation credited the first claim with that money, so
// its deposit "all" went out twice over. Now no claim is signed for a wallet while another of its
// claims is sending or unknown, and a burst of signed requests in one second keeps its own
// strictly-rising timestamps instead of being mistaken for a wrong clock.
import { afterEach, expect, it } from 'vitest';
import type { Rule } from '../../src/domain.js';
import { MIN, openRig, SOL, type Rig } from './trust-rig.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const sweep: Rule = {
  name: 'sweep',
  id: 'sweep',
  when: [{ field: 'pending_sol', op: 'gte', value: SOL / 2n }],
  do: [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'all' } }],
  limits: { oncePerEpoch: false, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
};

const sum = (entries: Array<{ amountLamports: bigint }>) => entries.reduce((a, e) => a + e.amountLamports, 0n);

it.each([
  { name: 'the same rule again (once_per_epoch off)', rules: [sweep] },
  {
    name: 'a second claiming rule (once_per_epoch on)',
    rules: [
      { ...sweep, name: 'a', limits: { ...sweep.limits, oncePerEpoch: true } },
      { name: 'b', id: 'b', when: sweep.when, do: [{ kind: 'claim' }], limits: { ...sweep.limits, oncePerEpoch: true } } satisfies Rule,
    ],
  },
])('an unknown claim is never credited with another claim: $name', async ({ rules }) => {
  rig = await openRig({ rule: rules, pendingLamports: SOL, balanceLamports: 100n * SOL, claimSettleMs: MIN });
  rig.fault({ kind: 'malformed', match: { op: 'claim' }, status: 202, body: '{"status":"pending"}', apply: false });
  await rig.cycle();
  // While the first claim is unknown and unsettled, nothing else claims.
  await rig.cycle();
  expect(rig.ledger('claim')).toEqual([]);
  expect(rig.events('rule.skipped').some((e) => e['reason'] === 'claim_in_doubt')).toBe(true);
  rig.time.advance(2 * MIN);
  await rig.cycle();
  // Reconciled as not applied after claim_settle, then signed again: one real claim, and what was
  // deposited is never more than what was really claimed.
  expect(sum(rig.ledger('deposit'))).toBeLessThanOrEqual(sum(rig.ledger('claim')));
  expect(rig.ledger('claim')).toHaveLength(1);
});

it('a burst of signed requests within one second keeps strictly rising timestamps, with no false clock warning', async () => {
  rig = await openRig({ rule: sweep, pendingLamports: SOL, balanceLamports: 100n * SOL });
  for (let i = 0; i < 4; i++) {
    await rig.cycle();
    rig.setPending(SOL);
  }
  const ts = rig.sent.map((p) => p.ts);
  expect(ts.length).toBe(8);
  for (let i = 1; i < ts.length; i++) expect(ts[i]!).toBeGreaterThan(ts[i - 1]!);
  expect(rig.events('clock.skew')).toEqual([]);
  expect(rig.ledger().map((e) => e.op)).toEqual(['claim', 'deposit', 'claim', 'deposit', 'claim', 'deposit', 'claim', 'deposit']);
});
