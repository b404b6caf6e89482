// SQLite-only step cases: what survives a reopening of the file, two connections on one file, and
// the bytes of the file itself. Every transition and its errors are in contract-steps.test.ts, for
// every adapter.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { IN_FLIGHT_ERROR, type PlanWithSteps, type SyncStore } from '../../src/store/index.js';
import { thrown } from '../support/errors.js';
import { ADDR, draft, open, request, T0, tempDir, type TempDir } from './fixtures.js';

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

/** Claim acknowledged (10 lamports claimed), deposit amount set and sent. */
function depositSending(): void {
  store.markSending(claimId, request(), T0);
  store.markAcknowledged(claimId, { status: 200, responseRaw: '{"status":"ok"}', claimedLamports: 10n }, T0);
  store.setStepAmount(depositId, 5n, T0);
  store.markSending(depositId, request({ url: 'http://127.0.0.1:8787/v1/actions/deposit' }), T0);
}

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
