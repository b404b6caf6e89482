import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_LAMPORTS } from '../../src/amount.js';
import type { StepState } from '../../src/domain.js';
import { StateError } from '../../src/errors.js';
import { deriveStatus, type SyncStore } from '../../src/store/index.js';
import { ADDR, ADDR2, draft, freshTempDir, open, request, T0 } from './fixtures.js';

const tmp = freshTempDir();
let store: SyncStore;
beforeEach(() => {
  store = open(tmp.dbPath);
});
afterEach(() => {
  store.close();
});

const HOUR = 3_600_000;

describe('insertPlan', () => {
  it('records the plan and every step as planned, in order', () => {
    const plan = store.insertPlan(draft(), { dry: false, now: T0, reason: 'pending_sol 1.5 >= 0.5' });
    expect(plan).toMatchObject({
      wallet: 'treasury',
      rule: 'compound',
      epoch: '2025-06-01',
      seq: 0,
      dry: false,
      status: 'open',
      estimateLamports: 1_500_000_000n,
      claimedLamports: null,
      reason: 'pending_sol 1.5 >= 0.5',
      createdAt: T0,
    });
    expect(plan!.steps.map((s) => [s.idx, s.kind, s.symbol, s.state, s.attempts])).toEqual([
      [0, 'claim', null, 'planned', 0],
      [1, 'deposit', 'SOL2X', 'planned', 0],
    ]);
    expect(plan!.steps[1]!.amountSpec).toEqual({ kind: 'percent', ppm: 500_000 });
    expect(plan!.steps[1]!.amountLamports).toBeNull();
    expect(store.getPlan(plan!.id)).toEqual(plan);
  });

  it('a dry plan is recorded as dry with every step skipped, and nothing can be sent from it', () => {
    const plan = store.insertPlan(draft(), { dry: true, now: T0, reason: 'r' })!;
    expect(plan.status).toBe('dry');
    expect(plan.steps.map((s) => [s.state, s.resolution])).toEqual([
      ['skipped', 'dry run'],
      ['skipped', 'dry run'],
    ]);
    expect(() => store.markSending(plan.steps[0]!.id, request(), T0)).toThrow(/skipped, not planned/);
    expect(store.openPlans()).toEqual([]);
    expect(store.finishPlan(plan.id, T0)).toBe('dry');
  });

  it('returns undefined for a second plan with the same (address, rule, epoch, seq, dry), leaving one', () => {
    const first = store.insertPlan(draft(), { dry: false, now: T0, reason: 'first' });
    expect(first).toBeDefined();
    const second = store.insertPlan(draft({ estimateLamports: 7n }), { dry: false, now: T0 + 1, reason: 'second' });
    expect(second).toBeUndefined();
    const plans = store.listPlans();
    expect(plans).toHaveLength(1);
    expect(plans[0]).toEqual(first);
  });

  it('the name is a label: the same address under another name is refused, another address under the same name is not', () => {
    const opts = { dry: false, now: T0, reason: 'r' };
    const first = store.insertPlan(draft({ wallet: 'old' }), opts)!;
    // A renamed wallet (same address) may not plan the same (rule, epoch, seq) again.
    expect(store.insertPlan(draft({ wallet: 'new' }), { ...opts, now: T0 + 1 })).toBeUndefined();
    // A name pointed at another address is another wallet, with its own key.
    const other = store.insertPlan(draft({ wallet: 'old', address: ADDR2 }), opts);
    expect(other).toMatchObject({ wallet: 'old', address: ADDR2, seq: 0 });
    expect(store.listPlans().map((p) => p.id)).toEqual([other!.id, first.id]);
  });

  it('keys on every part: another seq, rule, epoch, address or dryness is another plan', () => {
    const opts = { dry: false, now: T0, reason: 'r' };
    expect(store.insertPlan(draft(), opts)).toBeDefined();
    expect(store.insertPlan(draft({ seq: 1 }), opts)).toBeDefined();
    expect(store.insertPlan(draft({ rule: 'other' }), opts)).toBeDefined();
    expect(store.insertPlan(draft({ epoch: '2025-06-02' }), opts)).toBeDefined();
    expect(store.insertPlan(draft({ address: ADDR2 }), opts)).toBeDefined();
    expect(store.insertPlan(draft(), { ...opts, dry: true })).toBeDefined();
    // Another name is not another key.
    expect(store.insertPlan(draft({ wallet: 'ops' }), opts)).toBeUndefined();
    expect(store.listPlans()).toHaveLength(6);
  });

  it('carries u64::MAX lamports in and out exactly', () => {
    const plan = store.insertPlan(
      draft({
        estimateLamports: MAX_LAMPORTS,
        steps: [{ kind: 'claim' }, { kind: 'mint', symbol: 'SOL3X', amount: { kind: 'fixed', lamports: MAX_LAMPORTS } }],
      }),
      { dry: false, now: T0, reason: 'r' },
    )!;
    store.close();
    store = open(tmp.dbPath);
    const back = store.getPlan(plan.id)!;
    expect(back.estimateLamports).toBe(18_446_744_073_709_551_615n);
    expect(back.steps[1]!.amountLamports).toBe(18_446_744_073_709_551_615n);
    expect(back.steps[1]!.amountSpec).toEqual({ kind: 'fixed', lamports: 18_446_744_073_709_551_615n });

    store.markSending(back.steps[0]!.id, request(), T0);
    store.markAcknowledged(back.steps[0]!.id, { status: 200, responseRaw: '{}', claimedLamports: MAX_LAMPORTS }, T0);
    expect(store.getPlan(plan.id)!.claimedLamports).toBe(MAX_LAMPORTS);
    expect(store.planHistory(ADDR, 0)[0]!.lamports).toBe(MAX_LAMPORTS);
  });

  it('refuses lamports outside u64 and a plan without steps, recording nothing', () => {
    const tooBig = () => store.insertPlan(draft({ estimateLamports: MAX_LAMPORTS + 1n }), { dry: false, now: T0, reason: 'r' });
    expect(tooBig).toThrow(StateError);
    const negative = () =>
      store.insertPlan(
        draft({ steps: [{ kind: 'deposit', symbol: 'X', amount: { kind: 'fixed', lamports: -1n } }] }),
        { dry: false, now: T0, reason: 'r' },
      );
    expect(negative).toThrow(expect.objectContaining({ code: 'STATE_INVALID' }) as Error);
    expect(() => store.insertPlan(draft({ steps: [] }), { dry: false, now: T0, reason: 'r' })).toThrow(
      expect.objectContaining({ code: 'STATE_INVALID' }) as Error,
    );
    expect(store.listPlans()).toEqual([]);
  });

  it('takes the time from the clock when none is given', () => {
    const plan = store.insertPlan(draft(), { dry: false, reason: 'r' });
    expect(plan?.createdAt).toBe(T0);
  });
});

