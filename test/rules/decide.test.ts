import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Condition, Rule } from '../../src/domain.js';
import { decide } from '../../src/rules/decide.js';
import { all, claim, deposit, fixed, HOUR, input, mint, NOW, pct, planned, rule, SOL, summary } from './builders.js';

const pendingGte = (sol: string): Condition[] => [{ field: 'pending_sol', op: 'gte', value: SOL(sol) }];
const reasons = (rules: Rule[], over: Parameters<typeof input>[1] = {}) =>
  decide(input(rules, over)).decisions.map((d) => [d.rule, d.reason]);

describe('a rule that fires', () => {
  it('returns one plan and a fired decision naming what held', () => {
    const compound = rule('compound', { when: pendingGte('0.5'), do: [claim, deposit(pct(50))], limits: { oncePerEpoch: true } });
    const out = decide(input([compound], { summary: summary({ pendingLamports: SOL('0.6') }) }));
    expect(out.plans).toEqual([
      {
        wallet: 'treasury',
        address: summary().address,
        rule: 'compound',
        epoch: '2024-05-01',
        seq: 0,
        steps: [claim, deposit(pct(50))],
        estimateLamports: SOL('0.6'),
      },
    ]);
    expect(out.decisions).toEqual([
      { rule: 'compound', ruleId: 'compound', fired: true, reason: 'fired', detail: 'pending_sol 0.6 is gte 0.5; plan claim → deposit 50% of the claim into SOL2X, estimate 0.6 SOL' },
    ]);
  });

  it.each([
    { name: 'claim: the pending amount', steps: [claim, deposit(fixed('3'))], estimate: SOL('1') },
    { name: 'no claim: the sum of fixed amounts', steps: [deposit(fixed('1.5')), mint(fixed('0.25'))], estimate: SOL('1.75') },
  ])('estimateLamports — $name', ({ steps, estimate }) => {
    expect(decide(input([rule('r', { do: steps })])).plans[0]?.estimateLamports).toBe(estimate);
  });

  it('a condition that fails names itself', () => {
    const out = decide(input([rule('r', { when: pendingGte('0.05') })], { summary: summary({ pendingLamports: SOL('0.049999999') }) }));
    expect(out.plans).toEqual([]);
    expect(out.decisions).toEqual([{ rule: 'r', ruleId: 'r', fired: false, reason: 'condition', detail: 'pending_sol 0.049999999 is not gte 0.05' }]);
  });
});

describe('which rules apply', () => {
  const a = rule('a');
  const b = rule('b', { do: [deposit(fixed('1'))] });
  const c = rule('c', { do: [mint(fixed('1'))] });
  it('only those the wallet names, in config order (not the wallet list order)', () => {
    const i = input([a, b, c]);
    expect(reasons([a, b, c], { wallet: { ...i.wallet, rules: ['c', 'a'] } })).toEqual([
      ['a', 'fired'],
      ['c', 'fired'],
    ]);
  });
  it('a wallet naming a rule that does not exist gets an unknown_rule decision', () => {
    const i = input([a]);
    expect(reasons([a], { wallet: { ...i.wallet, rules: ['a', 'ghost'] } })).toEqual([
      ['a', 'fired'],
      ['ghost', 'unknown_rule'],
    ]);
  });
});

describe('one claim per wallet per decide', () => {
  const first = rule('first');
  const second = rule('second', { do: [claim, deposit(all)] });
  const depositOnly = rule('topup', { do: [deposit(fixed('2'))] });

  it.each([
    { name: 'two claim rules: the first in config order wins', rules: [first, second], want: [['first', 'fired'], ['second', 'claim_already_planned']] },
    { name: 'config order decides, not the name', rules: [second, first], want: [['second', 'fired'], ['first', 'claim_already_planned']] },
    {
      name: 'a skipped claim rule leaves the claim to the next',
      rules: [rule('first', { when: pendingGte('5') }), second],
      want: [['first', 'condition'], ['second', 'fired']],
    },
    { name: 'a rule without a claim fires alongside', rules: [first, depositOnly, second], want: [['first', 'fired'], ['topup', 'fired'], ['second', 'claim_already_planned']] },
  ])('$name', ({ rules, want }) => {
    expect(reasons(rules)).toEqual(want);
  });

  it('the skip names the rule that took the claim', () => {
    expect(decide(input([first, second])).decisions[1]?.detail).toBe("rule first already plans this wallet's claim in this decision");
  });
});

