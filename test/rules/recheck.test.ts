// recheckBeforeSigning (issue 11, item 3): every limit judged again right before a signature, with
// a summary read a moment ago. One table per reason, then what must NOT count: the plan's own row,
// dry plans, another rule's plans, and the conditions of a later step.
import { describe, expect, it } from 'vitest';
import type { Condition, PlanHistoryEntry, RuleLimits, SignedOp } from '../../src/domain.js';
import { recheckBeforeSigning, type RecheckInput } from '../../src/rules/recheck.js';
import { all, claim, DAY, deposit, EPOCH, HOUR, MIN, NOW, planned, rule, SOL, summary } from './builders.js';

const PLAN_ID = 7;
const pendingGte = (sol: string): Condition => ({ field: 'pending_sol', op: 'gte', value: SOL(sol) });

/** A claim-then-deposit plan of rule `r`, about to sign its first step, with nothing else recorded. */
function recheck(
  over: Partial<Omit<RecheckInput, 'rule'>> & { limits?: Partial<RuleLimits>; when?: Condition[]; pending?: string } = {},
): ReturnType<typeof recheckBeforeSigning> {
  const { limits, when, pending, ...rest } = over;
  const r = rule('r', { when: when ?? [pendingGte('0.5')], do: [claim, deposit(all)], limits: limits ?? {} });
  const fresh = summary({ pendingLamports: SOL(pending ?? '1') });
  return recheckBeforeSigning({
    rule: r,
    plan: { id: PLAN_ID, epoch: EPOCH },
    firstStep: true,
    stepKind: 'claim',
    stepLamports: fresh.pendingLamports,
    planLamports: fresh.pendingLamports,
    summary: fresh,
    history: [],
    safety: { maxLamportsPerAction: SOL('100') },
    now: NOW,
    ...rest,
  });
}

/** The plan's own row, as the store returns it while the plan runs. */
const self = (over: Partial<PlanHistoryEntry> = {}) => planned({ id: PLAN_ID, createdAt: NOW - MIN, status: 'open', lamports: SOL('1'), ...over });
const reason = (r: ReturnType<typeof recheckBeforeSigning>) => (r.ok ? 'ok' : r.reason);