describe('planHistory', () => {
  it('returns plans created since the cut-off or in the given epoch, claimed lamports when known', () => {
    const opts = (now: number) => ({ dry: false, now, reason: 'r' });
    const old = store.insertPlan(draft({ epoch: '2025-05-30', estimateLamports: 1n }), opts(T0 - 48 * HOUR))!;
    const inEpoch = store.insertPlan(draft({ epoch: '2025-06-01', estimateLamports: 2n }), opts(T0 - 30 * HOUR))!;
    // Recorded under another name: the same wallet all the same.
    const recent = store.insertPlan(draft({ wallet: 'renamed', epoch: '2025-05-31', estimateLamports: 3n }), opts(T0 - HOUR))!;
    // The same name on another address: another wallet's history.
    store.insertPlan(draft({ address: ADDR2, estimateLamports: 4n }), opts(T0));
    const dry = store.insertPlan(draft({ epoch: '2025-05-31', seq: 1, estimateLamports: 5n }), { dry: true, now: T0, reason: 'r' })!;

    const claim = recent.steps[0]!;
    store.markSending(claim.id, request(), T0);
    store.markAcknowledged(claim.id, { status: 200, responseRaw: '{}', claimedLamports: 33n }, T0);

    const h = store.planHistory(ADDR, T0 - 24 * HOUR, '2025-06-01');
    expect(h).toEqual([
      { id: inEpoch.id, rule: 'compound', epoch: '2025-06-01', seq: 0, createdAt: T0 - 30 * HOUR, dry: false, status: 'open', lamports: 2n },
      { id: recent.id, rule: 'compound', epoch: '2025-05-31', seq: 0, createdAt: T0 - HOUR, dry: false, status: 'open', lamports: 33n },
      { id: dry.id, rule: 'compound', epoch: '2025-05-31', seq: 1, createdAt: T0, dry: true, status: 'dry', lamports: 5n },
    ]);
    expect(store.planHistory(ADDR, T0 - 24 * HOUR).map((e) => e.lamports)).toEqual([33n, 5n]);
    expect(store.planHistory(ADDR, 0).map((e) => e.lamports)).toEqual([1n, 2n, 33n, 5n]);
    expect(store.planHistory(ADDR2, 0).map((e) => e.lamports)).toEqual([4n]);
    // Names are not keys.
    expect(store.planHistory('treasury', 0)).toEqual([]);
    expect(old.id).toBeGreaterThan(0);
  });
});

