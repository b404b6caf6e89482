// The step state machine (SPEC §2) through the store port, the same cases for every adapter: each
// transition, the guarded double transitions and their errors, recovery of what was in flight, and
// the secrets that never reach the state. SQLite-only cases (files, reopening, two connections on
// one file) stay in steps.test.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redactor } from '../../src/log/redact.js';
import { IN_FLIGHT_ERROR, type PlanWithSteps } from '../../src/store/index.js';
import { heldForOperator } from '../../src/store/plan-status.js';
import type { Store } from '../../src/store/port.js';
import { call, code, useAdapter } from './contract-adapters.js';
import { ADDR, ADDR2, draft, request, T0 } from './fixtures.js';

describe.each(['sqlite', 'postgres'] as const)('steps (%s)', (name) => {
  const adapter = useAdapter(name);
  let store: Store;
  let plan: PlanWithSteps;
  let claimId: number;
  let depositId: number;

  beforeEach(async () => {
    store = await adapter.open();
    plan = (await store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' }))!;
    claimId = plan.steps[0]!.id;
    depositId = plan.steps[1]!.id;
  });
  afterEach(async () => {
    await store.close();
  });

  const status = async () => (await store.getPlan(plan.id))!.status;
  const state = async (id: number) => (await store.getStep(id))!.state;

  /** Claim acknowledged (10 lamports claimed), deposit amount set and sent. */
  async function depositSending(): Promise<void> {
    await store.markSending(claimId, request(), T0);
    await store.markAcknowledged(claimId, { status: 200, responseRaw: '{"status":"ok"}', claimedLamports: 10n }, T0);
    await store.setStepAmount(depositId, 5n, T0);
    await store.markSending(depositId, request({ url: 'http://127.0.0.1:8787/v1/actions/deposit' }), T0);
  }

  describe('markSending (planned → sending)', () => {
    it('commits the request, counts the attempt and opens an audit row', async () => {
      const req = request({ before: { epoch: '2025-06-01', pendingLamports: '1500000000', lifetimeLamports: null } });
      const step = await store.markSending(claimId, req, T0 + 5);
      expect(step).toMatchObject({ state: 'sending', attempts: 1, request: req, updatedAt: T0 + 5 });
      expect(await store.stepAttempts(claimId)).toEqual([
        { id: expect.any(Number) as number, stepId: claimId, n: 1, request: req, startedAt: T0 + 5, finishedAt: null, outcome: null, status: null, requestId: null, error: null },
      ]);
      expect(await status()).toBe('open');
    });

    it('a claim signed against more pending than its plan was decided on raises the estimate to it, never lowers it', async () => {
      const before = (pendingLamports: string) => request({ before: { epoch: '2025-06-01', pendingLamports, lifetimeLamports: null } });
      await store.markSending(claimId, before('8000000000'), T0);
      expect((await store.getPlan(plan.id))!.estimateLamports).toBe(8_000_000_000n);
      expect((await store.planHistory(plan.address, 0))[0]!.lamports).toBe(8_000_000_000n);
      await store.markNotSent({ id: claimId, attempt: 1 }, 'withheld', T0);
      await store.markSending(claimId, before('1'), T0);
      expect((await store.getPlan(plan.id))!.estimateLamports).toBe(8_000_000_000n);
    });

    it("keeps the server's x-request-id with the step and its attempt", async () => {
      await store.markSending(claimId, request(), T0);
      await store.markRejected(claimId, { status: 400, responseRaw: '{}', requestId: 'req-123', error: 'nothing to claim' }, T0 + 1);
      expect(await store.getStep(claimId)).toMatchObject({ state: 'rejected', requestId: 'req-123' });
      expect(await store.stepAttempts(claimId)).toMatchObject([{ outcome: 'rejected', status: 400, requestId: 'req-123' }]);
    });

    it('cannot happen twice', async () => {
      await store.markSending(claimId, request(), T0);
      await expect(call(() => store.markSending(claimId, request(), T0))).rejects.toThrow(/is sending, not planned/);
      expect((await store.getStep(claimId))!.attempts).toBe(1);
      expect(await store.stepAttempts(claimId)).toHaveLength(1);
    });

    it('cannot happen twice even when both are asked at once', async () => {
      const once = () => call(() => store.markSending(claimId, request(), T0));
      const results = await Promise.allSettled([once(), once()]);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect((await store.getStep(claimId))!.attempts).toBe(1);
    });

    it('refuses a deposit whose amount is not known yet, then allows it once set', async () => {
      await store.markSending(claimId, request(), T0);
      await store.markAcknowledged(claimId, { status: 200, responseRaw: '{}' }, T0);
      await expect(call(() => store.markSending(depositId, request(), T0))).rejects.toThrow(/amount is not known yet/);
      expect((await store.setStepAmount(depositId, 750_000_000n, T0)).amountLamports).toBe(750_000_000n);
      expect((await store.markSending(depositId, request(), T0)).state).toBe('sending');
    });

    it('refuses a step of a plan that is not open (blocked on an unknown step)', async () => {
      await store.setStepAmount(depositId, 1n, T0);
      await store.markSending(claimId, request(), T0);
      await store.markUnknown(claimId, { error: 'timeout' }, T0);
      await expect(call(() => store.markSending(depositId, request(), T0))).rejects.toThrow(new RegExp(`plan ${plan.id} is blocked`));
      expect(await state(depositId)).toBe('planned');
    });

    it('refuses a step while an earlier step of its plan is unsettled', async () => {
      await store.setStepAmount(depositId, 1n, T0);
      await expect(call(() => store.markSending(depositId, request(), T0))).rejects.toThrow(/step 0 of its plan is still planned/);
      await store.markSending(claimId, request(), T0);
      await expect(call(() => store.markSending(depositId, request(), T0))).rejects.toThrow(/step 0 of its plan is still sending/);
      await store.markAcknowledged(claimId, { status: 200, responseRaw: '{}' }, T0);
      expect((await store.markSending(depositId, request(), T0)).state).toBe('sending');
    });

    it('names a step that does not exist', async () => {
      expect(await code(() => store.markSending(4242, request(), T0))).toBe('STATE_NOT_FOUND');
    });

    it('never stores an Authorization header or a bearer token, wherever it hides', async () => {
      const sneaky = [
        request({ headers: { Authorization: 'Bearer sk-live-123456789' } }),
        request({ headers: { AUTHORIZATION: 'x' } }),
        request({ headers: { 'x-svc-auth': 'bearer sk-live-123456789' } }),
        request({ body: '{"wallet":"A","authorization":"sk-live-123456789"}' }),
        { ...request(), extra: { deep: [{ 'Proxy-Authorization': 'Basic abc' }] } },
      ];
      for (const req of sneaky) expect(await code(() => store.markSending(claimId, req, T0))).toBe('STATE_SECRET');
      expect(await store.getStep(claimId)).toMatchObject({ state: 'planned', attempts: 0, request: null });
      expect(await store.stepAttempts(claimId)).toEqual([]);
    });
  });

  describe('leaving sending', () => {
    it('markAcknowledged records the answer, the claimed lamports on the plan, and closes the attempt', async () => {
      await store.markSending(claimId, request(), T0);
      const step = await store.markAcknowledged(claimId, { status: 200, responseRaw: '{"claimed_sol":1.5}', claimedLamports: 1_500_000_000n }, T0 + 9);
      expect(step).toMatchObject({ state: 'acknowledged', responseStatus: 200, responseRaw: '{"claimed_sol":1.5}', error: null });
      expect((await store.getPlan(plan.id))!.claimedLamports).toBe(1_500_000_000n);
      expect((await store.stepAttempts(claimId))[0]).toMatchObject({ finishedAt: T0 + 9, outcome: 'acknowledged', status: 200 });
      expect(await status()).toBe('open');
      await expect(call(() => store.markAcknowledged(claimId, { status: 200, responseRaw: '{}' }, T0))).rejects.toThrow(/acknowledged, not sending/);
    });

    it('records claimed lamports only for a claim', async () => {
      await depositSending();
      await store.markAcknowledged(depositId, { status: 200, responseRaw: '{}', claimedLamports: 999n }, T0);
      expect(await store.getPlan(plan.id)).toMatchObject({ claimedLamports: 10n, status: 'done' });
    });

    it('markRejected rejects the plan and skips what remains', async () => {
      await store.markSending(claimId, request(), T0);
      const step = await store.markRejected(claimId, { status: 400, responseRaw: '{"error":"bad signature"}', error: 'HTTP 400' }, T0);
      expect(step).toMatchObject({ state: 'rejected', responseStatus: 400, error: 'HTTP 400' });
      expect(await store.getStep(depositId)).toMatchObject({ state: 'skipped', resolution: 'step 0 was rejected' });
      expect(await status()).toBe('rejected');
      expect((await store.stepAttempts(claimId))[0]).toMatchObject({ outcome: 'rejected', status: 400, error: 'HTTP 400' });
      expect(await store.openPlans()).toEqual([]);
    });

    it('markFailed fails the plan and skips what remains', async () => {
      await store.markSending(claimId, request(), T0);
      const step = await store.markFailed(claimId, { status: 401, responseRaw: '{}', error: 'bad signature' }, T0);
      expect(step).toMatchObject({ state: 'failed', responseStatus: 401, error: 'bad signature' });
      expect(await store.getStep(depositId)).toMatchObject({ state: 'skipped', resolution: 'step 0 failed: the request was refused as invalid' });
      expect(await status()).toBe('failed');
      expect((await store.stepAttempts(claimId))[0]).toMatchObject({ outcome: 'failed', status: 401 });
    });

    it('markUnknown blocks the plan; an unknown deposit blocks the address’s signed steps, an unknown claim does not', async () => {
      await store.markSending(claimId, request(), T0);
      await store.markUnknown(claimId, { status: 502, error: 'HTTP 502' }, T0);
      expect(await status()).toBe('blocked');
      expect(await store.hasUnknownSignedStep(ADDR)).toBe(false);
      expect((await store.unknownSteps()).map((s) => s.id)).toEqual([claimId]);

      await store.reconcile(claimId, true, { claimedLamports: 10n, note: 'pending dropped' }, T0);
      await store.setStepAmount(depositId, 5n, T0);
      await store.markSending(depositId, request(), T0);
      await store.markUnknown(depositId, { error: 'socket hang up' }, T0);
      expect(await store.hasUnknownSignedStep(ADDR)).toBe(true);
      expect(await store.hasUnknownSignedStep(ADDR2)).toBe(false);
      expect(await store.hasUnknownSignedStep('treasury')).toBe(false);
      expect((await store.stepAttempts(depositId))[0]).toMatchObject({ outcome: 'unknown', error: 'socket hang up' });
    });

    it('the unknown-step hold follows the address', async () => {
      await depositSending();
      await store.markUnknown(depositId, { error: 'socket hang up' }, T0);
      const renamed = (await store.insertPlan(draft({ wallet: 'renamed', seq: 1 }), { dry: false, now: T0, reason: 'r' }))!;
      expect(renamed.address).toBe(ADDR);
      expect(await store.hasUnknownSignedStep(ADDR)).toBe(true);
      await store.insertPlan(draft({ address: ADDR2 }), { dry: false, now: T0, reason: 'r' });
      expect(await store.hasUnknownSignedStep(ADDR2)).toBe(false);
    });

    it('markNotSent puts the step back to planned for another attempt', async () => {
      await store.markSending(claimId, request({ ts: 1 }), T0);
      const back = await store.markNotSent(claimId, 'connect ECONNREFUSED', T0 + 1);
      expect(back).toMatchObject({ state: 'planned', error: 'connect ECONNREFUSED', attempts: 1 });
      expect(await status()).toBe('open');
      await store.markSending(claimId, request({ ts: 2 }), T0 + 2);
      expect(await store.getStep(claimId)).toMatchObject({ state: 'sending', attempts: 2, error: null });
      expect((await store.stepAttempts(claimId)).map((a) => [a.n, a.request?.ts, a.outcome])).toEqual([
        [1, 1, 'not_sent'],
        [2, 2, null],
      ]);
    });

    it('none of them apply to a step that is not sending', async () => {
      const res = { status: 500, error: 'e' };
      expect(await code(() => store.markAcknowledged(claimId, { status: 200, responseRaw: '' }, T0))).toBe('STATE_TRANSITION');
      expect(await code(() => store.markRejected(claimId, res, T0))).toBe('STATE_TRANSITION');
      expect(await code(() => store.markFailed(claimId, res, T0))).toBe('STATE_TRANSITION');
      expect(await code(() => store.markUnknown(claimId, res, T0))).toBe('STATE_TRANSITION');
      expect(await code(() => store.markNotSent(claimId, 'e', T0))).toBe('STATE_TRANSITION');
      expect(await code(() => store.markUnknown(4242, res, T0))).toBe('STATE_NOT_FOUND');
      expect(await store.getStep(claimId)).toEqual(plan.steps[0]);
    });
  });

  describe('markRefused, reconcile, resolve', () => {
    it('markRefused rejects the plan without an attempt', async () => {
      const step = await store.markRefused(claimId, 'above safety.max_sol_per_action', T0);
      expect(step).toMatchObject({ state: 'rejected', attempts: 0, error: 'above safety.max_sol_per_action' });
      expect(await state(depositId)).toBe('skipped');
      expect(await status()).toBe('rejected');
      expect(await store.stepAttempts(claimId)).toEqual([]);
      expect(await code(() => store.markRefused(claimId, 'again', T0))).toBe('STATE_TRANSITION');
    });

    it('reconcile applied: acknowledged, with the claimed lamports on the plan', async () => {
      await store.markSending(claimId, request(), T0);
      await store.markUnknown(claimId, { error: 'timeout' }, T0);
      const step = await store.reconcile(claimId, true, { claimedLamports: 1_400_000_000n, note: 'lifetime rose' }, T0);
      expect(step).toMatchObject({ state: 'acknowledged', resolution: 'lifetime rose' });
      expect(await store.getPlan(plan.id)).toMatchObject({ claimedLamports: 1_400_000_000n, claimedProved: true, status: 'open' });
    });

    it('reconcile not applied: planned again, to be sent as a new signed request', async () => {
      await store.markSending(claimId, request({ ts: 1 }), T0);
      await store.markUnknown(claimId, { error: 'timeout' }, T0);
      expect(await store.reconcile(claimId, false, { note: 'pending unchanged' }, T0)).toMatchObject({ state: 'planned' });
      expect(await status()).toBe('open');
      expect(await store.markSending(claimId, request({ ts: 2 }), T0)).toMatchObject({ attempts: 2, request: { ts: 2 } });
    });

    it('reconcile refuses a deposit or mint, and any step that is not unknown', async () => {
      await depositSending();
      await store.markUnknown(depositId, { error: 'timeout' }, T0);
      await expect(call(() => store.reconcile(depositId, false, { note: 'x' }, T0))).rejects.toThrow(/only a claim is reconciled automatically/);
      expect(await state(depositId)).toBe('unknown');
      expect(await code(() => store.reconcile(claimId, true, { note: 'x' }, T0))).toBe('STATE_TRANSITION');
    });

    it('resolve applied: acknowledged; the plan completes', async () => {
      await depositSending();
      await store.markUnknown(depositId, { error: 'timeout' }, T0);
      const step = await store.resolve(depositId, true, 'operator: applied', T0);
      expect(step).toMatchObject({ id: depositId, state: 'acknowledged', resolution: 'operator: applied' });
      expect(await status()).toBe('done');
      expect(await store.hasUnknownSignedStep(ADDR)).toBe(false);
    });

    it('resolve not applied: rejected, never retried, the rest skipped', async () => {
      const steps = [
        { kind: 'deposit', symbol: 'A', amount: { kind: 'fixed', lamports: 1n } },
        { kind: 'mint', symbol: 'B', amount: { kind: 'fixed', lamports: 1n } },
      ] as const;
      const three = (await store.insertPlan(draft({ seq: 1, steps: [...steps] }), { dry: false, now: T0, reason: 'r' }))!;
      const [dep, mint] = three.steps;
      await store.markSending(dep!.id, request(), T0);
      await store.markUnknown(dep!.id, { error: 'timeout' }, T0);
      expect((await store.resolve(dep!.id, false, 'operator: not applied', T0)).state).toBe('rejected');
      expect(await store.getStep(mint!.id)).toMatchObject({ state: 'skipped', resolution: 'step 0 was resolved as not applied' });
      expect((await store.getPlan(three.id))!.status).toBe('rejected');
      expect(await code(() => store.markSending(dep!.id, request(), T0))).toBe('STATE_TRANSITION');
      expect(await code(() => store.resolve(claimId, true, 'n', T0))).toBe('STATE_TRANSITION');
      expect(await code(() => store.resolve(4242, true, 'n', T0))).toBe('STATE_NOT_FOUND');
    });

    it('holdForOperator: an unknown claim keeps its state, says why in its resolution, holds the wallet\'s claims, and an operator still resolves it', async () => {
      await store.markSending(claimId, request(), T0);
      await store.markUnknown(claimId, { error: 'HTTP 500' }, T0);
      const held = await store.holdForOperator(claimId, 'claim_undetermined: pending dropped but lifetime did not rise', T0 + 5);
      expect(held).toMatchObject({ state: 'unknown', resolution: 'claim_undetermined: pending dropped but lifetime did not rise', updatedAt: T0 + 5 });
      expect(heldForOperator(held)).toBe(true);
      expect(await store.claimInDoubt(ADDR)).toBe(true);
      expect(await status()).toBe('blocked');
      expect(await store.resolve(claimId, false, 'operator: not applied', T0)).toMatchObject({ state: 'rejected', resolution: 'operator: not applied' });
      expect(await store.claimInDoubt(ADDR)).toBe(false);
      // Only an unknown claim is held: not a planned step, not a deposit.
      expect(await code(() => store.holdForOperator(claimId, 'claim_undetermined: x', T0))).toBe('STATE_TRANSITION');
      expect(await code(() => store.holdForOperator(depositId, 'claim_undetermined: x', T0))).toBe('STATE_TRANSITION');
    });
  });

  describe('amounts, skipping and finishing', () => {
    it('setStepAmount applies to planned steps only, within u64', async () => {
      expect(await code(() => store.setStepAmount(depositId, -1n, T0))).toBe('STATE_INVALID');
      await store.markSending(claimId, request(), T0);
      expect(await code(() => store.setStepAmount(claimId, 1n, T0))).toBe('STATE_TRANSITION');
      expect(await code(() => store.setStepAmount(4242, 1n, T0))).toBe('STATE_NOT_FOUND');
    });

    it('recordClaimed sets the claimed amount of an acknowledged claim once, and of nothing else (helper 42)', async () => {
      await store.markSending(claimId, request(), T0);
      expect(await code(() => store.recordClaimed(claimId, 7n, T0))).toBe('STATE_TRANSITION');
      await store.markAcknowledged(claimId, { status: 200, responseRaw: '{"status":"success"}' }, T0);
      expect((await store.getPlan(plan.id))!.claimedLamports).toBeNull();
      expect(await code(() => store.recordClaimed(depositId, 7n, T0))).toBe('STATE_TRANSITION');
      expect(await store.recordClaimed(claimId, 7n, T0)).toMatchObject({ state: 'acknowledged' });
      expect(await store.getPlan(plan.id)).toMatchObject({ claimedLamports: 7n, claimedProved: true });
      // Recorded once: a second figure never replaces the first.
      expect(await code(() => store.recordClaimed(claimId, 9n, T0))).toBe('STATE_TRANSITION');
      expect((await store.getPlan(plan.id))!.claimedLamports).toBe(7n);
      expect(await code(() => store.recordClaimed(4242, 1n, T0))).toBe('STATE_NOT_FOUND');
      expect(await status()).toBe('open');
    });

    it('an acknowledged claim\'s amount is proved only when the caller says so: the answer\'s claimed_sol is, the pending seen is not', async () => {
      await store.markSending(claimId, request(), T0);
      await store.markAcknowledged(claimId, { status: 200, responseRaw: '{"status":"success"}', claimedLamports: 5n }, T0);
      expect(await store.getPlan(plan.id)).toMatchObject({ claimedLamports: 5n, claimedProved: false });
      const other = (await store.insertPlan(draft({ seq: 1 }), { dry: false, now: T0, reason: 'r' }))!;
      await store.markSending(other.steps[0]!.id, request(), T0);
      await store.markAcknowledged(other.steps[0]!.id, { status: 200, responseRaw: '{"status":"success","claimed_sol":0.000000005}', claimedLamports: 5n, claimedProved: true }, T0);
      expect(await store.getPlan(other.id)).toMatchObject({ claimedLamports: 5n, claimedProved: true });
    });

    it('skipRemaining skips planned steps and settles the plan', async () => {
      await store.markSending(claimId, request(), T0);
      await store.markAcknowledged(claimId, { status: 200, responseRaw: '{}', claimedLamports: 0n }, T0);
      expect(await store.skipRemaining(plan.id, 'nothing was claimed', T0)).toBe(1);
      expect(await store.getStep(depositId)).toMatchObject({ state: 'skipped', resolution: 'nothing was claimed' });
      expect(await status()).toBe('done');
      expect(await store.finishPlan(plan.id, T0)).toBe('done');
      expect(await store.skipRemaining(plan.id, 'again', T0)).toBe(0);
      expect(await code(() => store.finishPlan(4242, T0))).toBe('STATE_NOT_FOUND');
    });
  });

  describe('recoverInFlight', () => {
    it('turns every sending step into unknown and blocks its plan; nothing twice', async () => {
      const other = (await store.insertPlan(draft({ seq: 1 }), { dry: false, now: T0, reason: 'r' }))!;
      await store.markSending(claimId, request(), T0);
      const recovered = await store.recoverInFlight(T0 + 100);
      expect(recovered.map((s) => [s.id, s.state, s.error])).toEqual([[claimId, 'unknown', IN_FLIGHT_ERROR]]);
      expect(await status()).toBe('blocked');
      expect((await store.getPlan(other.id))!.status).toBe('open');
      expect((await store.stepAttempts(claimId))[0]).toMatchObject({ finishedAt: T0 + 100, outcome: 'unknown', error: IN_FLIGHT_ERROR });
      expect(await store.recoverInFlight(T0 + 200)).toEqual([]);
    });

    it("of one address only, when given: another wallet's sending step is left alone", async () => {
      const theirs = (await store.insertPlan(draft({ address: ADDR2 }), { dry: false, now: T0, reason: 'r' }))!;
      await store.markSending(claimId, request(), T0);
      await store.markSending(theirs.steps[0]!.id, request(), T0);
      expect((await store.recoverInFlight(T0 + 1, ADDR2)).map((s) => s.id)).toEqual([theirs.steps[0]!.id]);
      expect(await state(claimId)).toBe('sending');
      expect((await store.recoverInFlight(T0 + 2, ADDR)).map((s) => s.id)).toEqual([claimId]);
      expect(await store.recoverInFlight(T0 + 3)).toEqual([]);
    });

    it('leaves the steps in `except` alone (this process is sending them now), and writes nothing when only those are sending', async () => {
      const theirs = (await store.insertPlan(draft({ seq: 1 }), { dry: false, now: T0, reason: 'r' }))!;
      await store.markSending(claimId, request(), T0);
      expect(await store.recoverInFlight(T0 + 1, ADDR, new Set([claimId]))).toEqual([]);
      expect(await state(claimId)).toBe('sending');
      await store.markSending(theirs.steps[0]!.id, request({ ts: 1_748_779_301 }), T0);
      expect((await store.recoverInFlight(T0 + 2, ADDR, new Set([claimId]))).map((s) => s.id)).toEqual([theirs.steps[0]!.id]);
      expect(await state(claimId)).toBe('sending');
      expect((await store.recoverInFlight(T0 + 3, ADDR, new Set())).map((s) => s.id)).toEqual([claimId]);
    });
  });

  describe('claims in doubt and signed timestamps', () => {
    it('claimInDoubt: a claim of the address sending or unknown, other than the one asked about', async () => {
      expect(await store.claimInDoubt(ADDR)).toBe(false);
      await store.markSending(claimId, request(), T0);
      expect(await store.claimInDoubt(ADDR)).toBe(true);
      expect(await store.claimInDoubt(ADDR, claimId)).toBe(false);
      expect(await store.claimInDoubt(ADDR2)).toBe(false);
      await store.markUnknown(claimId, { error: 'timeout' }, T0);
      expect(await store.claimInDoubt(ADDR)).toBe(true);
      await store.reconcile(claimId, true, { note: 'applied' }, T0);
      expect(await store.claimInDoubt(ADDR)).toBe(false);
    });

    it('lastRequestTs is undefined before anything was signed, then the newest ts over every attempt, per address', async () => {
      expect(await store.lastRequestTs(ADDR)).toBeUndefined();
      await store.markSending(claimId, request({ ts: 1_748_779_300 }), T0);
      await store.markNotSent(claimId, 'connect ECONNREFUSED', T0);
      await store.markSending(claimId, request({ ts: 1_748_779_200 }), T0);
      expect(await store.lastRequestTs(ADDR)).toBe(1_748_779_300);
      const other = (await store.insertPlan(draft({ address: ADDR2 }), { dry: false, now: T0, reason: 'r' }))!;
      await store.markSending(other.steps[0]!.id, request({ ts: 1_748_779_100 }), T0);
      expect(await store.lastRequestTs(ADDR2)).toBe(1_748_779_100);
      expect(await store.lastRequestTs(ADDR)).toBe(1_748_779_300);
      expect(await store.lastRequestTs('treasury')).toBeUndefined();
    });

    it('requestTsFrom gives the distinct seconds an address signed from a second on, ascending, at most a limit', async () => {
      expect(await store.requestTsFrom(ADDR, 0, 10)).toEqual([]);
      await store.markSending(claimId, request({ ts: 1_748_779_300 }), T0);
      await store.markNotSent(claimId, 'connect ECONNREFUSED', T0);
      await store.markSending(claimId, request({ ts: 1_748_779_200 }), T0);
      await store.markNotSent(claimId, 'connect ECONNREFUSED', T0);
      await store.markSending(claimId, request({ ts: 1_748_779_300 }), T0); // the same second again: listed once
      await store.markNotSent(claimId, 'connect ECONNREFUSED', T0);
      await store.markSending(claimId, request({ ts: 1_748_779_250 }), T0);
      const other = (await store.insertPlan(draft({ address: ADDR2 }), { dry: false, now: T0, reason: 'r' }))!;
      await store.markSending(other.steps[0]!.id, request({ ts: 1_748_779_260 }), T0);
      expect(await store.requestTsFrom(ADDR, 0, 10)).toEqual([1_748_779_200, 1_748_779_250, 1_748_779_300]);
      expect(await store.requestTsFrom(ADDR, 1_748_779_250, 10)).toEqual([1_748_779_250, 1_748_779_300]);
      expect(await store.requestTsFrom(ADDR, 1_748_779_251, 10)).toEqual([1_748_779_300]);
      expect(await store.requestTsFrom(ADDR, 0, 2)).toEqual([1_748_779_200, 1_748_779_250]);
      expect(await store.requestTsFrom(ADDR2, 0, 10)).toEqual([1_748_779_260]);
      expect(await store.requestTsFrom('treasury', 0, 10)).toEqual([]);
    });
  });

  describe('writes about one request are guarded by its attempt (the claim-gap model, STATE_GUARD_ONLY)', () => {
    it("a late markNotSent of attempt 1 does not touch attempt 2's sending", async () => {
      await store.markSending(claimId, request(), T0);
      await store.markUnknown({ id: claimId, attempt: 1 }, { error: 'reset' }, T0 + 1);
      await store.reconcile({ id: claimId, attempt: 1 }, false, { note: 'not applied, window passed' }, T0 + 2);
      await store.markSending(claimId, request(), T0 + 3); // another daemon's request: attempt 2
      expect(await code(() => store.markNotSent({ id: claimId, attempt: 1 }, 'withheld', T0 + 4))).toBe('STATE_TRANSITION');
      expect(await store.getStep(claimId)).toMatchObject({ state: 'sending', attempts: 2 });
      await store.markNotSent({ id: claimId, attempt: 2 }, 'withheld', T0 + 5);
      expect(await state(claimId)).toBe('planned');
    });

    it("a late reconcile judged on attempt 1 does not settle attempt 2's unknown", async () => {
      await store.markSending(claimId, request(), T0);
      await store.markUnknown({ id: claimId, attempt: 1 }, { error: 'reset' }, T0 + 1);
      await store.reconcile({ id: claimId, attempt: 1 }, false, { note: 'not applied' }, T0 + 2);
      await store.markSending(claimId, request(), T0 + 3);
      await store.markUnknown({ id: claimId, attempt: 2 }, { error: 'reset' }, T0 + 4);
      expect(await code(() => store.reconcile({ id: claimId, attempt: 1 }, false, { note: 'stale' }, T0 + 5))).toBe('STATE_TRANSITION');
      expect(await code(() => store.holdForOperator({ id: claimId, attempt: 1 }, 'claim_undetermined: stale', T0 + 5))).toBe('STATE_TRANSITION');
      expect(await store.getStep(claimId)).toMatchObject({ state: 'unknown', attempts: 2 });
      await store.reconcile({ id: claimId, attempt: 2 }, true, { note: 'applied' }, T0 + 6);
      expect(await state(claimId)).toBe('acknowledged');
    });

    it("an operator's verdict judged on attempt 1 does not settle attempt 2's unknown (cluster review, helper 29)", async () => {
      // `actions resolve` reads the step (its request beyond the window), then writes its verdict:
      // meanwhile a daemon reconciled attempt 1 and sent attempt 2, whose answer was lost.
      await store.markSending(claimId, request(), T0);
      await store.markUnknown({ id: claimId, attempt: 1 }, { error: 'reset' }, T0 + 1);
      await store.reconcile({ id: claimId, attempt: 1 }, false, { note: 'not applied, window passed' }, T0 + 2);
      await store.markSending(claimId, request(), T0 + 3);
      await store.markUnknown({ id: claimId, attempt: 2 }, { error: 'reset' }, T0 + 4);
      expect(await code(() => store.resolve({ id: claimId, attempt: 1 }, false, 'not applied (ledger checked)', T0 + 5))).toBe('STATE_TRANSITION');
      expect(await store.getStep(claimId)).toMatchObject({ state: 'unknown', attempts: 2 });
      await store.resolve({ id: claimId, attempt: 2 }, true, 'applied (ledger checked)', T0 + 6);
      expect(await state(claimId)).toBe('acknowledged');
    });
  });

  it('scrubs registered secrets from answers, errors and notes before they are stored', async () => {
    const canary = 'sk-canary-ffffeeee0000';
    await store.close();
    store = await adapter.open({ redactor: new Redactor().add(canary) });
    await store.markSending(claimId, request(), T0);
    await store.markUnknown(claimId, { status: 500, responseRaw: `{"echo":"Bearer ${canary}"}`, error: `boom ${canary}`, requestId: canary }, T0);
    expect(await store.getStep(claimId)).toMatchObject({ responseRaw: '{"echo":"Bearer [REDACTED]"}', error: 'boom [REDACTED]', requestId: '[REDACTED]' });
    expect((await store.stepAttempts(claimId))[0]).toMatchObject({ error: 'boom [REDACTED]' });
    await store.reconcile(claimId, true, { note: `seen ${canary}` }, T0);
    expect((await store.getStep(claimId))!.resolution).toBe('seen [REDACTED]');
    expect(await code(() => store.markSending(depositId, request({ headers: { authorization: canary } }), T0))).toBe('STATE_SECRET');
  });
});

// The store's clock judges whether a signed request can still be accepted (executor.ts): with
// PostgreSQL it is the database's, the one every daemon shares, whatever the daemon's own clock
// says; with SQLite, the store's (this machine's: one machine has the state file).
describe.each(['sqlite', 'postgres'] as const)('clockNow (%s)', (name) => {
  const adapter = useAdapter(name);
  it(name === 'sqlite' ? "is the store's clock" : "is the database's clock, not the daemon's", async () => {
    const store = await adapter.open(); // its clock option says T0, years ago
    try {
      const before = Date.now();
      const now = await store.clockNow();
      if (name === 'sqlite') expect(now).toBe(T0);
      else {
        expect(Number.isInteger(now)).toBe(true);
        expect(Math.abs(now - before)).toBeLessThan(60_000);
        // clock_timestamp(), not the transaction's start: it moves within one connection's life.
        await new Promise((r) => setTimeout(r, 20));
        expect(await store.clockNow()).toBeGreaterThan(now);
      }
    } finally {
      await store.close();
    }
  });
});
