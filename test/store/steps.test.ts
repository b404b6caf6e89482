import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { IN_FLIGHT_ERROR, type PlanWithSteps, type SyncStore } from '../../src/store/index.js';
import { thrown } from '../support/errors.js';
import { ADDR, ADDR2, draft, open, request, T0, tempDir, type TempDir } from './fixtures.js';

let tmp: TempDir;
let store: SyncStore;
let plan: PlanWithSteps;
let claimId: number;
let depositId: number;

beforeEach(() => {
  tmp = tempDir();
  store = open(tmp.dbPath);
  plan = store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' })!;
  claimId = plan.steps[0]!.id;
  depositId = plan.steps[1]!.id;
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

const code = (fn: () => unknown): string => thrown(StateError, fn).code;

const status = () => store.getPlan(plan.id)!.status;
const state = (id: number) => store.getStep(id)!.state;

/** Claim acknowledged (10 lamports claimed), deposit amount set and sent. */
function depositSending(): void {
  store.markSending(claimId, request(), T0);
  store.markAcknowledged(claimId, { status: 200, responseRaw: '{"status":"ok"}', claimedLamports: 10n }, T0);
  store.setStepAmount(depositId, 5n, T0);
  store.markSending(depositId, request({ url: 'http://127.0.0.1:8787/v1/actions/deposit' }), T0);
}

describe('markSending (planned → sending)', () => {
  it('commits the request, counts the attempt and opens an audit row', () => {
    const req = request({ before: { epoch: '2025-06-01', pendingLamports: '1500000000', lifetimeLamports: null } });
    const step = store.markSending(claimId, req, T0 + 5);
    expect(step).toMatchObject({ state: 'sending', attempts: 1, request: req, updatedAt: T0 + 5 });
    expect(store.stepAttempts(claimId)).toEqual([
      { id: expect.any(Number) as number, stepId: claimId, n: 1, request: req, startedAt: T0 + 5, finishedAt: null, outcome: null, status: null, requestId: null, error: null },
    ]);
    expect(status()).toBe('open');
  });

  it("keeps the server's x-request-id with the step and its attempt", () => {
    store.markSending(claimId, request(), T0);
    store.markRejected(claimId, { status: 400, responseRaw: '{}', requestId: 'req-123', error: 'nothing to claim' }, T0 + 1);
    expect(store.getStep(claimId)).toMatchObject({ state: 'rejected', requestId: 'req-123' });
    expect(store.stepAttempts(claimId)).toMatchObject([{ outcome: 'rejected', status: 400, requestId: 'req-123' }]);
  });

  it('cannot happen twice', () => {
    store.markSending(claimId, request(), T0);
    expect(() => store.markSending(claimId, request(), T0)).toThrow(/is sending, not planned/);
    expect(store.getStep(claimId)!.attempts).toBe(1);
    expect(store.stepAttempts(claimId)).toHaveLength(1);
  });

  it('refuses a deposit whose amount is not known yet, then allows it once set', () => {
    store.markSending(claimId, request(), T0);
    store.markAcknowledged(claimId, { status: 200, responseRaw: '{}' }, T0);
    expect(() => store.markSending(depositId, request(), T0)).toThrow(/amount is not known yet/);
    expect(store.setStepAmount(depositId, 750_000_000n, T0).amountLamports).toBe(750_000_000n);
    expect(store.markSending(depositId, request(), T0).state).toBe('sending');
  });

  it('refuses a step of a plan that is not open (blocked on an unknown step)', () => {
    store.setStepAmount(depositId, 1n, T0);
    store.markSending(claimId, request(), T0);
    store.markUnknown(claimId, { error: 'timeout' }, T0);
    expect(() => store.markSending(depositId, request(), T0)).toThrow(new RegExp(`plan ${plan.id} is blocked`));
    expect(state(depositId)).toBe('planned');
  });

  it('refuses a step while an earlier step of its plan is unsettled', () => {
    store.setStepAmount(depositId, 1n, T0);
    expect(() => store.markSending(depositId, request(), T0)).toThrow(/step 0 of its plan is still planned/);
    store.markSending(claimId, request(), T0);
    expect(() => store.markSending(depositId, request(), T0)).toThrow(/step 0 of its plan is still sending/);
    store.markAcknowledged(claimId, { status: 200, responseRaw: '{}' }, T0);
    expect(store.markSending(depositId, request(), T0).state).toBe('sending');
  });

  it('names a step that does not exist', () => {
    expect(code(() => store.markSending(4242, request(), T0))).toBe('STATE_NOT_FOUND');
  });

  it('never stores an Authorization header or a bearer token, wherever it hides', () => {
    const sneaky = [
      request({ headers: { Authorization: 'Bearer sk-live-123456789' } }),
      request({ headers: { AUTHORIZATION: 'x' } }),
      request({ headers: { 'x-svc-auth': 'bearer sk-live-123456789' } }),
      request({ body: '{"wallet":"A","authorization":"sk-live-123456789"}' }),
      { ...request(), extra: { deep: [{ 'Proxy-Authorization': 'Basic abc' }] } },
    ];
    for (const req of sneaky) {
      expect(code(() => store.markSending(claimId, req, T0))).toBe('STATE_SECRET');
    }
    expect(store.getStep(claimId)).toMatchObject({ state: 'planned', attempts: 0, request: null });
    expect(store.stepAttempts(claimId)).toEqual([]);
  });
});

describe('leaving sending', () => {
  it('markAcknowledged records the answer, the claimed lamports on the plan, and closes the attempt', () => {
    store.markSending(claimId, request(), T0);
    const step = store.markAcknowledged(claimId, { status: 200, responseRaw: '{"claimed_sol":1.5}', claimedLamports: 1_500_000_000n }, T0 + 9);
    expect(step).toMatchObject({ state: 'acknowledged', responseStatus: 200, responseRaw: '{"claimed_sol":1.5}', error: null });
    expect(store.getPlan(plan.id)!.claimedLamports).toBe(1_500_000_000n);
    expect(store.stepAttempts(claimId)[0]).toMatchObject({ finishedAt: T0 + 9, outcome: 'acknowledged', status: 200 });
    expect(status()).toBe('open'); // the deposit is still to go
    expect(() => store.markAcknowledged(claimId, { status: 200, responseRaw: '{}' }, T0)).toThrow(/acknowledged, not sending/);
  });

  it('records claimed lamports only for a claim', () => {
    depositSending();
    store.markAcknowledged(depositId, { status: 200, responseRaw: '{}', claimedLamports: 999n }, T0);
    expect(store.getPlan(plan.id)).toMatchObject({ claimedLamports: 10n, status: 'done' });
  });

  it('markRejected rejects the plan and skips what remains', () => {
    store.markSending(claimId, request(), T0);
    const step = store.markRejected(claimId, { status: 400, responseRaw: '{"error":"bad signature"}', error: 'HTTP 400' }, T0);
    expect(step).toMatchObject({ state: 'rejected', responseStatus: 400, error: 'HTTP 400' });
    expect(store.getStep(depositId)).toMatchObject({ state: 'skipped', resolution: 'step 0 was rejected' });
    expect(status()).toBe('rejected');
    expect(store.stepAttempts(claimId)[0]).toMatchObject({ outcome: 'rejected', status: 400, error: 'HTTP 400' });
    expect(store.openPlans()).toEqual([]);
  });

  it('markUnknown blocks the plan; an unknown deposit blocks the address’s signed steps, an unknown claim does not', () => {
    store.markSending(claimId, request(), T0);
    store.markUnknown(claimId, { status: 502, error: 'HTTP 502' }, T0);
    expect(status()).toBe('blocked');
    expect(store.hasUnknownSignedStep(ADDR)).toBe(false);
    expect(store.unknownSteps().map((s) => s.id)).toEqual([claimId]);

    store.reconcile(claimId, true, { claimedLamports: 10n, note: 'pending dropped' }, T0);
    store.setStepAmount(depositId, 5n, T0);
    store.markSending(depositId, request(), T0);
    store.markUnknown(depositId, { error: 'socket hang up' }, T0);
    expect(store.hasUnknownSignedStep(ADDR)).toBe(true);
    expect(store.hasUnknownSignedStep(ADDR2)).toBe(false);
    // The hold is the address's, not the name's.
    expect(store.hasUnknownSignedStep('treasury')).toBe(false);
    expect(store.stepAttempts(depositId)[0]).toMatchObject({ outcome: 'unknown', error: 'socket hang up' });
  });

  it('the unknown-step hold follows the address: a renamed wallet keeps it, a reassigned name does not carry it', () => {
    depositSending();
    store.markUnknown(depositId, { error: 'socket hang up' }, T0);
    // The plan was recorded under 'treasury'; the wallet is renamed: the same address is still held.
    const renamed = store.insertPlan(draft({ wallet: 'renamed', seq: 1 }), { dry: false, now: T0, reason: 'r' })!;
    expect(renamed.address).toBe(ADDR);
    expect(store.hasUnknownSignedStep(ADDR)).toBe(true);
    // 'treasury' now names another address, which has nothing unknown.
    store.insertPlan(draft({ address: ADDR2 }), { dry: false, now: T0, reason: 'r' });
    expect(store.hasUnknownSignedStep(ADDR2)).toBe(false);
  });

  it('markNotSent puts the step back to planned for another attempt', () => {
    store.markSending(claimId, request({ ts: 1 }), T0);
    const back = store.markNotSent(claimId, 'connect ECONNREFUSED', T0 + 1);
    expect(back).toMatchObject({ state: 'planned', error: 'connect ECONNREFUSED', attempts: 1 });
    expect(status()).toBe('open');
    store.markSending(claimId, request({ ts: 2 }), T0 + 2);
    expect(store.getStep(claimId)).toMatchObject({ state: 'sending', attempts: 2, error: null });
    expect(store.stepAttempts(claimId).map((a) => [a.n, a.request?.ts, a.outcome])).toEqual([
      [1, 1, 'not_sent'],
      [2, 2, null],
    ]);
  });

  it('none of them apply to a step that is not sending', () => {
    const res = { status: 500, error: 'e' };
    expect(code(() => store.markAcknowledged(claimId, { status: 200, responseRaw: '' }, T0))).toBe('STATE_TRANSITION');
    expect(code(() => store.markRejected(claimId, res, T0))).toBe('STATE_TRANSITION');
    expect(code(() => store.markUnknown(claimId, res, T0))).toBe('STATE_TRANSITION');
    expect(code(() => store.markNotSent(claimId, 'e', T0))).toBe('STATE_TRANSITION');
    expect(code(() => store.markUnknown(4242, res, T0))).toBe('STATE_NOT_FOUND');
    expect(store.getStep(claimId)).toEqual(plan.steps[0]);
  });
});

describe('markRefused (planned → rejected, never sent)', () => {
  it('rejects the plan without an attempt', () => {
    const step = store.markRefused(claimId, 'above safety.max_sol_per_action', T0);
    expect(step).toMatchObject({ state: 'rejected', attempts: 0, error: 'above safety.max_sol_per_action' });
    expect(state(depositId)).toBe('skipped');
    expect(status()).toBe('rejected');
    expect(store.stepAttempts(claimId)).toEqual([]);
    expect(code(() => store.markRefused(claimId, 'again', T0))).toBe('STATE_TRANSITION');
  });
});

describe('reconcile (automatic, claims only)', () => {
  it('applied: acknowledged, with the claimed lamports on the plan', () => {
    store.markSending(claimId, request(), T0);
    store.markUnknown(claimId, { error: 'timeout' }, T0);
    const step = store.reconcile(claimId, true, { claimedLamports: 1_400_000_000n, note: 'lifetime rose' }, T0);
    expect(step).toMatchObject({ state: 'acknowledged', resolution: 'lifetime rose' });
    expect(store.getPlan(plan.id)).toMatchObject({ claimedLamports: 1_400_000_000n, status: 'open' });
  });

  it('not applied: planned again, to be sent as a new signed request', () => {
    store.markSending(claimId, request({ ts: 1 }), T0);
    store.markUnknown(claimId, { error: 'timeout' }, T0);
    expect(store.reconcile(claimId, false, { note: 'pending unchanged' }, T0)).toMatchObject({ state: 'planned' });
    expect(status()).toBe('open');
    expect(store.markSending(claimId, request({ ts: 2 }), T0)).toMatchObject({ attempts: 2, request: { ts: 2 } });
  });

  it('refuses a deposit or mint, and any step that is not unknown', () => {
    depositSending();
    store.markUnknown(depositId, { error: 'timeout' }, T0);
    expect(() => store.reconcile(depositId, false, { note: 'x' }, T0)).toThrow(/only a claim is reconciled automatically/);
    expect(code(() => store.reconcile(depositId, true, { note: 'x' }, T0))).toBe('STATE_TRANSITION');
    expect(state(depositId)).toBe('unknown');
    expect(code(() => store.reconcile(claimId, true, { note: 'x' }, T0))).toBe('STATE_TRANSITION');
  });
});

describe('resolve (the operator’s verdict)', () => {
  it('applied: acknowledged; the plan resumes or completes', () => {
    depositSending();
    store.markUnknown(depositId, { error: 'timeout' }, T0);
    const step = store.resolve(depositId, true, 'operator: applied', T0);
    expect(step).toMatchObject({ id: depositId, state: 'acknowledged', resolution: 'operator: applied' });
    expect(status()).toBe('done');
    expect(store.hasUnknownSignedStep(ADDR)).toBe(false);
  });

  it('not applied: rejected, never retried, the rest skipped', () => {
    const three = store.insertPlan(
      draft({
        seq: 1,
        steps: [
          { kind: 'deposit', symbol: 'A', amount: { kind: 'fixed', lamports: 1n } },
          { kind: 'mint', symbol: 'B', amount: { kind: 'fixed', lamports: 1n } },
        ],
      }),
      { dry: false, now: T0, reason: 'r' },
    )!;
    const [dep, mint] = three.steps;
    store.markSending(dep!.id, request(), T0);
    store.markUnknown(dep!.id, { error: 'timeout' }, T0);
    expect(store.resolve(dep!.id, false, 'operator: not applied', T0).state).toBe('rejected');
    expect(store.getStep(mint!.id)).toMatchObject({ state: 'skipped', resolution: 'step 0 was resolved as not applied' });
    expect(store.getPlan(three.id)!.status).toBe('rejected');
    expect(code(() => store.markSending(dep!.id, request(), T0))).toBe('STATE_TRANSITION');
  });

  it('only settles an unknown step that exists', () => {
    expect(code(() => store.resolve(claimId, true, 'n', T0))).toBe('STATE_TRANSITION');
    expect(code(() => store.resolve(4242, true, 'n', T0))).toBe('STATE_NOT_FOUND');
  });
});

describe('amounts, skipping and finishing', () => {
  it('setStepAmount applies to planned steps only, within u64', () => {
    expect(code(() => store.setStepAmount(depositId, -1n, T0))).toBe('STATE_INVALID');
    store.markSending(claimId, request(), T0);
    expect(code(() => store.setStepAmount(claimId, 1n, T0))).toBe('STATE_TRANSITION');
  });

  it('skipRemaining skips planned steps and settles the plan', () => {
    store.markSending(claimId, request(), T0);
    store.markAcknowledged(claimId, { status: 200, responseRaw: '{}', claimedLamports: 0n }, T0);
    expect(store.skipRemaining(plan.id, 'nothing was claimed', T0)).toBe(1);
    expect(store.getStep(depositId)).toMatchObject({ state: 'skipped', resolution: 'nothing was claimed' });
    expect(status()).toBe('done');
    expect(store.finishPlan(plan.id, T0)).toBe('done');
    expect(store.skipRemaining(plan.id, 'again', T0)).toBe(0);
    expect(code(() => store.finishPlan(4242, T0))).toBe('STATE_NOT_FOUND');
  });
});

describe('recoverInFlight', () => {
  it('turns every sending step into unknown after a crash, blocks its plan, and survives reopening', () => {
    const other = store.insertPlan(draft({ seq: 1 }), { dry: false, now: T0, reason: 'r' })!;
    store.markSending(claimId, request(), T0);
    store.close(); // the process died here: no answer was recorded

    store = open(tmp.dbPath);
    const recovered = store.recoverInFlight(T0 + 100);
    expect(recovered.map((s) => [s.id, s.state, s.error])).toEqual([[claimId, 'unknown', IN_FLIGHT_ERROR]]);
    expect(status()).toBe('blocked');
    expect(store.getPlan(other.id)!.status).toBe('open');
    expect(store.stepAttempts(claimId)[0]).toMatchObject({ finishedAt: T0 + 100, outcome: 'unknown', error: IN_FLIGHT_ERROR });
    expect(store.recoverInFlight(T0 + 200)).toEqual([]);
  });
});

describe('the guard holds across connections', () => {
  it('two stores on one file: exactly one markSending wins', () => {
    const second = open(tmp.dbPath);
    try {
      const results = [store, second].map((s) => {
        try {
          s.markSending(claimId, request(), T0);
          return 'sent';
        } catch (err) {
          return (err as StateError).code;
        }
      });
      expect(results).toEqual(['sent', 'STATE_TRANSITION']);
      expect(second.getStep(claimId)!.attempts).toBe(1);
    } finally {
      second.close();
    }
  });
});

describe('reopening', () => {
  it('keeps every plan, step and attempt exactly', () => {
    depositSending();
    store.markUnknown(depositId, { status: 504, responseRaw: 'gateway timeout', error: 'HTTP 504' }, T0);
    const before = { plan: store.getPlan(plan.id), attempts: [claimId, depositId].map((id) => store.stepAttempts(id)) };
    store.close();
    store = open(tmp.dbPath);
    expect({ plan: store.getPlan(plan.id), attempts: [claimId, depositId].map((id) => store.stepAttempts(id)) }).toEqual(before);
    expect(store.hasUnknownSignedStep(ADDR)).toBe(true);
  });
});

describe('lastRequestTs (the newest x-svc-ts an address signed)', () => {
  it('is undefined before anything was signed, then the newest ts over every attempt', () => {
    expect(store.lastRequestTs(ADDR)).toBeUndefined();
    store.markSending(claimId, request({ ts: 1_748_779_300 }), T0);
    store.markNotSent(claimId, 'connect ECONNREFUSED', T0);
    store.markSending(claimId, request({ ts: 1_748_779_200 }), T0);
    expect(store.lastRequestTs(ADDR)).toBe(1_748_779_300);
  });

  it('is one per address: shared under two names, separate for two addresses under one name', () => {
    store.markSending(claimId, request({ ts: 1_748_779_200 }), T0);
    // The same address renamed: its newer signature counts for it, whatever it is called.
    const renamed = store.insertPlan(draft({ wallet: 'renamed', seq: 1 }), { dry: false, now: T0, reason: 'r' })!;
    store.markSending(renamed.steps[0]!.id, request({ ts: 1_748_779_500 }), T0);
    expect(store.lastRequestTs(ADDR)).toBe(1_748_779_500);
    // 'treasury' pointed at another address: that address signed at its own time, and neither leaks
    // into the other.
    const other = store.insertPlan(draft({ address: ADDR2, seq: 0 }), { dry: false, now: T0, reason: 'r' })!;
    store.markSending(other.steps[0]!.id, request({ ts: 1_748_779_100 }), T0);
    expect(store.lastRequestTs(ADDR2)).toBe(1_748_779_100);
    expect(store.lastRequestTs(ADDR)).toBe(1_748_779_500);
    expect(store.lastRequestTs('treasury')).toBeUndefined();
  });
});

describe('no secret reaches the file', () => {
  it('scrubs registered secrets from answers and errors; the file never holds "authorization"', async () => {
    const { Redactor } = await import('../../src/log/redact.js');
    const fs = await import('node:fs');
    const canary = 'sk-canary-ffffeeee0000';
    store.close();
    store = open(tmp.dbPath, { redactor: new Redactor().add(canary) });
    store.markSending(claimId, request(), T0);
    store.markUnknown(claimId, { status: 500, responseRaw: `{"echo":"Bearer ${canary}"}`, error: `boom ${canary}` }, T0);
    expect(store.getStep(claimId)).toMatchObject({ responseRaw: '{"echo":"Bearer [REDACTED]"}', error: 'boom [REDACTED]' });
    expect(code(() => store.markSending(depositId, request({ headers: { authorization: canary } }), T0))).toBe('STATE_SECRET');

    const bytes = [tmp.dbPath, `${tmp.dbPath}-wal`]
      .filter((p) => fs.existsSync(p))
      .map((p) => fs.readFileSync(p).toString('latin1'))
      .join('');
    expect(bytes).toContain('x-svc-wallet'); // the headers we do keep are there
    expect(bytes).not.toContain(canary);
    expect(bytes.toLowerCase()).not.toContain('authorization');
  });
});
