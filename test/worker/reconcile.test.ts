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
    ['lifetime missing afterwards, pending grew', before(500n, 1000n), 600n, null, false, undefined],
  ] as const)('%s', (_what, b, pendingAfter, lifetimeAfter, applied, claimed) => {
    const v = claimLooksApplied(b, { pendingLamports: pendingAfter, lifetimeLamports: lifetimeAfter });
    expect(v.applied).toBe(applied);
    expect(v.claimedLamports).toBe(claimed);
    expect(v.note).not.toBe('');
  });
});
