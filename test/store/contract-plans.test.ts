// Plans through the store port, the same cases for every adapter: the exactly-once key, dry plans,
// lamports at the edge of u64, and the queries the planner, the worker and `status` read.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_LAMPORTS } from '../../src/amount.js';
import type { StepSpec } from '../../src/domain.js';
import type { Store } from '../../src/store/port.js';
import { call, code, useAdapter } from './contract-adapters.js';
import { ADDR, ADDR2, draft, request, T0 } from './fixtures.js';

const HOUR = 3_600_000;
const opts = (now = T0) => ({ dry: false, now, reason: 'r' });

describe.each(['sqlite', 'postgres'] as const)('plans (%s)', (name) => {
  const adapter = useAdapter(name);
  let store: Store;
  beforeEach(async () => {
    store = await adapter.open();
  });
  afterEach(async () => {
    await store.close();
  });

  describe('latestRulePlans (what a renamed rule carries its history from)', () => {
    it("each rule id's newest plan with its steps; one-off sends left out", async () => {
      expect(await store.latestRulePlans()).toEqual([]);
      await store.insertPlan(draft({ rule: 'topup', epoch: '2025-06-01' }), opts());
      const newer = (await store.insertPlan(draft({ rule: 'topup', epoch: '2025-06-02', steps: [{ kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'fixed', lamports: 1n } }] }), opts()))!;
      const other = (await store.insertPlan(draft({ rule: 'sweep', address: ADDR2 }), opts()))!;
      await store.insertPlan(draft({ rule: 'send', manualId: 'op-9' }), opts());
      const latest = await store.latestRulePlans();
      expect(latest.map((p) => [p.id, p.rule])).toEqual([
        [newer.id, 'topup'],
        [other.id, 'sweep'],
      ]);
      expect(latest[0]?.steps.map((s) => [s.kind, s.symbol, s.amountSpec])).toEqual([['deposit', 'SOL2X', { kind: 'fixed', lamports: 1n }]]);
      expect(latest.map((p) => p.hasRealPlans)).toEqual([true, true]);
    });

    it('says whether a rule id ever planned for real: not one with dry plans only, yes one whose newest is dry', async () => {
      const dry = (now = T0) => ({ ...opts(now), dry: true });
      await store.insertPlan(draft({ rule: 'watched', epoch: '2025-06-01' }), dry());
      await store.insertPlan(draft({ rule: 'watched', epoch: '2025-06-02' }), dry());
      await store.insertPlan(draft({ rule: 'paused', epoch: '2025-06-01' }), opts());
      await store.insertPlan(draft({ rule: 'paused', epoch: '2025-06-02' }), dry());
      const latest = await store.latestRulePlans();
      expect(latest.map((p) => [p.rule, p.epoch, p.dry, p.hasRealPlans])).toEqual([
        ['watched', '2025-06-02', true, false],
        ['paused', '2025-06-02', true, true],
      ]);
    });
  });

  describe('insertPlan', () => {
    it('records the plan and every step as planned, in order', async () => {
      const plan = await store.insertPlan(draft(), { dry: false, now: T0, reason: 'pending_sol 1.5 >= 0.5' });
      expect(plan).toMatchObject({
        wallet: 'treasury',
        address: ADDR,
        rule: 'compound',
        epoch: '2025-06-01',
        seq: 0,
        dry: false,
        status: 'open',
        estimateLamports: 1_500_000_000n,
        claimedLamports: null,
        reason: 'pending_sol 1.5 >= 0.5',
        manualId: null,
        createdAt: T0,
        updatedAt: T0,
      });
      expect(plan!.steps.map((s) => [s.idx, s.kind, s.symbol, s.state, s.attempts])).toEqual([
        [0, 'claim', null, 'planned', 0],
        [1, 'deposit', 'SOL2X', 'planned', 0],
      ]);
      expect(plan!.steps[1]!.amountSpec).toEqual({ kind: 'percent', ppm: 500_000 });
      expect(plan!.steps[1]!.amountLamports).toBeNull();
      expect(await store.getPlan(plan!.id)).toEqual(plan);
    });

    it('a dry plan is recorded as dry with every step skipped, and nothing can be sent from it', async () => {
      const plan = (await store.insertPlan(draft(), { dry: true, now: T0, reason: 'r' }))!;
      expect(plan.status).toBe('dry');
      expect(plan.steps.map((s) => [s.state, s.resolution])).toEqual([
        ['skipped', 'dry run'],
        ['skipped', 'dry run'],
      ]);
      await expect(call(() => store.markSending(plan.steps[0]!.id, request(), T0))).rejects.toThrow(/skipped, not planned/);
      expect(await store.openPlans()).toEqual([]);
      expect(await store.finishPlan(plan.id, T0)).toBe('dry');
    });

    it('returns undefined for a second plan with the same (address, rule, epoch, seq, dry), leaving one', async () => {
      const first = await store.insertPlan(draft(), { dry: false, now: T0, reason: 'first' });
      expect(first).toBeDefined();
      expect(await store.insertPlan(draft({ estimateLamports: 7n }), { dry: false, now: T0 + 1, reason: 'second' })).toBeUndefined();
      const plans = await store.listPlans();
      expect(plans).toEqual([first]);
    });

    it('the same key asked twice at once records one plan', async () => {
      const both = await Promise.all([call(() => store.insertPlan(draft(), opts())), call(() => store.insertPlan(draft(), opts()))]);
      expect(both.filter((p) => p !== undefined)).toHaveLength(1);
      expect(await store.listPlans()).toHaveLength(1);
    });

    it('keys on every part: another seq, rule, epoch, address or dryness is another plan; another name is not', async () => {
      expect(await store.insertPlan(draft(), opts())).toBeDefined();
      expect(await store.insertPlan(draft({ seq: 1 }), opts())).toBeDefined();
      expect(await store.insertPlan(draft({ rule: 'other' }), opts())).toBeDefined();
      expect(await store.insertPlan(draft({ epoch: '2025-06-02' }), opts())).toBeDefined();
      expect(await store.insertPlan(draft({ address: ADDR2 }), opts())).toBeDefined();
      expect(await store.insertPlan(draft(), { ...opts(), dry: true })).toBeDefined();
      expect(await store.insertPlan(draft({ wallet: 'ops' }), opts())).toBeUndefined();
      expect(await store.listPlans()).toHaveLength(6);
    });

    it('a one-off send is found by its id, which is used once', async () => {
      const sent = (await store.insertPlan(draft({ rule: 'send', manualId: 'op-1' }), opts()))!;
      expect(sent.manualId).toBe('op-1');
      expect(await store.planByManualId('op-1')).toEqual(sent);
      expect(await store.planByManualId('op-2')).toBeUndefined();
      expect(await store.insertPlan(draft({ rule: 'send', seq: 1, manualId: 'op-1' }), opts())).toBeUndefined();
    });

    it('carries u64::MAX lamports in and out exactly', async () => {
      const plan = (await store.insertPlan(
        draft({
          estimateLamports: MAX_LAMPORTS,
          steps: [{ kind: 'claim' }, { kind: 'mint', symbol: 'SOL3X', amount: { kind: 'fixed', lamports: MAX_LAMPORTS } }],
        }),
        opts(),
      ))!;
      const back = (await store.getPlan(plan.id))!;
      expect(back.estimateLamports).toBe(18_446_744_073_709_551_615n);
      expect(back.steps[1]!.amountLamports).toBe(18_446_744_073_709_551_615n);
      expect(back.steps[1]!.amountSpec).toEqual({ kind: 'fixed', lamports: 18_446_744_073_709_551_615n });
      await store.markSending(back.steps[0]!.id, request(), T0);
      await store.markAcknowledged(back.steps[0]!.id, { status: 200, responseRaw: '{}', claimedLamports: MAX_LAMPORTS }, T0);
      expect((await store.getPlan(plan.id))!.claimedLamports).toBe(MAX_LAMPORTS);
      // What it claimed and its fixed mint besides, summed exactly past 64 bits.
      expect((await store.planHistory(ADDR, 0))[0]!.lamports).toBe(MAX_LAMPORTS * 2n);
    });

    it('refuses lamports outside u64 and a plan without steps, recording nothing', async () => {
      expect(await code(() => store.insertPlan(draft({ estimateLamports: MAX_LAMPORTS + 1n }), opts()))).toBe('STATE_INVALID');
      const negative = draft({ steps: [{ kind: 'deposit', symbol: 'X', amount: { kind: 'fixed', lamports: -1n } }] });
      expect(await code(() => store.insertPlan(negative, opts()))).toBe('STATE_INVALID');
      expect(await code(() => store.insertPlan(draft({ steps: [] }), opts()))).toBe('STATE_INVALID');
      expect(await store.listPlans()).toEqual([]);
    });

    it('takes the time from the clock when none is given', async () => {
      expect((await store.insertPlan(draft(), { dry: false, reason: 'r' }))?.createdAt).toBe(T0);
    });
  });

  it('planHistory returns plans created since the cut-off or in the given epoch, claimed lamports when known', async () => {
    const old = (await store.insertPlan(draft({ epoch: '2025-05-30', estimateLamports: 1n }), opts(T0 - 48 * HOUR)))!;
    const inEpoch = (await store.insertPlan(draft({ epoch: '2025-06-01', estimateLamports: 2n }), opts(T0 - 30 * HOUR)))!;
    const recent = (await store.insertPlan(draft({ wallet: 'renamed', epoch: '2025-05-31', estimateLamports: 3n }), opts(T0 - HOUR)))!;
    await store.insertPlan(draft({ address: ADDR2, estimateLamports: 4n }), opts(T0));
    const dry = (await store.insertPlan(draft({ epoch: '2025-05-31', seq: 1, estimateLamports: 5n }), { dry: true, now: T0, reason: 'r' }))!;
    const claim = recent.steps[0]!;
    await store.markSending(claim.id, request(), T0);
    await store.markAcknowledged(claim.id, { status: 200, responseRaw: '{}', claimedLamports: 33n }, T0);

    expect(await store.planHistory(ADDR, T0 - 24 * HOUR, '2025-06-01')).toEqual([
      { id: inEpoch.id, rule: 'compound', epoch: '2025-06-01', seq: 0, createdAt: T0 - 30 * HOUR, dry: false, status: 'open', lamports: 2n, spent: false },
      // Its claim is acknowledged: spent (so even a failed plan of it counts: rules/limits.ts
      // countsForLimits), and sent at T0, which counts it in the day from then (movedAt).
      { id: recent.id, rule: 'compound', epoch: '2025-05-31', seq: 0, createdAt: T0 - HOUR, dry: false, status: 'open', lamports: 33n, spent: true, movedAt: T0 },
      { id: dry.id, rule: 'compound', epoch: '2025-05-31', seq: 1, createdAt: T0, dry: true, status: 'dry', lamports: 5n, spent: false },
    ]);
    expect((await store.planHistory(ADDR, T0 - 24 * HOUR)).map((e) => e.lamports)).toEqual([33n, 5n]);
    expect((await store.planHistory(ADDR, 0)).map((e) => e.lamports)).toEqual([1n, 2n, 33n, 5n]);
    expect((await store.planHistory(ADDR2, 0)).map((e) => e.lamports)).toEqual([4n]);
    expect(await store.planHistory('treasury', 0)).toEqual([]);
    expect(old.id).toBeGreaterThan(0);
  });

  it('planHistory counts a plan for its claim and its fixed amounts, and says whether a step of it was applied', async () => {
    const steps: StepSpec[] = [
      { kind: 'claim' },
      { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'fixed', lamports: 7n } },
      { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'percent', ppm: 500_000 } },
      { kind: 'mint', symbol: 'SOL5X', amount: { kind: 'fixed', lamports: 11n } },
    ];
    const mixed = (await store.insertPlan(draft({ steps, estimateLamports: 100n }), opts(T0 - HOUR)))!;
    const noClaim = (await store.insertPlan(draft({ seq: 1, steps: steps.slice(1, 2), estimateLamports: 7n }), opts(T0 - HOUR)))!;
    const failedLate = (await store.insertPlan(draft({ seq: 2, steps: [steps[1]!, steps[3]!], estimateLamports: 18n }), opts(T0 - HOUR)))!;
    const failedFirst = (await store.insertPlan(draft({ seq: 3 }), opts(T0 - HOUR)))!;
    // A withdraw's shares and a burn's tokens are not SOL: the claim's plan counts its claim alone.
    const unwinding: StepSpec[] = [
      { kind: 'claim' },
      { kind: 'withdraw', symbol: 'SOL2X', amount: { kind: 'fixed', lamports: 13n } },
      { kind: 'burn', symbol: 'SOL5X', amount: { kind: 'fixed', lamports: 17n } },
    ];
    const unwind = (await store.insertPlan(draft({ seq: 4, steps: unwinding, estimateLamports: 100n }), opts(T0 - HOUR)))!;
    const at = (await store.planHistory(ADDR, 0)).map((e) => [e.id, e.lamports, e.status, e.spent]);
    expect(at).toEqual([
      [mixed.id, 118n, 'open', false],
      [noClaim.id, 7n, 'open', false],
      [failedLate.id, 18n, 'open', false],
      [failedFirst.id, 1_500_000_000n, 'open', false],
      [unwind.id, 100n, 'open', false],
    ]);
    // The claim took 133, more than the 100 expected: it and the fixed 7 and 11 count; the 50% is
    // the claim's. (Said less than expected, the expected would count: the larger of the two.)
    await store.markSending(mixed.steps[0]!.id, request(), T0);
    await store.markAcknowledged({ id: mixed.steps[0]!.id, attempt: 1 }, { status: 200, responseRaw: '{}', claimedLamports: 133n }, T0);
    // A deposit applied, then the next step refused as an invalid request: failed, but spent.
    await store.markSending(failedLate.steps[0]!.id, request(), T0);
    await store.markAcknowledged({ id: failedLate.steps[0]!.id, attempt: 1 }, { status: 200, responseRaw: '{}' }, T0);
    await store.markSending(failedLate.steps[1]!.id, request(), T0);
    await store.markFailed({ id: failedLate.steps[1]!.id, attempt: 1 }, { status: 401, responseRaw: '{}', error: 'bad signature' }, T0);
    // Refused at its first step: failed, nothing spent.
    await store.markSending(failedFirst.steps[0]!.id, request(), T0);
    await store.markFailed({ id: failedFirst.steps[0]!.id, attempt: 1 }, { status: 401, responseRaw: '{}', error: 'bad signature' }, T0);
    expect((await store.planHistory(ADDR, 0)).map((e) => [e.id, e.lamports, e.status, e.spent])).toEqual([
      [mixed.id, 151n, 'open', true],
      [noClaim.id, 7n, 'open', false],
      [failedLate.id, 18n, 'failed', true],
      [failedFirst.id, 1_500_000_000n, 'failed', false],
      [unwind.id, 100n, 'open', false],
    ]);
  });

  it('planHistory takes in a plan recorded before the window whose request went out in it, not one held back', async () => {
    const fixed: StepSpec[] = [{ kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'fixed', lamports: 7n } }];
    const sent = (await store.insertPlan(draft({ epoch: '2025-05-29', steps: fixed, estimateLamports: 7n }), opts(T0 - 48 * HOUR)))!;
    const heldBack = (await store.insertPlan(draft({ epoch: '2025-05-29', seq: 1, steps: fixed, estimateLamports: 7n }), opts(T0 - 48 * HOUR)))!;
    await store.markSending(sent.steps[0]!.id, request(), T0 - HOUR);
    await store.markAcknowledged({ id: sent.steps[0]!.id, attempt: 1 }, { status: 200, responseRaw: '{}' }, T0 - HOUR);
    await store.markSending(heldBack.steps[0]!.id, request(), T0 - HOUR);
    await store.markNotSent({ id: heldBack.steps[0]!.id, attempt: 1 }, 'withheld', T0 - HOUR);
    expect((await store.planHistory(ADDR, T0 - 24 * HOUR, '2025-06-01')).map((e) => [e.id, e.movedAt])).toEqual([[sent.id, T0 - HOUR]]);
    expect((await store.pollView(ADDR, T0 - 24 * HOUR, '2025-06-01')).history.map((e) => [e.id, e.movedAt])).toEqual([[sent.id, T0 - HOUR]]);
  });

  it('listPlans is most recent first, filters by address and by step state, and honours the limit', async () => {
    const a = (await store.insertPlan(draft({ seq: 0 }), opts()))!;
    const b = (await store.insertPlan(draft({ seq: 1 }), opts()))!;
    const c = (await store.insertPlan(draft({ address: ADDR2 }), opts()))!;
    await store.markSending(b.steps[0]!.id, request(), T0);
    await store.markUnknown(b.steps[0]!.id, { error: 'timeout' }, T0);

    expect((await store.listPlans()).map((p) => p.id)).toEqual([c.id, b.id, a.id]);
    expect((await store.listPlans({ address: ADDR })).map((p) => p.id)).toEqual([b.id, a.id]);
    expect((await store.listPlans({ state: 'unknown' })).map((p) => p.id)).toEqual([b.id]);
    expect((await store.listPlans({ state: 'planned', address: ADDR2 })).map((p) => p.id)).toEqual([c.id]);
    expect((await store.listPlans({ limit: 1 })).map((p) => p.id)).toEqual([c.id]);
    expect(await code(() => store.listPlans({ limit: 0 }))).toBe('STATE_INVALID');
    expect(await store.getPlan(9999)).toBeUndefined();
    expect(await store.getStep(9999)).toBeUndefined();
  });

  it('openPlans lists open real plans oldest first; activePlans adds blocked ones for an address', async () => {
    const a = (await store.insertPlan(draft({ seq: 0 }), opts()))!;
    const b = (await store.insertPlan(draft({ wallet: 'renamed', seq: 1 }), opts()))!;
    const c = (await store.insertPlan(draft({ address: ADDR2 }), opts()))!;
    await store.insertPlan(draft({ seq: 2 }), { ...opts(), dry: true });
    await store.markSending(a.steps[0]!.id, request(), T0);
    await store.markUnknown(a.steps[0]!.id, { error: 'reset' }, T0);

    expect((await store.openPlans()).map((p) => p.id)).toEqual([b.id, c.id]);
    expect((await store.openPlans(ADDR)).map((p) => p.id)).toEqual([b.id]);
    expect((await store.openPlans(ADDR2)).map((p) => p.id)).toEqual([c.id]);
    expect((await store.activePlans(ADDR)).map((p) => [p.id, p.status])).toEqual([
      [a.id, 'blocked'],
      [b.id, 'open'],
    ]);
    expect((await store.activePlans(ADDR2)).map((p) => p.id)).toEqual([c.id]);
    expect(await store.openPlans('treasury')).toEqual([]);
    expect(await store.activePlans('treasury')).toEqual([]);
  });

  it('reports its schema, integrity, and that a write would go through', async () => {
    expect(store.schemaVersion).toBeGreaterThan(0);
    expect(await store.integrityCheck()).toBe('ok');
    await store.probeWrite();
    expect(await store.walletStates()).toEqual([]);
    expect(store.path).not.toMatch(/:[^@/]*@/); // never a password in what is shown
  });
});
