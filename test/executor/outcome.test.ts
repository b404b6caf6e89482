// accrualSlack (executor/reconcile.ts): how much more than the pending seen a claim may take before it is an anomaly.
// Rewards accrue between the read and the claim (the demo sandbox accrues every millisecond), so a
// little more is normal; 100 times more is not. The step is bounded by what was seen either way.
import { describe, expect, it } from 'vitest';
import { accrualSlack } from '../../src/executor/reconcile.js';

const SOL = 1_000_000_000n;

describe('accrualSlack', () => {
  it.each([
    ['nothing seen: the 0.001 SOL floor', 0n, 1_000_000n],
    ['0.08 SOL (the demo): the floor, above 1%', 80_000_000n, 1_000_000n],
    ['0.1 SOL: 1% equals the floor', SOL / 10n, 1_000_000n],
    ['5 SOL: 1%', 5n * SOL, 50_000_000n],
    ['u64-scale amounts stay exact', 18_446_744_073_709_551_615n, 184_467_440_737_095_516n],
  ])('%s', (_what, seen, slack) => {
    expect(accrualSlack(seen)).toBe(slack);
  });

  it('the demo sandbox accrual between a read and a claim is within it; an inflated claim is not', () => {
    const seen = 81_844_999n;
    expect(81_923_332n - seen).toBeLessThanOrEqual(accrualSlack(seen));
    expect(50n * SOL - SOL / 2n).toBeGreaterThan(accrualSlack(SOL / 2n));
  });
});
