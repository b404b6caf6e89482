// claimLooksApplied: applied only on evidence only a claim leaves (lifetime rose by about what
// pending dropped, in one epoch); a pending drop alone is undetermined and "moved" (held for an
// operator); nothing moved and lifetime missing is undetermined and quiet (looked at again).
import { describe, expect, it } from 'vitest';
import { claimLooksApplied, provedClaimed } from '../../src/executor/reconcile.js';

const SOL = 1_000_000_000n;
const before = (pending: bigint, lifetime: bigint | null, epoch = '2026-11-26') => ({
  pendingLamports: pending.toString(),
  lifetimeLamports: lifetime === null ? null : lifetime.toString(),
  epoch,
});
type Expected = 'applied' | 'not_applied' | 'held' | 'later';

describe('claimLooksApplied', () => {
  it.each([
    // [what, before, after pending, after lifetime, after epoch, expected, claimed]
    ['lifetime rose by the claim, pending dropped', before(500n, 1000n), 3n, 1500n, undefined, 'applied', 500n],
    ['lifetime rose by pending plus accrual before the claim (within the slack): claimed capped at pending', before(SOL, 0n), 0n, SOL + SOL / 200n, undefined, 'applied', SOL],
    ['a late look: accrual since the claim is all of pending now', before(SOL / 2n, SOL), SOL / 3n, SOL + SOL / 2n, undefined, 'applied', SOL / 2n],
    ['the finding: pending dropped, lifetime flat', before(SOL / 2n, SOL), 0n, SOL, undefined, 'held', undefined],
    ['pending dropped, lifetime missing before', before(500n, null), 7n, null, undefined, 'held', undefined],
    ['pending dropped, lifetime missing now', before(500n, 1000n), 7n, null, undefined, 'held', undefined],
    ['the finding with an epoch rollover: pending dropped, lifetime flat', before(SOL / 2n, SOL), 0n, SOL, '2026-11-27', 'held', undefined],
    ['an epoch rollover even when lifetime matches the drop', before(SOL / 2n, SOL), 0n, SOL + SOL / 2n, '2026-11-27', 'held', undefined],
    ['lifetime rose by far less than pending dropped', before(SOL, 0n), 0n, SOL / 10n, undefined, 'held', undefined],
    ['a server that held the claim while rewards accrued: lifetime rose by more than was pending (claimed capped at pending)', before(SOL / 10n, 0n), SOL / 100n, SOL / 5n, undefined, 'applied', SOL / 10n],
    ['lifetime rose, pending did not drop', before(SOL, 0n), 2n * SOL, SOL, undefined, 'held', undefined],
    ['lifetime went down', before(500n, 1000n), 500n, 900n, undefined, 'held', undefined],
    ['nothing changed', before(500n, 1000n), 500n, 1000n, undefined, 'not_applied', undefined],
    ['pending accrued further, lifetime flat', before(500n, 1000n), 520n, 1000n, undefined, 'not_applied', undefined],
    ['an epoch rollover with nothing moved', before(500n, 1000n), 500n, 1000n, '2026-11-27', 'not_applied', undefined],
    ['lifetime missing afterwards, pending grew', before(500n, 1000n), 600n, null, undefined, 'later', undefined],
    ['no lifetime before, pending jumped', before(500n, null), 5_000n, 1500n, undefined, 'later', undefined],
    ['no lifetime either side, pending flat', before(500n, null), 500n, null, undefined, 'later', undefined],
  ] as const)('%s', (_what, b, pendingAfter, lifetimeAfter, epochAfter, expected: Expected, claimed) => {
    const v = claimLooksApplied(b, { pendingLamports: pendingAfter, lifetimeLamports: lifetimeAfter, epoch: epochAfter ?? b.epoch });
    const outcome = expected === 'held' || expected === 'later' ? 'undetermined' : expected;
    expect(v.outcome).toBe(outcome);
    expect(v.applied).toBe(outcome === 'applied');
    if (outcome === 'undetermined') expect(v.moved).toBe(expected === 'held');
    expect(v.claimedLamports).toBe(claimed);
    expect(v.note).not.toBe('');
  });

  it('the tolerance, at its edge: the rise covers the drop less the slack (1 %, at least 0.001 SOL)', () => {
    const at = (b: ReturnType<typeof before>, pending: bigint, lifetime: bigint) => claimLooksApplied(b, { pendingLamports: pending, lifetimeLamports: lifetime, epoch: b.epoch }).outcome;
    const slack = SOL / 100n;
    expect(at(before(SOL, 0n), 0n, SOL - slack)).toBe('applied');
    expect(at(before(SOL, 0n), 0n, SOL - slack - 1n)).toBe('undetermined');
    expect(at(before(SOL / 100n, 0n), 0n, SOL / 100n - 1_000_000n)).toBe('applied');
    expect(at(before(SOL / 100n, 0n), 0n, SOL / 100n - 1_000_001n)).toBe('undetermined');
  });
});

// provedClaimed: what a claim acknowledged without claimed_sol is proved to have brought (helper 38):
// lifetime's rise in the same epoch, never above the pending seen before it; nothing else proves it.
describe('provedClaimed', () => {
  it.each([
    ['lifetime rose by all that was pending', before(SOL, 0n), SOL, undefined, SOL],
    ['a partial claim (or a fee): the rise, less than pending', before(SOL, 2n * SOL), 2n * SOL + SOL / 4n, undefined, SOL / 4n],
    ['a rise above pending (accrual, another claim) is capped at pending', before(SOL, 0n), 3n * SOL, undefined, SOL],
    ['no rise: nothing proved', before(SOL, SOL), SOL, undefined, undefined],
    ['lifetime went down: nothing proved', before(SOL, SOL), SOL / 2n, undefined, undefined],
    ['lifetime missing before', before(SOL, null), SOL, undefined, undefined],
    ['lifetime missing after', before(SOL, 0n), null, undefined, undefined],
    ['the epoch rolled over: a rise may be the rollover\'s', before(SOL, 0n), SOL, '2026-11-27', undefined],
  ])('%s', (_what, b, lifetimeAfter, epochAfter, want) => {
    expect(provedClaimed(b, { pendingLamports: 0n, lifetimeLamports: lifetimeAfter, epoch: epochAfter ?? b.epoch })).toBe(want);
  });
});
