import { describe, expect, it } from 'vitest';
import { claimLooksApplied } from '../../src/worker/reconcile.js';

const before = (pending: bigint, lifetime: bigint | null) => ({
  pendingLamports: pending.toString(),
  lifetimeLamports: lifetime === null ? null : lifetime.toString(),
});

describe('claimLooksApplied', () => {
  it.each([
    // [what, before, after pending, after lifetime, applied, claimed]
    ['lifetime rose by the claim', before(500n, 1000n), 3n, 1500n, true, 500n],
    ['lifetime rose by more than pending (service counts accrual): claimed capped at pending', before(500n, 1000n), 0n, 1600n, true, 500n],
    ['no lifetime reported, pending dropped', before(500n, null), 7n, null, true, 493n],
    ['pending dropped to zero, lifetime flat', before(500n, 1000n), 0n, 1000n, true, 500n],
    ['nothing changed', before(500n, 1000n), 500n, 1000n, false, undefined],
    ['pending accrued further, lifetime flat', before(500n, 1000n), 520n, 1000n, false, undefined],
    ['lifetime missing afterwards, pending grew', before(500n, 1000n), 600n, null, 'undetermined', undefined],
    // Found by the hostile-server test: the claim was applied, then pending jumped by more than it
    // claimed; with no lifetime in the pre-claim summary, "pending did not drop" proves nothing.
    ['no lifetime before, pending jumped past the claim', before(500n, null), 5_000n, 1500n, 'undetermined', undefined],
    ['no lifetime either side, pending flat', before(500n, null), 500n, null, 'undetermined', undefined],
  ] as const)('%s', (_what, b, pendingAfter, lifetimeAfter, expected, claimed) => {
    const v = claimLooksApplied(b, { pendingLamports: pendingAfter, lifetimeLamports: lifetimeAfter });
    const outcome = expected === true ? 'applied' : expected === false ? 'not_applied' : expected;
    expect(v.outcome).toBe(outcome);
    expect(v.applied).toBe(outcome === 'applied');
    expect(v.claimedLamports).toBe(claimed);
    expect(v.note).not.toBe('');
  });
});
