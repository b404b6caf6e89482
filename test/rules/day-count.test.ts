// What a plan counts for against max_sol_per_day and the wallet's daily cap (session 15): its claim
// (claimed, or expected) and its fixed amounts besides, which a claim does not pay for; and a
// failed plan counts once a step of it was applied (limits.ts countsForLimits). The store's side
// of the same count is in test/store/contract-plans.test.ts, the daemon's in
// test/daemon/amount-caps.test.ts.
import { describe, expect, it } from 'vitest';
import type { StepSpec } from '../../src/domain.js';
import { amountOf, claimDayLamports, planDayLamports } from '../../src/rules/amounts.js';
import { decide } from '../../src/rules/decide.js';
import { firstLimitBreach } from '../../src/rules/limits.js';
import { recheckBeforeSigning } from '../../src/rules/recheck.js';
import { all, claim, DAY, deposit, EPOCH, fixed, HOUR, input, mint, NO_LIMITS, NOW, pct, planned, rule, SOL, summary } from './builders.js';

const withdraw = (shares: string): StepSpec => ({ kind: 'withdraw', symbol: 'SOL2X', amount: fixed(shares) });
const burn = (tokens: string): StepSpec => ({ kind: 'burn', symbol: 'SOL5X', amount: fixed(tokens) });

describe('planDayLamports', () => {
  const cases: Array<[string, StepSpec[], string, string]> = [
    ['a claim alone: what it claims', [claim], '0.5', '0.5'],
    ['a percent of the claim is the claim', [claim, deposit(pct(50)), mint(pct(50))], '0.5', '0.5'],
    ['"all" of the claim is the claim', [claim, deposit(all)], '0.5', '0.5'],
    ['a fixed amount after a claim counts besides it', [claim, deposit(fixed('1'))], '0.5', '1.5'],
    ['every fixed amount counts', [claim, deposit(pct(50)), mint(fixed('0.25')), deposit(fixed('0.25'))], '0.5', '1'],
    ['no claim: the fixed amounts only', [deposit(fixed('1')), mint(fixed('2'))], '0.5', '3'],
    // Shares and tokens are not SOL (helper 34): a withdraw or burn adds nothing to a SOL count.
    ['a withdraw and a burn are not SOL', [claim, withdraw('3'), burn('4'), deposit(fixed('1'))], '0.5', '1.5'],
    ['withdraw and burn only: nothing in SOL', [withdraw('3'), burn('4')], '0.5', '0'],
  ];
  it.each(cases)('%s', (_what, steps, claimed, counted) => {
    expect(planDayLamports(steps.map(amountOf), SOL(claimed))).toBe(SOL(counted));
  });
});

describe('decide counts a claiming plan with its fixed amounts', () => {
  const topup = rule('topup', { do: [claim, deposit(fixed('1'))], limits: { maxLamportsPerDay: SOL('1.5') } });

  it('the estimate is pending and the fixed deposit: over the day, it does not fire', () => {
    const out = decide(input([topup], { summary: summary({ pendingLamports: SOL('0.6') }) }));
    expect(out.decisions[0]).toMatchObject({ fired: false, reason: 'max_sol_per_day' });
    expect(out.decisions[0]?.detail).toBe('max_sol_per_day 1.5: 0 SOL in the last 24h + 1.6 SOL now = 1.6 SOL');
  });

  it('within the day it fires, and its plan keeps the claim estimate alone (what sizes nothing, counts the claim)', () => {
    const out = decide(input([topup], { summary: summary({ pendingLamports: SOL('0.5') }) }));
    expect(out.plans[0]?.estimateLamports).toBe(SOL('0.5'));
  });

  it("a plan fired earlier in the same decide counts its fixed amounts against the wallet's cap", () => {
    const a = rule('a', { do: [claim, deposit(fixed('1'))] });
    const b = rule('b', { do: [deposit(fixed('0.5'))] });
    const out = decide(input([a, b], { summary: summary({ pendingLamports: SOL('0.1') }), safety: { maxLamportsPerAction: SOL('100'), maxLamportsPerWalletPerDay: SOL('1.5') } }));
    expect(out.decisions.map((d) => d.reason)).toEqual(['fired', 'max_sol_per_wallet_per_day']);
  });
});

