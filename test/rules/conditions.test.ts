import { describe, expect, it } from 'vitest';
import type { CmpOp, Condition, WalletSummary } from '../../src/domain.js';
import { evaluateCondition, evaluateConditions, stillHolds } from '../../src/rules/conditions.js';
import { claim, deposit, fixed, rule, SOL, summary } from './builders.js';

// Each comparison operator against a value one unit below, exactly at, and one unit above the
// threshold: [below, at, above].
const OPS: Record<CmpOp, [boolean, boolean, boolean]> = {
  gt: [false, false, true],
  gte: [false, true, true],
  lt: [true, false, false],
  lte: [true, true, false],
  eq: [false, true, false],
  ne: [true, false, true],
};
const POSITIONS = ['below', 'at', 'above'] as const;

interface Case {
  name: string;
  cond: Condition;
  s: WalletSummary;
  holds: boolean;
}

const threshold = SOL('0.05');
const lamportFieldCases: Case[] = (['pending_sol', 'lifetime_sol'] as const).flatMap((field) =>
  (Object.keys(OPS) as CmpOp[]).flatMap((op) =>
    POSITIONS.map((pos, i) => {
      const lamports = threshold + BigInt(i - 1); // one lamport below / at / one lamport above
      const s = field === 'pending_sol' ? summary({ pendingLamports: lamports }) : summary({ lifetimeLamports: lamports });
      return { name: `${field} ${op} 0.05, one lamport ${pos}`, cond: { field, op, value: threshold }, s, holds: OPS[op][i] ?? false };
    }),
  ),
);

const rankCases: Case[] = (Object.keys(OPS) as CmpOp[]).flatMap((op) =>
  POSITIONS.map((pos, i) => ({
    name: `rank ${op} 10, rank ${pos}`,
    cond: { field: 'rank', op, value: 10 },
    s: summary({ rank: 9 + i }),
    holds: OPS[op][i] ?? false,
  })),
);

const tierCases: Case[] = [
  { name: 'tier eq same', cond: { field: 'tier', op: 'eq', value: 'gold' }, s: summary({ tier: 'gold' }), holds: true },
  { name: 'tier eq other', cond: { field: 'tier', op: 'eq', value: 'gold' }, s: summary({ tier: 'silver' }), holds: false },
  { name: 'tier eq ignores case (the service writes Gold)', cond: { field: 'tier', op: 'eq', value: 'gold' }, s: summary({ tier: 'Gold' }), holds: true },
  { name: 'tier eq ignores case either way', cond: { field: 'tier', op: 'eq', value: 'GOLD' }, s: summary({ tier: 'gold' }), holds: true },
  { name: 'tier eq ignores case, not spelling', cond: { field: 'tier', op: 'eq', value: 'gold' }, s: summary({ tier: 'Golden' }), holds: false },
  { name: 'tier ne same but for case', cond: { field: 'tier', op: 'ne', value: 'gold' }, s: summary({ tier: 'Gold' }), holds: false },
  { name: 'tier ne other, any case', cond: { field: 'tier', op: 'ne', value: 'gold' }, s: summary({ tier: 'Silver' }), holds: true },
  { name: 'tier ne same', cond: { field: 'tier', op: 'ne', value: 'gold' }, s: summary({ tier: 'gold' }), holds: false },
  { name: 'tier ne other', cond: { field: 'tier', op: 'ne', value: 'gold' }, s: summary({ tier: 'silver' }), holds: true },
];

const inCases: Case[] = [
  { name: 'pending_sol in list, exact', cond: { field: 'pending_sol', op: 'in', value: [SOL('1'), SOL('2')] }, s: summary({ pendingLamports: SOL('2') }), holds: true },
  { name: 'pending_sol in list, one lamport off', cond: { field: 'pending_sol', op: 'in', value: [SOL('1'), SOL('2')] }, s: summary({ pendingLamports: SOL('2') + 1n }), holds: false },
  { name: 'lifetime_sol in list', cond: { field: 'lifetime_sol', op: 'in', value: [SOL('10')] }, s: summary({ lifetimeLamports: SOL('10') }), holds: true },
  { name: 'rank in list', cond: { field: 'rank', op: 'in', value: [1, 2, 3] }, s: summary({ rank: 3 }), holds: true },
  { name: 'rank not in list', cond: { field: 'rank', op: 'in', value: [1, 2, 3] }, s: summary({ rank: 4 }), holds: false },
  { name: 'tier in list', cond: { field: 'tier', op: 'in', value: ['gold', 'platinum'] }, s: summary({ tier: 'platinum' }), holds: true },
  { name: 'tier not in list', cond: { field: 'tier', op: 'in', value: ['gold', 'platinum'] }, s: summary({ tier: 'bronze' }), holds: false },
  { name: 'tier in list ignores case', cond: { field: 'tier', op: 'in', value: ['gold', 'platinum'] }, s: summary({ tier: 'Platinum' }), holds: true },
  { name: 'tier not in list, any case', cond: { field: 'tier', op: 'in', value: ['Gold', 'Platinum'] }, s: summary({ tier: 'BRONZE' }), holds: false },
  { name: 'empty in list never holds', cond: { field: 'rank', op: 'in', value: [] }, s: summary({ rank: 1 }), holds: false },
];