describe('listing plans', () => {
  it('listPlans is most recent first, filters by address and by step state, and honours the limit', () => {
    const opts = { dry: false, now: T0, reason: 'r' };
    const a = store.insertPlan(draft({ seq: 0 }), opts)!;
    const b = store.insertPlan(draft({ seq: 1 }), opts)!;
    // The same name on another address.
    const c = store.insertPlan(draft({ address: ADDR2 }), opts)!;
    store.markSending(b.steps[0]!.id, request(), T0);
    store.markUnknown(b.steps[0]!.id, { error: 'timeout' }, T0);

    expect(store.listPlans().map((p) => p.id)).toEqual([c.id, b.id, a.id]);
    expect(store.listPlans({ address: ADDR }).map((p) => p.id)).toEqual([b.id, a.id]);
    expect(store.listPlans({ state: 'unknown' }).map((p) => p.id)).toEqual([b.id]);
    expect(store.listPlans({ state: 'planned', address: ADDR2 }).map((p) => p.id)).toEqual([c.id]);
    expect(store.listPlans({ limit: 1 }).map((p) => p.id)).toEqual([c.id]);
    expect(() => store.listPlans({ limit: 0 })).toThrow(StateError);
    expect(store.getPlan(9999)).toBeUndefined();
    expect(store.getStep(9999)).toBeUndefined();
  });

  it('openPlans lists open real plans oldest first; activePlans adds blocked ones for an address', () => {
    const opts = { dry: false, now: T0, reason: 'r' };
    const a = store.insertPlan(draft({ seq: 0 }), opts)!;
    // The same address, renamed: still this wallet's plan.
    const b = store.insertPlan(draft({ wallet: 'renamed', seq: 1 }), opts)!;
    // The same name, another address: another wallet's plan.
    const c = store.insertPlan(draft({ address: ADDR2 }), opts)!;
    store.insertPlan(draft({ seq: 2 }), { ...opts, dry: true });
    store.markSending(a.steps[0]!.id, request(), T0);
    store.markUnknown(a.steps[0]!.id, { error: 'reset' }, T0);

    expect(store.openPlans().map((p) => p.id)).toEqual([b.id, c.id]);
    expect(store.openPlans(ADDR).map((p) => p.id)).toEqual([b.id]);
    expect(store.openPlans(ADDR2).map((p) => p.id)).toEqual([c.id]);
    expect(store.activePlans(ADDR).map((p) => [p.id, p.status])).toEqual([
      [a.id, 'blocked'],
      [b.id, 'open'],
    ]);
    expect(store.activePlans(ADDR2).map((p) => p.id)).toEqual([c.id]);
    expect(store.openPlans('treasury')).toEqual([]);
    expect(store.activePlans('treasury')).toEqual([]);
  });
});

describe('deriveStatus', () => {
  const cases: [StepState[], string][] = [
    [['planned', 'planned'], 'open'],
    [['acknowledged', 'planned'], 'open'],
    [['acknowledged', 'sending'], 'open'],
    [['acknowledged', 'acknowledged'], 'done'],
    [['acknowledged', 'skipped'], 'done'],
    [['skipped'], 'done'],
    [['rejected', 'skipped'], 'rejected'],
    [['acknowledged', 'rejected'], 'rejected'],
    [['failed', 'skipped'], 'failed'],
    [['acknowledged', 'failed'], 'failed'],
    [['failed', 'unknown'], 'blocked'],
    [['acknowledged', 'unknown'], 'blocked'],
    [['unknown', 'rejected'], 'blocked'],
  ];
  it.each(cases)('%j → %s', (states, status) => {
    expect(deriveStatus(states)).toBe(status);
  });
});
