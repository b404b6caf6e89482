// SPEC §7's order through the store port, the same cases for every adapter: a step is recorded
// `sending` without a signature (UNSIGNED_BODY), its signer's answer is recorded by recordSigned
// before the first byte goes out, and recovery returns a step still unsigned to planned (it was
// provably never sent) while a signed one becomes unknown as before.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redactor } from '../../src/log/redact.js';
import { IN_FLIGHT_ERROR, type PlanWithSteps } from '../../src/store/index.js';
import { UNSIGNED_ERROR } from '../../src/store/plan-status.js';
import type { Store } from '../../src/store/port.js';
import { UNSIGNED_BODY } from '../../src/store/rows.js';
import { code, useAdapter } from './contract-adapters.js';
import { draft, request, T0 } from './fixtures.js';

describe.each(['sqlite', 'postgres'] as const)('signing order (%s)', (name) => {
  const adapter = useAdapter(name);
  let store: Store;
  let plan: PlanWithSteps;
  let claimId: number;

  beforeEach(async () => {
    store = await adapter.open();
    plan = (await store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' }))!;
    claimId = plan.steps[0]!.id;
  });
  afterEach(async () => {
    await store.close();
  });

  const unsigned = () => request({ body: UNSIGNED_BODY });
  const signed = (sig = '5sig') => request({ body: `{"wallet":"Addr1111111111111111111111111111111111111111","signature":"${sig}"}` });
  const status = async () => (await store.getPlan(plan.id))!.status;

  describe('recordSigned', () => {
    it("fills in the unsigned request of the step and of its attempt; the step stays sending on the same attempt", async () => {
      await store.markSending(claimId, unsigned(), T0);
      expect((await store.stepAttempts(claimId))[0]!.request?.body).toBe(UNSIGNED_BODY);
      const step = await store.recordSigned({ id: claimId, attempt: 1 }, signed(), T0 + 1);
      expect(step).toMatchObject({ state: 'sending', attempts: 1, request: signed(), updatedAt: T0 + 1 });
      expect(await store.getStep(claimId)).toMatchObject({ state: 'sending', attempts: 1, request: signed() });
      const attempts = await store.stepAttempts(claimId);
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({ n: 1, request: signed(), finishedAt: null, outcome: null });
      expect(await status()).toBe('open');
    });

    it('is accepted once: a second signature for the same request is refused and the first kept', async () => {
      await store.markSending(claimId, unsigned(), T0);
      await store.recordSigned({ id: claimId, attempt: 1 }, signed('first'), T0 + 1);
      expect(await code(() => store.recordSigned({ id: claimId, attempt: 1 }, signed('second'), T0 + 2))).toBe('STATE_TRANSITION');
      expect((await store.getStep(claimId))!.request).toEqual(signed('first'));
      expect((await store.stepAttempts(claimId))[0]!.request).toEqual(signed('first'));
    });

    it('refuses a step that is not sending: planned, or settled', async () => {
      expect(await code(() => store.recordSigned({ id: claimId, attempt: 1 }, signed(), T0))).toBe('STATE_TRANSITION');
      await store.markSending(claimId, unsigned(), T0);
      await store.markNotSent({ id: claimId, attempt: 1 }, 'not sent: the signer refused', T0 + 1);
      expect(await code(() => store.recordSigned({ id: claimId, attempt: 1 }, signed(), T0 + 2))).toBe('STATE_TRANSITION');
      expect(await store.getStep(claimId)).toMatchObject({ state: 'planned', request: unsigned() });
      expect(await code(() => store.recordSigned({ id: 4242, attempt: 1 }, signed(), T0))).toBe('STATE_NOT_FOUND');
    });

    it("a late signer's answer for attempt 1 is never given to attempt 2", async () => {
      await store.markSending(claimId, unsigned(), T0);
      await store.markNotSent({ id: claimId, attempt: 1 }, 'not sent: the signer did not answer', T0 + 1);
      await store.markSending(claimId, unsigned(), T0 + 2);
      expect(await code(() => store.recordSigned({ id: claimId, attempt: 1 }, signed('late'), T0 + 3))).toBe('STATE_TRANSITION');
      expect(await store.getStep(claimId)).toMatchObject({ state: 'sending', attempts: 2, request: unsigned() });
      await store.recordSigned({ id: claimId, attempt: 2 }, signed('fresh'), T0 + 4);
      expect((await store.getStep(claimId))!.request).toEqual(signed('fresh'));
      const attempts = await store.stepAttempts(claimId);
      expect(attempts.map((a) => [a.n, a.request?.body])).toEqual([
        [1, UNSIGNED_BODY],
        [2, signed('fresh').body],
      ]);
    });

    it('refuses a request carrying a secret, and leaves the step unsigned', async () => {
      const canary = 'sk-canary-ffffeeee0000';
      await store.close();
      store = await adapter.open({ redactor: new Redactor().add(canary) });
      await store.markSending(claimId, unsigned(), T0);
      expect(await code(() => store.recordSigned({ id: claimId, attempt: 1 }, request({ headers: { authorization: canary } }), T0 + 1))).toBe('STATE_SECRET');
      expect(await store.getStep(claimId)).toMatchObject({ state: 'sending', request: unsigned() });
    });
  });

  describe('recovery of a step left sending', () => {
    it('unsigned: back to planned with UNSIGNED_ERROR, the attempt closed as not sent, the plan still open', async () => {
      await store.markSending(claimId, unsigned(), T0);
      const recovered = await store.recoverInFlight(T0 + 100);
      expect(recovered.map((s) => [s.id, s.state, s.error])).toEqual([[claimId, 'planned', UNSIGNED_ERROR]]);
      expect(await store.getStep(claimId)).toMatchObject({ state: 'planned', attempts: 1, error: UNSIGNED_ERROR, responseStatus: null });
      expect((await store.stepAttempts(claimId))[0]).toMatchObject({ finishedAt: T0 + 100, outcome: 'not_sent', error: UNSIGNED_ERROR });
      expect(await status()).toBe('open');
      expect(await store.claimInDoubt(plan.address)).toBe(false);
      // Nothing left to recover, and the late signature of the recovered attempt is refused.
      expect(await store.recoverInFlight(T0 + 200)).toEqual([]);
      expect(await code(() => store.recordSigned({ id: claimId, attempt: 1 }, signed(), T0 + 201))).toBe('STATE_TRANSITION');
      // Signed and sent afresh as attempt 2.
      await store.markSending(claimId, unsigned(), T0 + 300);
      await store.recordSigned({ id: claimId, attempt: 2 }, signed(), T0 + 301);
      await store.markAcknowledged({ id: claimId, attempt: 2 }, { status: 200, responseRaw: '{"status":"ok"}', claimedLamports: 10n }, T0 + 302);
      expect(await store.getStep(claimId)).toMatchObject({ state: 'acknowledged', attempts: 2 });
    });

    it('signed: unknown, as any request that may have gone out; the plan blocked', async () => {
      await store.markSending(claimId, unsigned(), T0);
      await store.recordSigned({ id: claimId, attempt: 1 }, signed(), T0 + 1);
      const recovered = await store.recoverInFlight(T0 + 100);
      expect(recovered.map((s) => [s.id, s.state, s.error])).toEqual([[claimId, 'unknown', IN_FLIGHT_ERROR]]);
      expect((await store.stepAttempts(claimId))[0]).toMatchObject({ outcome: 'unknown', error: IN_FLIGHT_ERROR });
      expect(await status()).toBe('blocked');
    });

    it('tells the two apart in one pass, each plan on its own', async () => {
      const other = (await store.insertPlan(draft({ seq: 1 }), { dry: false, now: T0, reason: 'r' }))!;
      const otherClaim = other.steps[0]!.id;
      await store.markSending(claimId, unsigned(), T0);
      await store.markSending(otherClaim, unsigned(), T0);
      await store.recordSigned({ id: otherClaim, attempt: 1 }, signed(), T0 + 1);
      const recovered = await store.recoverInFlight(T0 + 100);
      expect(recovered.map((s) => [s.id, s.state])).toEqual([
        [claimId, 'planned'],
        [otherClaim, 'unknown'],
      ]);
      expect(await status()).toBe('open');
      expect((await store.getPlan(other.id))!.status).toBe('blocked');
    });

    it('an unsigned deposit goes back to planned too, its amount kept', async () => {
      const depositId = plan.steps[1]!.id;
      await store.markSending(claimId, signed(), T0);
      await store.markAcknowledged(claimId, { status: 200, responseRaw: '{"status":"ok"}', claimedLamports: 10n }, T0);
      await store.setStepAmount(depositId, 5n, T0);
      await store.markSending(depositId, request({ url: 'http://127.0.0.1:8787/v1/actions/deposit', body: UNSIGNED_BODY }), T0);
      const recovered = await store.recoverInFlight(T0 + 100);
      expect(recovered.map((s) => [s.id, s.state, s.error])).toEqual([[depositId, 'planned', UNSIGNED_ERROR]]);
      expect(await store.getStep(depositId)).toMatchObject({ state: 'planned', amountLamports: 5n });
      expect(await status()).toBe('open');
    });
  });
});