describe('evaluateCondition', () => {
  it.each([...lamportFieldCases, ...rankCases, ...tierCases, ...inCases])('$name → $holds', ({ cond, s, holds }) => {
    expect(evaluateCondition(cond, s).holds).toBe(holds);
  });

  it.each<{ cond: Condition; s: WalletSummary; detail: string }>([
    { cond: { field: 'pending_sol', op: 'gte', value: SOL('0.05') }, s: summary({ pendingLamports: SOL('0.049999999') }), detail: 'pending_sol 0.049999999 is not gte 0.05' },
    { cond: { field: 'pending_sol', op: 'gte', value: SOL('0.05') }, s: summary({ pendingLamports: SOL('0.05') }), detail: 'pending_sol 0.05 is gte 0.05' },
    { cond: { field: 'lifetime_sol', op: 'lt', value: SOL('12') }, s: summary({ lifetimeLamports: SOL('12.5') }), detail: 'lifetime_sol 12.5 is not lt 12' },
    { cond: { field: 'rank', op: 'lte', value: 10 }, s: summary({ rank: 3 }), detail: 'rank 3 is lte 10' },
    { cond: { field: 'tier', op: 'in', value: ['gold', 'platinum'] }, s: summary({ tier: 'bronze' }), detail: 'tier "bronze" is not in ["gold", "platinum"]' },
    // both texts as written: the server's "Gold" for display, the operator's `gold` as configured
    { cond: { field: 'tier', op: 'eq', value: 'gold' }, s: summary({ tier: 'Gold' }), detail: 'tier "Gold" is eq "gold"' },
    { cond: { field: 'pending_sol', op: 'in', value: [SOL('1'), SOL('0.5')] }, s: summary({ pendingLamports: SOL('1') }), detail: 'pending_sol 1 is in [1, 0.5]' },
  ])('detail: $detail', ({ cond, s, detail }) => {
    expect(evaluateCondition(cond, s).detail).toBe(detail);
  });

  // A missing field fails every operator, even `ne`: unknown is not evidence.
  const CMP_OPS: CmpOp[] = ['gt', 'gte', 'lt', 'lte', 'eq', 'ne'];
  const noLifetime = (op: CmpOp): Condition => ({ field: 'lifetime_sol', op, value: 0n });
  const noRank = (op: CmpOp): Condition => ({ field: 'rank', op, value: 1 });
  const missing: Array<{ cond: Condition; s: WalletSummary }> = [
    ...CMP_OPS.map((op) => ({ cond: noLifetime(op), s: summary({ lifetimeLamports: null }) })),
    { cond: { field: 'lifetime_sol', op: 'in', value: [0n] }, s: summary({ lifetimeLamports: null }) },
    ...CMP_OPS.map((op) => ({ cond: noRank(op), s: summary({ rank: null }) })),
    { cond: { field: 'rank', op: 'in', value: [1] }, s: summary({ rank: null }) },
    { cond: { field: 'tier', op: 'eq', value: 'gold' }, s: summary({ tier: null }) },
    { cond: { field: 'tier', op: 'ne', value: 'gold' }, s: summary({ tier: null }) },
    { cond: { field: 'tier', op: 'in', value: ['gold'] }, s: summary({ tier: null }) },
  ];
  it.each(missing)('$cond.field $cond.op with the field missing does not hold', ({ cond, s }) => {
    expect(evaluateCondition(cond, s)).toEqual({ holds: false, detail: `${cond.field} is missing from the summary` });
  });
});

describe('evaluateConditions (AND)', () => {
  const gte = (sol: string): Condition => ({ field: 'pending_sol', op: 'gte', value: SOL(sol) });
  const rankLte = (n: number): Condition => ({ field: 'rank', op: 'lte', value: n });

  it.each([
    { name: 'no conditions hold trivially', when: [], holds: true, detail: 'no conditions' },
    { name: 'both hold', when: [gte('0.5'), rankLte(10)], holds: true, detail: 'pending_sol 1 is gte 0.5 and rank 5 is lte 10' },
    { name: 'first fails', when: [gte('2'), rankLte(10)], holds: false, detail: 'pending_sol 1 is not gte 2' },
    { name: 'second fails', when: [gte('0.5'), rankLte(4)], holds: false, detail: 'rank 5 is not lte 4' },
    { name: 'both fail: the first is named', when: [rankLte(4), gte('2')], holds: false, detail: 'rank 5 is not lte 4' },
  ])('$name', ({ when, holds, detail }) => {
    expect(evaluateConditions(when, summary())).toEqual({ holds, detail });
  });
});

describe('stillHolds (the worker re-check before signing a claim)', () => {
  const when: Condition[] = [{ field: 'pending_sol', op: 'gte', value: SOL('0.5') }];
  it.each([
    { name: 'still above threshold', r: rule('c', { when }), s: summary({ pendingLamports: SOL('0.5') }), holds: true },
    { name: 'dropped one lamport below', r: rule('c', { when }), s: summary({ pendingLamports: SOL('0.5') - 1n }), holds: false },
    { name: 'claim rule with nothing pending', r: rule('c'), s: summary({ pendingLamports: 0n }), holds: false },
    { name: 'deposit-only rule with nothing pending', r: rule('d', { do: [deposit(fixed('1'))] }), s: summary({ pendingLamports: 0n }), holds: true },
    { name: 'claim + deposit, something pending', r: rule('c', { do: [claim, deposit(fixed('1'))] }), s: summary({ pendingLamports: 1n }), holds: true },
  ])('$name → $holds', ({ r, s, holds }) => {
    expect(stillHolds(r, s).holds).toBe(holds);
  });

  it('names what stopped it', () => {
    expect(stillHolds(rule('c'), summary({ pendingLamports: 0n })).detail).toMatch(/nothing to claim/);
    expect(stillHolds(rule('c', { when }), summary({ pendingLamports: 1n })).detail).toBe('pending_sol 0.000000001 is not gte 0.5');
  });
});
