// SQLite-only plan cases (a reopening of the file) and the status derivation every adapter shares;
// the port's plan cases are in contract-plans.test.ts, for every adapter.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_LAMPORTS } from '../../src/amount.js';
import type { StepState } from '../../src/domain.js';
import { deriveStatus, type SyncStore } from '../../src/store/index.js';
import { ADDR, draft, freshTempDir, open, request, T0 } from './fixtures.js';

const tmp = freshTempDir();
let store: SyncStore;
beforeEach(() => {
  store = open(tmp.dbPath);
});
afterEach(() => {
  store.close();
});

describe('insertPlan', () => {
  it('carries u64::MAX lamports in and out exactly, across a reopening', () => {
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
    // What it claimed and its fixed mint besides, summed exactly past 64 bits.
    expect(store.planHistory(ADDR, 0)[0]!.lamports).toBe(MAX_LAMPORTS * 2n);
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