describe('nothing to claim', () => {
  it.each([
    { name: 'claim with pending 0', r: rule('r'), reason: 'nothing_to_claim' },
    { name: 'claim + deposit with pending 0', r: rule('r', { do: [claim, deposit(pct(50))] }), reason: 'nothing_to_claim' },
    { name: 'fixed deposit alone does not need a claim', r: rule('r', { do: [deposit(fixed('1'))] }), reason: 'fired' },
  ])('$name → $reason', ({ r, reason }) => {
    expect(reasons([r], { summary: summary({ pendingLamports: 0n }) })).toEqual([['r', reason]]);
  });
  it('one lamport is something to claim', () => {
    expect(reasons([rule('r')], { summary: summary({ pendingLamports: 1n }) })).toEqual([['r', 'fired']]);
  });
});

describe('safety.max_sol_per_action (100 SOL)', () => {
  it.each([
    { name: 'claim of exactly the limit', steps: [claim], pending: '100', reason: 'fired' },
    { name: 'claim one lamport over', steps: [claim], pending: '100.000000001', reason: 'max_sol_per_action' },
    { name: 'fixed deposit at the limit', steps: [deposit(fixed('100'))], pending: '1', reason: 'fired' },
    { name: 'fixed deposit one lamport over', steps: [deposit(fixed('100.000000001'))], pending: '1', reason: 'max_sol_per_action' },
    { name: 'fixed mint over, after a small claim', steps: [claim, mint(fixed('150'))], pending: '1', reason: 'max_sol_per_action' },
    { name: '200% of a 60 SOL claim is 120', steps: [claim, deposit(pct(200))], pending: '60', reason: 'max_sol_per_action' },
    { name: '50% of a 100 SOL claim is fine', steps: [claim, deposit(pct(50))], pending: '100', reason: 'fired' },
  ])('$name → $reason', ({ steps, pending, reason }) => {
    expect(reasons([rule('r', { do: steps })], { summary: summary({ pendingLamports: SOL(pending) }) })).toEqual([['r', reason]]);
  });
  it('names the step and the amounts', () => {
    const out = decide(input([rule('r', { do: [claim, mint(fixed('150'))] })]));
    expect(out.decisions[0]?.detail).toBe('mint JLP2X with 150 SOL: 150 SOL exceeds max_sol_per_action 100');
  });
});

