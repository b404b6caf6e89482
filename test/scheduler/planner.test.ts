import { describe, expect, it } from 'vitest';
import type { Condition, Rule, WalletConfig } from '../../src/domain.js';
import { lowestPendingThreshold, pollBudget, RoundRobinPlanner } from '../../src/scheduler/planner.js';

const SOL = 1_000_000_000n;
const wallet = (name: string, rules: string[] = ['r']): WalletConfig => ({ name, address: name, key: { env: 'X' }, rules });
const rule = (name: string, when: Condition[]): Rule => ({
  name,
  id: name,
  when,
  do: [{ kind: 'claim' }],
  limits: { oncePerEpoch: true, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
});
const pending = (op: 'gt' | 'gte' | 'lt' | 'eq', value: bigint): Condition => ({ field: 'pending_sol', op, value });

describe('lowestPendingThreshold', () => {
  it.each([
    ['one gte rule', [rule('r', [pending('gte', SOL / 2n)])], ['r'], SOL / 2n],
    ['gt is one lamport above', [rule('r', [pending('gt', SOL)])], ['r'], SOL + 1n],
    ['the lowest of two rules', [rule('a', [pending('gte', 2n * SOL)]), rule('b', [pending('gte', SOL)])], ['a', 'b'], SOL],
    ['only the wallet’s own rules', [rule('a', [pending('gte', 2n * SOL)]), rule('b', [pending('gte', SOL)])], ['a'], 2n * SOL],
    ['the highest lower bound within one rule', [rule('r', [pending('gte', SOL), pending('gt', 3n * SOL)])], ['r'], 3n * SOL + 1n],
    ['a rule with no pending bound (tier) makes it unknown', [rule('a', [pending('gte', SOL)]), rule('t', [{ field: 'tier', op: 'eq', value: 'gold' }])], ['a', 't'], undefined],
    ['an upper bound is not a threshold', [rule('r', [pending('lt', SOL)])], ['r'], undefined],
    ['an eq is not a threshold', [rule('r', [pending('eq', SOL)])], ['r'], undefined],
    ['a pending bound beside other conditions still counts', [rule('r', [pending('gte', SOL), { field: 'rank', op: 'lte', value: 10 }])], ['r'], SOL],
    ['no rules at all', [], ['r'], undefined],
  ])('%s', (_name, rules, names, expected) => {
    expect(lowestPendingThreshold(wallet('w', names), rules)).toBe(expected);
  });
});

describe('pollBudget', () => {
  it.each([
    [{ perMinute: 500 }, 60_000, 0.1, 450],
    [{ perMinute: 500 }, 6_000, 0.1, 45],
    [{ perMinute: 500 }, 6_000, 0, 50],
    [{ perMinute: 1 }, 1_000, 0.1, 1], // never below one poll
    [{ perMinute: 0 }, 60_000, 0.1, Number.POSITIVE_INFINITY], // the limiter is off
  ])('%o over %d ms with %d reserved → %d', (rate, interval, reserve, expected) => {
    expect(pollBudget(rate, interval, reserve)).toBe(expected);
  });

  it('by default keeps the limiter’s 2% headroom', () => {
    expect(pollBudget({ perMinute: 500 }, 60_000)).toBe(490);
    expect(pollBudget({ perMinute: 500 }, 6_000)).toBe(49);
  });
});

describe('RoundRobinPlanner', () => {
  const ws = ['a', 'b', 'c', 'd', 'e'].map((n) => wallet(n));
  const names = (xs: WalletConfig[]) => xs.map((w) => w.name).join('');

  it('takes everyone when the budget allows', () => {
    expect(names(new RoundRobinPlanner().choose(ws, 5))).toBe('abcde');
  });

  it('walks the fleet as a cycle, least recently chosen first', () => {
    const rr = new RoundRobinPlanner();
    expect([0, 1, 2, 3, 4].map(() => names(rr.choose(ws, 2)))).toEqual(['ab', 'cd', 'ea', 'bc', 'de']);
  });

  it('keeps its rotation when a wallet is missing from one tick (busy) and back in the next', () => {
    const rr = new RoundRobinPlanner();
    expect(names(rr.choose(ws, 2))).toBe('ab');
    expect(names(rr.choose(ws.filter((w) => w.name !== 'c'), 2))).toBe('de');
    expect(names(rr.choose(ws, 2))).toBe('ca');
  });
});
