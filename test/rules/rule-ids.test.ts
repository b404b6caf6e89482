// Which rule takes which id (rules/rule-ids.ts): a rule with no plans of its own whose steps are
// exactly those of a gone rule id takes it; more than one candidate on either side carries nothing.
import { describe, expect, it } from 'vitest';
import type { StepSpec } from '../../src/domain.js';
import { carryRuleIds, type RuleTrace } from '../../src/rules/rule-ids.js';
import { claim, deposit, fixed, pct, rule } from './builders.js';

const trace = (id: string, steps: StepSpec[]): RuleTrace => ({
  rule: id,
  steps: steps.map((s) => (s.kind === 'claim' ? { kind: 'claim', symbol: null, amountSpec: null } : { kind: s.kind, symbol: s.symbol, amountSpec: s.amount })),
});
const TOPUP = [deposit(fixed('1'))];
const SWEEP = [claim, deposit(pct(50))];

describe('carryRuleIds', () => {
  it('a rename with the same steps takes the gone id', () => {
    const out = carryRuleIds([rule('top-up', { do: TOPUP })], [trace('topup', TOPUP)]);
    expect(out.rules.map((r) => [r.name, r.id])).toEqual([['top-up', 'topup']]);
    expect(out.carried).toEqual([{ name: 'top-up', id: 'topup' }]);
    expect(out.ambiguous).toEqual([]);
  });

  it.each([
    ['other steps', [rule('top-up', { do: [deposit(fixed('0.5'))] })], [trace('topup', TOPUP)]],
    ['another symbol', [rule('top-up', { do: [deposit(fixed('1'), 'JLP2X')] })], [trace('topup', TOPUP)]],
    ['the old rule is still configured', [rule('topup', { do: TOPUP }), rule('top-up', { do: TOPUP })], [trace('topup', TOPUP)]],
    ['the new rule has plans of its own', [rule('top-up', { do: TOPUP })], [trace('topup', TOPUP), trace('top-up', TOPUP)]],
    ['nothing planned before', [rule('top-up', { do: TOPUP })], []],
  ])('nothing carried: %s', (_what, rules, traces) => {
    const out = carryRuleIds(rules, traces);
    expect(out.carried).toEqual([]);
    expect(out.rules.map((r) => r.id)).toEqual(rules.map((r) => r.id));
  });

  it('two gone ids with these steps, or two new rules: no guess, both named', () => {
    expect(carryRuleIds([rule('c', { do: SWEEP })], [trace('a', SWEEP), trace('b', SWEEP)])).toMatchObject({ carried: [], ambiguous: [{ names: ['c'], ids: ['a', 'b'] }] });
    expect(carryRuleIds([rule('b', { do: SWEEP }), rule('c', { do: SWEEP })], [trace('a', SWEEP)])).toMatchObject({ carried: [], ambiguous: [{ names: ['b', 'c'], ids: ['a'] }] });
  });

  it('a new rule whose plans were all dry (watched with enabled: false) has none of its own: it takes the gone id', () => {
    const out = carryRuleIds([rule('top-up', { do: TOPUP })], [trace('topup', TOPUP), { ...trace('top-up', TOPUP), hasRealPlans: false }]);
    expect(out.carried).toEqual([{ name: 'top-up', id: 'topup' }]);
  });

  it('one whose newest plan is dry but that planned for real before keeps its own id', () => {
    const out = carryRuleIds([rule('top-up', { do: TOPUP })], [trace('topup', TOPUP), { ...trace('top-up', TOPUP), hasRealPlans: true }]);
    expect(out.carried).toEqual([]);
    expect(out.rules.map((r) => r.id)).toEqual(['top-up']);
  });

  it('two renames at once, each with its own steps, both carry', () => {
    const out = carryRuleIds([rule('x', { do: SWEEP }), rule('y', { do: TOPUP })], [trace('a', SWEEP), trace('b', TOPUP)]);
    expect(out.rules.map((r) => r.id)).toEqual(['a', 'b']);
  });
});