describe('an unknown deposit/mint is open (blockedSignedOps)', () => {
  const claimOnly = rule('harvest');
  const compound = rule('compound', { do: [claim, deposit(pct(50))] });
  const minter = rule('minter', { do: [mint(fixed('1'))] });
  it.each([
    { name: 'rules with deposit/mint are blocked, claim-only still fires', rules: [compound, minter, claimOnly], blocked: true, want: [['compound', 'blocked_unknown_step'], ['minter', 'blocked_unknown_step'], ['harvest', 'fired']] },
    { name: 'not blocked: the first claim rule wins as usual', rules: [compound, minter, claimOnly], blocked: false, want: [['compound', 'fired'], ['minter', 'fired'], ['harvest', 'claim_already_planned']] },
    { name: 'undefined means not blocked', rules: [minter], blocked: undefined, want: [['minter', 'fired']] },
  ])('$name', ({ rules, blocked, want }) => {
    expect(reasons(rules, { blockedSignedOps: blocked })).toEqual(want);
  });
  it('says what waits and how to resolve it', () => {
    expect(decide(input([compound], { blockedSignedOps: true })).decisions[0]?.detail).toMatch(/deposit 50% of the claim into SOL2X must wait; resolve it with `autoclaim actions resolve/);
  });
});

describe('steps that cannot run as written', () => {
  it.each([
    { name: 'no steps', steps: [] },
    { name: 'two claims', steps: [claim, claim] },
    { name: 'percent with no claim', steps: [deposit(pct(50))] },
    { name: '"all" before the claim', steps: [mint(all), claim] },
  ])('$name → invalid_steps', ({ steps }) => {
    expect(reasons([rule('r', { do: steps })])).toEqual([['r', 'invalid_steps']]);
  });
});

describe('reason order across checks', () => {
  const big = summary({ pendingLamports: SOL('0') });
  it.each([
    { name: 'condition before limits', r: rule('r', { when: pendingGte('1'), limits: { oncePerEpoch: true } }), reason: 'condition' },
    { name: 'limits before nothing_to_claim', r: rule('r', { limits: { oncePerEpoch: true } }), reason: 'once_per_epoch' },
    { name: 'nothing_to_claim before blocked', r: rule('r', { do: [claim, deposit(all)] }), reason: 'nothing_to_claim' },
  ])('$name', ({ r, reason }) => {
    expect(reasons([r], { summary: big, history: [planned()], blockedSignedOps: true })).toEqual([['r', reason]]);
  });
  it('max_sol_per_action before blocked', () => {
    expect(reasons([rule('r', { do: [deposit(fixed('101'))] })], { blockedSignedOps: true })).toEqual([['r', 'max_sol_per_action']]);
  });
});

describe('purity', () => {
  const rules = [
    rule('compound', { when: pendingGte('0.5'), do: [claim, deposit(pct(12.5))], limits: { cooldownMs: 6 * HOUR, maxPlansPerDay: 4 } }),
    rule('second', { do: [claim] }),
    rule('topup', { do: [mint(fixed('1'))], limits: { oncePerEpoch: true } }),
  ];
  const history = [
    planned({ rule: 'compound', epoch: '2024-04-30', seq: 0, createdAt: NOW - 7 * HOUR }),
    planned({ rule: 'compound', epoch: '2024-05-01', seq: 0, createdAt: NOW - 8 * HOUR }),
    planned({ rule: 'topup', epoch: '2024-04-30', createdAt: NOW - 30 * HOUR }),
  ];

  it('same input twice → deep-equal output, and the input is not changed', () => {
    const i = input(rules, { history });
    const before = structuredClone(i);
    const a = decide(i);
    const b = decide(i);
    expect(a).toEqual(b);
    expect(i).toEqual(before);
    expect(a.plans[0]?.steps).not.toBe(rules[0]?.do);
  });

  it('fires as expected on this history', () => {
    expect(decide(input(rules, { history })).decisions.map((d) => d.reason)).toEqual(['fired', 'claim_already_planned', 'fired']);
  });

  it('the order of history does not matter', () => {
    const entry = fc.record({
      rule: fc.constantFrom('compound', 'second', 'topup'),
      epoch: fc.constantFrom('2024-04-30', '2024-05-01'),
      seq: fc.nat(3),
      createdAt: fc.integer({ min: NOW - 2 * 24 * HOUR, max: NOW + HOUR }),
      dry: fc.boolean(),
      status: fc.constantFrom('open' as const, 'done' as const, 'failed' as const),
      lamports: fc.bigInt({ min: 0n, max: SOL('5') }),
    });
    const historyAndShuffle = fc
      .array(entry, { maxLength: 8 })
      .chain((h) => fc.tuple(fc.constant(h), fc.shuffledSubarray(h, { minLength: h.length, maxLength: h.length })));
    fc.assert(
      fc.property(historyAndShuffle, ([h, shuffled]) => {
        expect(decide(input(rules, { history: shuffled }))).toEqual(decide(input(rules, { history: h })));
      }),
    );
  });
});