describe('recheckBeforeSigning: each reason', () => {
  it('passes a plan nothing stops', () => {
    expect(recheck()).toEqual({ ok: true });
  });

  it.each([
    { name: 'pending dropped below the threshold', pending: '0.4', want: 'condition' },
    { name: 'pending exactly at the threshold', pending: '0.5', want: 'ok' },
    { name: 'pending jumped far above it', pending: '50', want: 'ok' },
  ])('condition: $name → $want', ({ pending, want }) => {
    expect(reason(recheck({ pending }))).toBe(want);
  });

  it('condition: names what no longer holds, and is a skip, not a refusal', () => {
    expect(recheck({ pending: '0.4' })).toEqual({ ok: false, reason: 'condition', detail: 'rule no longer holds: pending_sol 0.4 is not gte 0.5', refuse: false });
  });

  it('tier condition judged on the fresh summary', () => {
    const when: Condition[] = [{ field: 'tier', op: 'eq', value: 'gold' }];
    expect(reason(recheck({ when }))).toBe('ok');
    expect(reason(recheck({ when, summary: summary({ tier: 'silver' }) }))).toBe('condition');
  });

  it.each<{ name: string; stepKind: SignedOp; firstStep: boolean; want: string }>([
    { name: 'a claim in a rolled-over epoch', stepKind: 'claim', firstStep: true, want: 'epoch' },
    { name: "a deposit after its plan's claim", stepKind: 'deposit', firstStep: false, want: 'ok' },
    { name: 'a plan whose first step is a deposit', stepKind: 'deposit', firstStep: true, want: 'ok' },
    { name: 'a mint after its claim', stepKind: 'mint', firstStep: false, want: 'ok' },
  ])('epoch: $name → $want', ({ stepKind, firstStep, want }) => {
    const next = summary({ epoch: '2024-05-02', pendingLamports: SOL('1') });
    expect(reason(recheck({ stepKind, firstStep, summary: next, stepLamports: SOL('0.5') }))).toBe(want);
  });

  it('epoch: a skip naming both epochs', () => {
    expect(recheck({ summary: summary({ epoch: '2024-05-02' }) })).toEqual({
      ok: false,
      reason: 'epoch',
      detail: `epoch rolled over from ${EPOCH} to 2024-05-02 before the claim was sent`,
      refuse: false,
    });
  });

  it("epoch: a read behind the plan's epoch (a backend not turned yet) waits, unskipped, for the plan's epoch", () => {
    expect(recheck({ summary: summary({ epoch: '2024-04-30' }) })).toEqual({
      ok: false,
      reason: 'epoch',
      detail: `the server's epoch 2024-04-30 is before the plan's ${EPOCH}; the claim waits for it`,
      refuse: false,
      wait: true,
    });
  });

  it('epoch is judged before the conditions: a claim of a past epoch is never sent, whatever pending says', () => {
    expect(reason(recheck({ pending: '0.1', summary: summary({ epoch: '2024-05-02', pendingLamports: SOL('0.1') }) }))).toBe('epoch');
  });

  it.each([
    { name: 'another plan of the rule this epoch', history: [planned({ id: 3, createdAt: NOW - HOUR })], want: 'once_per_epoch' },
    { name: 'another plan of the rule last epoch', history: [planned({ id: 3, epoch: '2024-04-30', createdAt: NOW - HOUR })], want: 'ok' },
    { name: 'only the plan itself', history: [self()], want: 'ok' },
  ])('once_per_epoch: $name → $want', ({ history, want }) => {
    expect(reason(recheck({ limits: { oncePerEpoch: true }, history }))).toBe(want);
  });

  it.each([
    { name: 'another plan 1 h ago under a 6 h cooldown', history: [planned({ id: 3, createdAt: NOW - HOUR })], want: 'cooldown' },
    { name: 'another plan 6 h ago', history: [planned({ id: 3, createdAt: NOW - 6 * HOUR })], want: 'ok' },
    { name: 'only the plan itself, a minute ago', history: [self()], want: 'ok' },
  ])('cooldown: $name → $want', ({ history, want }) => {
    expect(reason(recheck({ limits: { cooldownMs: 6 * HOUR }, history }))).toBe(want);
  });

  it.each([
    { name: 'one other plan in the day, max 1', history: [planned({ id: 3, createdAt: NOW - HOUR })], want: 'max_plans_per_day' },
    { name: 'one other plan a day ago, max 1', history: [planned({ id: 3, createdAt: NOW - DAY })], want: 'ok' },
    { name: 'only the plan itself, max 1', history: [self()], want: 'ok' },
  ])('max_plans_per_day: $name → $want', ({ history, want }) => {
    expect(reason(recheck({ limits: { maxPlansPerDay: 1 }, history }))).toBe(want);
  });

  it.each([
    // planLamports is what the whole plan counts for: what it will claim, judged now.
    { name: 'plan 0.6 alone, max 1', plan: '0.6', history: [], want: 'ok' },
    { name: 'plan exactly 1, max 1', plan: '1', history: [], want: 'ok' },
    { name: 'plan 50 (pending jumped since the decision), max 1', plan: '50', history: [], want: 'max_sol_per_day' },
    { name: 'plan 0.6 + 0.5 already today, max 1', plan: '0.6', history: [planned({ id: 3, createdAt: NOW - HOUR, lamports: SOL('0.5') })], want: 'max_sol_per_day' },
    { name: 'plan 0.6 + 0.5 yesterday, max 1', plan: '0.6', history: [planned({ id: 3, createdAt: NOW - DAY, lamports: SOL('0.5') })], want: 'ok' },
    // The plan's own estimate must not be added to itself.
    { name: 'plan 0.6 + its own row of 0.6, max 1', plan: '0.6', history: [self({ lamports: SOL('0.6') })], want: 'ok' },
  ])('max_sol_per_day: $name → $want', ({ plan, history, want }) => {
    expect(reason(recheck({ limits: { maxLamportsPerDay: SOL('1') }, planLamports: SOL(plan), stepLamports: SOL(plan), history }))).toBe(want);
  });

  it('max_sol_per_day counts planLamports, not the step: a 0.3 deposit of a 5 SOL claim plan breaks a 1 SOL day', () => {
    const r = recheck({ limits: { maxLamportsPerDay: SOL('1') }, stepKind: 'deposit', firstStep: false, stepLamports: SOL('0.3'), planLamports: SOL('5') });
    expect(r).toEqual({ ok: false, reason: 'max_sol_per_day', detail: 'max_sol_per_day 1: 0 SOL in the last 24h + 5 SOL now = 5 SOL', refuse: false });
  });

  it('max_sol_per_action: a step above the safety cap is refused (recorded as a refusal), not skipped', () => {
    expect(recheck({ stepLamports: SOL('100.000000001'), safety: { maxLamportsPerAction: SOL('100') } })).toEqual({
      ok: false,
      reason: 'max_sol_per_action',
      detail: '100.000000001 SOL exceeds max_sol_per_action 100',
      refuse: true,
    });
    expect(reason(recheck({ stepLamports: SOL('100'), safety: { maxLamportsPerAction: SOL('100') } }))).toBe('ok');
  });

  it('the safety cap judges the step, not the plan', () => {
    const r = recheck({ stepKind: 'deposit', firstStep: false, stepLamports: SOL('2'), planLamports: SOL('50'), safety: { maxLamportsPerAction: SOL('10') } });
    expect(r.ok).toBe(true);
  });

  it('a rule limit is reported before the safety cap (a skip is what the rule asked for)', () => {
    const r = recheck({ limits: { maxLamportsPerDay: SOL('1') }, planLamports: SOL('50'), stepLamports: SOL('50'), safety: { maxLamportsPerAction: SOL('10') } });
    expect(r).toMatchObject({ ok: false, reason: 'max_sol_per_day', refuse: false });
  });
});