describe('shares and tokens are not counted as SOL (helper 34)', () => {
  // A burn of 20 cheap tokens counted 20 SOL against the wallet's 10 SOL a day, and the compound
  // rule's claim of 0.5 SOL was held for a day: less moved than the rules say.
  const unwind = rule('unwind', { do: [burn('20')], limits: { ...NO_LIMITS, oncePerEpoch: true } });
  const compound = rule('compound', { do: [claim, deposit(pct(50))] });
  const safety = { maxLamportsPerAction: SOL('100'), maxLamportsPerWalletPerDay: SOL('10') };

  it('a burn fired in the same decide leaves the wallet cap to the claim, and its plan expects no SOL', () => {
    const out = decide(input([unwind, compound], { summary: summary({ pendingLamports: SOL('0.5') }), safety }));
    expect(out.decisions.map((d) => d.reason)).toEqual(['fired', 'fired']);
    expect(out.plans[0]?.estimateLamports).toBe(0n);
  });

  it('a withdraw rule under max_sol_per_day is bounded by its rule limits, not by a SOL count', () => {
    const out = decide(input([rule('w', { do: [withdraw('30')], limits: { ...NO_LIMITS, maxLamportsPerDay: SOL('25') } })]));
    expect(out.decisions[0]).toMatchObject({ fired: true });
  });
});

describe('a failed plan counts once a step of it was applied', () => {
  const once = rule('r', { do: [deposit(fixed('1')), mint(fixed('1'))], limits: { oncePerEpoch: true } });
  const failed = (spent: boolean) => planned({ id: 1, epoch: EPOCH, createdAt: NOW - HOUR, status: 'failed', spent, lamports: SOL('2') });

  it('decide: refused at its first step, the rule fires again; after its deposit was applied, not in this epoch', () => {
    expect(decide(input([once], { history: [failed(false)] })).decisions[0]?.reason).toBe('fired');
    expect(decide(input([once], { history: [failed(true)] })).decisions[0]?.reason).toBe('once_per_epoch');
  });

  it("the recheck before signing: the same, and for the wallet's cap", () => {
    const base = {
      rule: rule('r', { do: [deposit(fixed('1'))] }),
      plan: { id: 2, epoch: EPOCH },
      firstStep: true,
      stepKind: 'deposit' as const,
      stepLamports: SOL('1'),
      planLamports: SOL('1'),
      summary: summary(),
      now: NOW,
      safety: { maxLamportsPerAction: SOL('100'), maxLamportsPerWalletPerDay: SOL('2.5') },
    };
    expect(recheckBeforeSigning({ ...base, history: [{ ...failed(false), rule: 'other' }] })).toEqual({ ok: true });
    expect(recheckBeforeSigning({ ...base, history: [{ ...failed(true), rule: 'other' }] })).toMatchObject({ ok: false, reason: 'max_sol_per_wallet_per_day' });
  });
});

describe('the rolling day takes in a plan whose request went out in it, however long ago it was recorded', () => {
  const limits = { ...NO_LIMITS, maxLamportsPerDay: SOL('1.5') };
  const old = (movedAt: number | undefined) => planned({ createdAt: NOW - 2 * DAY, movedAt, lamports: SOL('1') });
  const cases: Array<[string, number | undefined, boolean]> = [
    ['never sent: out of the day', undefined, false],
    ['sent more than a day ago: out of the day', NOW - DAY, false],
    ['sent an hour ago: in the day', NOW - HOUR, true],
    ['sent "in the future" (the clock stepped back): in the day', NOW + HOUR, true],
  ];
  it.each(cases)('%s', (_what, movedAt, breached) => {
    const r = firstLimitBreach({ limits, plans: [old(movedAt)], epoch: EPOCH, now: NOW, estimateLamports: SOL('1') });
    expect(r?.reason).toBe(breached ? 'max_sol_per_day' : undefined);
  });
});

describe('claimDayLamports: a recorded claim counts the larger of what it said it claimed and what it expected', () => {
  const cases: Array<[string, string | null, string, string]> = [
    ['not claimed yet: the estimate', null, '8', '8'],
    ['said less than signed against: the pending it was signed against', '0.001', '8', '8'],
    ['said more (an older plan, its estimate not raised): what it said', '9', '8', '9'],
  ];
  it.each(cases)('%s', (_what, claimed, estimate, counted) => {
    expect(claimDayLamports({ claimedLamports: claimed === null ? null : SOL(claimed), estimateLamports: SOL(estimate) })).toBe(SOL(counted));
  });
});
