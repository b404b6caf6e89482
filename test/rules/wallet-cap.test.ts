// safety.max_sol_per_wallet_per_day (issue 24, finding 6; SPEC §2: "a wallet-level daily cap backs
// every rule"): every plan of the address counts, whatever its rule (and one-off sends), as a
// rule's max_sol_per_day counts it, over the same 24 h; judged in decide and again right before
// signing. Absent: no wallet-level cap.
import { describe, expect, it } from 'vitest';
import type { PlanHistoryEntry } from '../../src/domain.js';
import { decide } from '../../src/rules/decide.js';
import { walletDayBreach } from '../../src/rules/limits.js';
import { recheckBeforeSigning } from '../../src/rules/recheck.js';
import { claim, DAY, deposit, EPOCH, fixed, HOUR, input, MIN, NOW, planned, rule, SOL, summary } from './builders.js';

const cap = (text: string | undefined) => ({ maxLamportsPerAction: SOL('100'), maxLamportsPerWalletPerDay: text === undefined ? undefined : SOL(text) });

describe('walletDayBreach: the table', () => {
  const p = (lamports: string, over: Partial<PlanHistoryEntry> = {}) => planned({ lamports: SOL(lamports), createdAt: NOW - HOUR, ...over });
  const cases: Array<[string, string | undefined, PlanHistoryEntry[], string, boolean]> = [
    ['no cap: anything goes', undefined, [p('50')], '50', false],
    ['nothing yet, within the cap', '1', [], '1', false],
    ['equal to the cap is allowed', '1', [p('0.4', { rule: 'a' })], '0.6', false],
    ['one lamport over', '1', [p('0.4', { rule: 'a' })], '0.600000001', true],
    ['other rules count', '1', [p('0.5', { rule: 'a' }), p('0.5', { rule: 'b' })], '0.1', true],
    ['a one-off send counts', '1', [p('1', { rule: 'send:ops-1' })], '0.1', true],
    ['older than 24 h does not count', '1', [p('5', { createdAt: NOW - DAY })], '1', false],
    ['just inside 24 h counts', '1', [p('1', { createdAt: NOW - DAY + 1 })], '0.1', true],
    ['dated in the future (clock stepped back) counts', '1', [p('1', { createdAt: NOW + HOUR })], '0.1', true],
  ];
  it.each(cases)('%s', (_what, max, plans, estimate, breached) => {
    const r = walletDayBreach({ maxLamports: max === undefined ? undefined : SOL(max), plans, now: NOW, estimateLamports: SOL(estimate) });
    expect(r !== undefined).toBe(breached);
    if (r) expect(r.reason).toBe('max_sol_per_wallet_per_day');
  });
});

describe('decide: the wallet cap backs every rule', () => {
  const a = rule('a', { do: [deposit(fixed('0.6'))] });
  const b = rule('b', { do: [deposit(fixed('0.6'))] });

  it('two rules that each fit their own limits are held to the wallet cap together, in one decide', () => {
    const out = decide(input([a, b], { safety: cap('1') }));
    expect(out.plans.map((p) => p.rule)).toEqual(['a']);
    expect(out.decisions[1]).toMatchObject({ rule: 'b', fired: false, reason: 'max_sol_per_wallet_per_day' });
    expect(out.decisions[1]?.detail).toBe('safety.max_sol_per_wallet_per_day 1: 0.6 SOL by this wallet\'s plans in the last 24h + 0.6 SOL now = 1.2 SOL');
  });

  it("another rule's plans in the last 24 h count; a failed plan does not; a dry run counts only dry plans", () => {
    const done = planned({ rule: 'b', lamports: SOL('0.5'), createdAt: NOW - HOUR });
    expect(decide(input([a], { safety: cap('1'), history: [done] })).decisions[0]?.reason).toBe('max_sol_per_wallet_per_day');
    expect(decide(input([a], { safety: cap('1'), history: [{ ...done, status: 'failed' }] })).decisions[0]?.reason).toBe('fired');
    expect(decide(input([a], { safety: cap('1'), history: [done], dry: true })).decisions[0]?.reason).toBe('fired');
  });

  it('a claim counts for the pending it expects to claim', () => {
    const sweep = rule('sweep', { do: [claim, deposit(fixed('0.1'))] });
    expect(decide(input([sweep], { safety: cap('1'), summary: summary({ pendingLamports: SOL('1.5') }) })).decisions[0]?.reason).toBe('max_sol_per_wallet_per_day');
    expect(decide(input([sweep], { safety: cap('2'), summary: summary({ pendingLamports: SOL('1.5') }) })).decisions[0]?.reason).toBe('fired');
  });

  it('absent: no wallet-level cap', () => {
    expect(decide(input([a, b], { safety: cap(undefined) })).plans).toHaveLength(2);
  });
});

describe('recheckBeforeSigning: the wallet cap again, with what the plan really moves', () => {
  const r = rule('r', { do: [claim, deposit(fixed('0.1'))] });
  const base = {
    rule: r,
    plan: { id: 9, epoch: EPOCH },
    firstStep: true,
    stepKind: 'claim' as const,
    stepLamports: SOL('0.5'),
    planLamports: SOL('0.5'),
    summary: summary({ pendingLamports: SOL('0.5') }),
    now: NOW,
  };
  it("another rule's plan recorded since the decision stops the step", () => {
    const other = planned({ id: 8, rule: 'other', lamports: SOL('0.7'), createdAt: NOW - MIN, status: 'open' });
    expect(recheckBeforeSigning({ ...base, history: [other], safety: cap('1') })).toMatchObject({ ok: false, reason: 'max_sol_per_wallet_per_day', refuse: false });
    expect(recheckBeforeSigning({ ...base, history: [other], safety: cap('1.2') })).toEqual({ ok: true });
  });
  it('the plan itself is not counted twice', () => {
    const self = planned({ id: 9, rule: 'r', lamports: SOL('0.5'), createdAt: NOW - MIN, status: 'open' });
    expect(recheckBeforeSigning({ ...base, history: [self], safety: cap('0.5') })).toEqual({ ok: true });
  });
});