describe('recheckBeforeSigning: what does not count', () => {
  const every: Partial<RuleLimits> = { oncePerEpoch: true, cooldownMs: 6 * HOUR, maxPlansPerDay: 1, maxLamportsPerDay: SOL('1') };

  it("the plan's own row, whatever its status, under every limit at once", () => {
    for (const status of ['open', 'blocked', 'done', 'failed'] as const) {
      expect(recheck({ limits: every, history: [self({ status, lamports: SOL('1') })] }), status).toEqual({ ok: true });
    }
  });

  it('the same row under another id counts: the exclusion is by id, not by likeness', () => {
    expect(reason(recheck({ limits: { oncePerEpoch: true }, history: [self({ id: PLAN_ID + 1 })] }))).toBe('once_per_epoch');
  });

  it('dry plans count for nothing against a real one', () => {
    const dry = [planned({ id: 3, createdAt: NOW - MIN, dry: true, lamports: SOL('5') }), planned({ id: 4, createdAt: NOW - HOUR, dry: true })];
    expect(recheck({ limits: every, history: dry })).toEqual({ ok: true });
  });

  it("another rule's plans count for nothing", () => {
    const other = [planned({ id: 3, rule: 'other', createdAt: NOW - MIN, lamports: SOL('5') })];
    expect(recheck({ limits: every, history: other })).toEqual({ ok: true });
  });

  it('a later step of a plan is not judged by the conditions: the claim rightly emptied pending', () => {
    const afterClaim = summary({ pendingLamports: 0n });
    expect(recheck({ firstStep: false, stepKind: 'deposit', summary: afterClaim, stepLamports: SOL('1'), planLamports: SOL('1') })).toEqual({ ok: true });
    // The same summary stops a first step.
    expect(reason(recheck({ firstStep: true, stepKind: 'deposit', summary: afterClaim, stepLamports: SOL('1') }))).toBe('condition');
  });

  it('a later step is still judged by the limits and the cap', () => {
    const later = { firstStep: false, stepKind: 'deposit' as SignedOp, summary: summary({ pendingLamports: 0n }) };
    expect(reason(recheck({ ...later, limits: { oncePerEpoch: true }, history: [planned({ id: 3, createdAt: NOW - HOUR })] }))).toBe('once_per_epoch');
    expect(reason(recheck({ ...later, stepLamports: SOL('101') }))).toBe('max_sol_per_action');
  });
});
