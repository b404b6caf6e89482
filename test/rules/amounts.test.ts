import { describe, expect, it } from 'vitest';
import { MAX_LAMPORTS } from '../../src/amount.js';
import type { AmountSpec } from '../../src/domain.js';
import { AutoclaimError } from '../../src/errors.js';
import { checkActionLimit, planStepProblem, resolveStepAmount } from '../../src/rules/amounts.js';
import { describeStep, formatDuration, formatPpm } from '../../src/rules/format.js';
import { all, fixed, pct, SOL } from './builders.js';

describe('resolveStepAmount', () => {
  it.each<{ name: string; spec: AmountSpec; claimed: bigint | undefined; want: bigint }>([
    { name: '50% of 3 lamports rounds down to 1', spec: pct(50), claimed: 3n, want: 1n },
    { name: '50% of 1 lamport is 0', spec: pct(50), claimed: 1n, want: 0n },
    { name: '100% is all', spec: pct(100), claimed: 7n, want: 7n },
    { name: 'all', spec: all, claimed: 7n, want: 7n },
    { name: '12.5% of 1 SOL', spec: pct(12.5), claimed: SOL('1'), want: SOL('0.125') },
    { name: '12.5% of 7 lamports rounds down to 0', spec: pct(12.5), claimed: 7n, want: 0n },
    { name: '12.5% of 8 lamports is 1', spec: pct(12.5), claimed: 8n, want: 1n },
    { name: '0.0001% (1 ppm) of 999999 lamports is 0', spec: { kind: 'percent', ppm: 1 }, claimed: 999_999n, want: 0n },
    { name: '100% of u64 max does not overflow', spec: pct(100), claimed: MAX_LAMPORTS, want: MAX_LAMPORTS },
    { name: 'percent of nothing claimed', spec: pct(50), claimed: 0n, want: 0n },
    { name: 'fixed ignores the claim', spec: fixed('1.5'), claimed: 3n, want: SOL('1.5') },
    { name: 'fixed without a claim', spec: fixed('1.5'), claimed: undefined, want: SOL('1.5') },
  ])('$name', ({ spec, claimed, want }) => {
    expect(resolveStepAmount(spec, claimed)).toBe(want);
  });

  it.each<{ name: string; spec: AmountSpec; claimed: bigint | undefined; code: string }>([
    { name: 'percent without a claim', spec: pct(50), claimed: undefined, code: 'AMOUNT_NEEDS_CLAIM' },
    { name: 'all without a claim', spec: all, claimed: undefined, code: 'AMOUNT_NEEDS_CLAIM' },
    { name: 'fractional ppm', spec: { kind: 'percent', ppm: 0.5 }, claimed: 10n, code: 'AMOUNT_INVALID' },
    { name: 'negative ppm', spec: { kind: 'percent', ppm: -1 }, claimed: 10n, code: 'AMOUNT_INVALID' },
    { name: 'negative claim', spec: all, claimed: -1n, code: 'AMOUNT_INVALID' },
  ])('throws: $name', ({ spec, claimed, code }) => {
    expect(() => resolveStepAmount(spec, claimed)).toThrow(AutoclaimError);
    expect(() => resolveStepAmount(spec, claimed)).toThrow(expect.objectContaining({ code }));
  });
});

describe('planStepProblem: a withdraw or burn is never a share of the claim', () => {
  // The claim receives SOL; a withdraw takes shares, a burn tokens (helper 34): decide refuses
  // such a rule even if a config slipped past the loader's check.
  it.each(['withdraw', 'burn'] as const)('%s of 50% or all of the claim', (kind) => {
    for (const amount of [pct(50), all]) {
      expect(planStepProblem([{ kind: 'claim' }, { kind, symbol: 'SOL2X', amount }])).toMatch(/not SOL, so it cannot be a share of the SOL claimed/);
    }
    expect(planStepProblem([{ kind: 'claim' }, { kind, symbol: 'SOL2X', amount: fixed('1') }])).toBeUndefined();
    expect(planStepProblem([{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: pct(50) }])).toBeUndefined();
  });
});

describe('checkActionLimit', () => {
  const safety = { maxLamportsPerAction: SOL('100') };
  it.each([
    { lamports: SOL('100'), ok: true },
    { lamports: SOL('100') + 1n, ok: false },
    { lamports: 0n, ok: true },
  ])('$lamports lamports → ok $ok', ({ lamports, ok }) => {
    expect(checkActionLimit(lamports, safety).ok).toBe(ok);
  });
  it('says what it refused in SOL', () => {
    expect(checkActionLimit(SOL('100.000000001'), safety).detail).toBe('100.000000001 SOL exceeds max_sol_per_action 100');
    expect(checkActionLimit(SOL('101'), safety, 'SOL5X tokens').detail).toBe('101 SOL5X tokens exceeds max_sol_per_action 100');
  });
});

describe('describeStep says each amount in its unit (helper 34)', () => {
  it.each([
    ['deposit 1.5 SOL into SOL2X', { kind: 'deposit', symbol: 'SOL2X', amount: fixed('1.5') }],
    ['mint JLP2X with 1.5 SOL', { kind: 'mint', symbol: 'JLP2X', amount: fixed('1.5') }],
    ['withdraw 1 SOL2X vault shares', { kind: 'withdraw', symbol: 'SOL2X', amount: fixed('1') }],
    ['burn 2 JLP2X tokens', { kind: 'burn', symbol: 'JLP2X', amount: fixed('2') }],
  ] as const)('%s', (text, step) => {
    expect(describeStep(step)).toBe(text);
  });
});

describe('formatting for details', () => {
  it.each([
    { ms: 0, text: '0ms' },
    { ms: 999, text: '999ms' },
    { ms: 1_000, text: '1s' },
    { ms: 45_500, text: '45s' },
    { ms: 2 * 3_600_000 + 13 * 60_000 + 59_999, text: '2h 13m' },
    { ms: 6 * 3_600_000, text: '6h' },
    { ms: 86_400_000 + 5 * 60_000, text: '1d' },
    { ms: 86_400_000 + 6 * 3_600_000, text: '1d 6h' },
  ])('formatDuration($ms) = $text', ({ ms, text }) => {
    expect(formatDuration(ms)).toBe(text);
  });
  it.each([
    { ppm: 500_000, text: '50%' },
    { ppm: 125_000, text: '12.5%' },
    { ppm: 1, text: '0.0001%' },
    { ppm: 1_000_000, text: '100%' },
  ])('formatPpm($ppm) = $text', ({ ppm, text }) => {
    expect(formatPpm(ppm)).toBe(text);
  });
});
