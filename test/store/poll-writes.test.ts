// Poll records are written behind the polls (src/store/poll-writes.ts): buffered, then written in
// one transaction — by a timer, a full batch, or before anything that could read them back or be
// ordered after them. What must hold: a plan or step is never committed before the poll records
// buffered when it was written; when those cannot be written the plan is not written either (fail
// closed); a crash loses at most the records not yet written, never a plan or a step.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { PollWrites, type PollBatch, type PollTable } from '../../src/store/poll-writes.js';
import type { SyncStore } from '../../src/store/index.js';
import { buildOnce } from '../e2e/build.js';
import { REPO } from '../e2e/helpers.js';
import { ADDR, ADDR2, draft, manualTimer, open, request, summary, T0, tempDir, type TempDir } from './fixtures.js';


let tmp: TempDir;
let store: SyncStore;
let clock: ReturnType<typeof manualTimer>;
const readers: SyncStore[] = [];

/** What another connection (another process: `autoclaim status`) reads. */
function reader(): SyncStore {
  const r = open(tmp.dbPath, { readonly: true });
  readers.push(r);
  return r;
}

beforeEach(() => {
  tmp = tempDir();
  clock = manualTimer();
  store = open(tmp.dbPath, { pollWrites: { timer: clock.timer } });
});
afterEach(() => {
  for (const r of readers.splice(0)) r.close();
  store.close();
  tmp.cleanup();
});

const ok = (over: Parameters<typeof summary>[0] = {}) => ({ ok: true as const, summary: summary(over) });

describe('poll records written behind', () => {
  it('are buffered: another connection sees them once written, this store reads them at once', () => {
    store.recordPoll('a', ADDR, T0, ok());
    expect(reader().walletState(ADDR)).toBeUndefined();
    expect(store.walletState(ADDR)?.pendingLamports).toBe(1_500_000_000n);
    expect(reader().walletState(ADDR)?.pendingLamports).toBe(1_500_000_000n);
  });

  it('are written by the timer, one timer for the batch', () => {
    store.recordPoll('a', ADDR, T0, ok());
    store.recordPoll('b', ADDR2, T0, ok({ address: ADDR2 }));
    expect(clock.pending()).toBe(1);
    clock.fire();
    expect(reader().walletStates().map((w) => w.wallet)).toEqual(['a', 'b']);
    expect(clock.pending()).toBe(0);
  });

  it('are written at once when a batch is full', () => {
    store.close();
    store = open(tmp.dbPath, { pollWrites: { timer: clock.timer, maxBatch: 2 } });
    store.recordPoll('a', ADDR, T0, ok());
    expect(reader().walletStates()).toEqual([]);
    store.recordPoll('b', ADDR2, T0, ok({ address: ADDR2 }));
    expect(reader().walletStates()).toHaveLength(2);
    expect(clock.pending()).toBe(0);
  });

  it('are written before a plan is: whoever sees the plan sees the polls it was decided from', () => {
    store.recordPoll('treasury', ADDR, T0, ok());
    store.recordPoll('other', ADDR2, T0, ok({ address: ADDR2 }));
    const plan = store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' })!;
    const r = reader();
    expect(r.getPlan(plan.id)).toBeDefined();
    expect(r.walletStates().map((w) => w.address).sort()).toEqual([ADDR, ADDR2]);
  });

  it('are written before a step transition', () => {
    const plan = store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' })!;
    store.recordPoll('treasury', ADDR, T0 + 1, ok());
    store.markSending(plan.steps[0]!.id, request(), T0 + 2);
    const r = reader();
    expect(r.getStep(plan.steps[0]!.id)?.state).toBe('sending');
    expect(r.walletState(ADDR)?.lastPollAt).toBe(T0 + 1);
  });

  it('hold a plan back when they cannot be written (fail closed), and both go through once they can', () => {
    store.close();
    store = open(tmp.dbPath, { pollWrites: { timer: clock.timer }, busyTimeoutMs: 20 });
    store.recordPoll('treasury', ADDR, T0, ok());
    // Another connection holds the write lock: the poll records cannot be written.
    const other = new Database(tmp.dbPath);
    other.exec('BEGIN IMMEDIATE');
    try {
      expect(() => store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' })).toThrow(StateError);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(reader().listPlans()).toEqual([]);
    const plan = store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' });
    expect(plan).toBeDefined();
    expect(reader().walletState(ADDR)?.lastPollAt).toBe(T0);
  });

  it('keep what the timer could not write, say so, and write it at the next chance', () => {
    const lines: Array<Record<string, unknown>> = [];
    store.close();
    const logger = createLogger({ level: 'info', redactor: new Redactor(), destination: { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) } });
    store = open(tmp.dbPath, { pollWrites: { timer: clock.timer }, busyTimeoutMs: 20, logger });
    store.recordPoll('treasury', ADDR, T0, ok());
    const other = new Database(tmp.dbPath);
    other.exec('BEGIN IMMEDIATE');
    try {
      clock.fire();
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(lines.filter((l) => l.event === 'state.poll_write_failed')).toMatchObject([{ level: 'error', buffered: 1 }]);
    expect(reader().walletState(ADDR)).toBeUndefined();
    store.flushPolls();
    expect(reader().walletState(ADDR)?.lastPollAt).toBe(T0);
  });

  it('are written at close', () => {
    store.recordPoll('a', ADDR, T0, ok());
    store.close();
    expect(reader().walletState(ADDR)?.lastPollAt).toBe(T0);
    store = open(tmp.dbPath);
  });

  it('keep the latest record of an address; a failed poll after a good one keeps the good summary', () => {
    store.recordPoll('a', ADDR, T0, ok({ pendingLamports: 1n }));
    store.recordPoll('a', ADDR, T0 + 1, ok({ pendingLamports: 2n }));
    store.recordPoll('renamed', ADDR, T0 + 2, { ok: false, error: 'HTTP 503' });
    store.flushPolls();
    expect(reader().walletState(ADDR)).toMatchObject({ wallet: 'renamed', lastPollAt: T0 + 2, lastOkAt: T0 + 1, pendingLamports: 2n, lastError: 'HTTP 503' });
    store.recordPoll('renamed', ADDR, T0 + 3, { ok: false, error: 'HTTP 502' });
    store.recordPoll('renamed', ADDR, T0 + 4, ok({ pendingLamports: 3n }));
    store.flushPolls();
    expect(reader().walletState(ADDR)).toMatchObject({ lastPollAt: T0 + 4, lastOkAt: T0 + 4, pendingLamports: 3n, lastError: null });
  });

  it('say a new epoch once, whether the earlier record is buffered, written, or from an earlier process', () => {
    expect(store.recordPoll('a', ADDR, T0, ok())).toEqual({ newEpoch: true });
    expect(store.recordPoll('a', ADDR, T0 + 1, ok())).toEqual({ newEpoch: false });
    store.flushPolls();
    expect(store.recordPoll('a', ADDR, T0 + 2, ok())).toEqual({ newEpoch: false });
    store.close();
    store = open(tmp.dbPath, { pollWrites: { timer: clock.timer } });
    expect(store.recordPoll('a', ADDR, T0 + 3, ok())).toEqual({ newEpoch: false });
    expect(store.recordPoll('a', ADDR, T0 + 4, ok({ epoch: '2025-06-02' }))).toEqual({ newEpoch: true });
    expect(store.recordPoll('a', ADDR, T0 + 5, ok())).toEqual({ newEpoch: false });
    store.flushPolls();
    const db = new Database(tmp.dbPath, { readonly: true });
    try {
      expect(db.prepare('SELECT epoch, first_seen_at AS at FROM epochs_seen WHERE address = ? ORDER BY epoch').all(ADDR)).toEqual([
        { epoch: '2025-06-01', at: T0 },
        { epoch: '2025-06-02', at: T0 + 4 },
      ]);
    } finally {
      db.close();
    }
  });

  it('refuse a record the table cannot hold when it is made, not when it is written', () => {
    expect(() => store.recordPoll('a', ADDR, T0, ok({ pendingLamports: -1n }))).toThrow(StateError);
    store.recordPoll('a', ADDR, T0, ok());
    store.flushPolls();
    expect(reader().walletState(ADDR)?.pendingLamports).toBe(1_500_000_000n);
  });
});

describe('a crash (SIGKILL) with poll records buffered', () => {
  it('loses only the records not yet written: the plan, its steps and the polls before it are all there', () => {
    buildOnce();
    const script = `
      const { openStore } = await import(${JSON.stringify(join(REPO, 'dist/store/index.js'))});
      const { silentLogger } = await import(${JSON.stringify(join(REPO, 'dist/log/logger.js'))});
      const [, dbPath, addr] = process.argv;
      const s = (pending) => ({ address: addr, epoch: 'E1', pendingLamports: pending, lifetimeLamports: null, rank: null, tier: null, breakdown: [], raw: {} });
      const store = openStore(dbPath, { logger: silentLogger(), pollWrites: { timer: () => () => {} } });
      store.recordPoll('treasury', addr, 1000, { ok: true, summary: s(5n) });
      const plan = store.insertPlan({ wallet: 'treasury', address: addr, rule: 'compound', epoch: 'E1', seq: 0, steps: [{ kind: 'claim' }], estimateLamports: 5n }, { dry: false, now: 1001, reason: 'r' });
      store.markSending(plan.steps[0].id, { method: 'POST', url: 'http://x/claim', ts: 1, message: 'm', body: '{}', headers: {} }, 1002);
      store.recordPoll('treasury', addr, 2000, { ok: true, summary: s(0n) });
      process.kill(process.pid, 'SIGKILL');
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script, tmp.dbPath, ADDR], { encoding: 'utf8' });
    expect(child.signal).toBe('SIGKILL');
    const r = reader();
    const [plan] = r.listPlans();
    expect(plan?.steps.map((s) => s.state)).toEqual(['sending']);
    // The poll the plan was decided from was written before the plan; the one after it was lost.
    expect(r.walletState(ADDR)).toMatchObject({ lastPollAt: 1000, pendingLamports: 5n });
  });
});

describe('PollWrites against a table that fails', () => {
  it('a failed epoch read leaves nothing believed: the next poll asks again', () => {
    let failRead = true;
    const writes: PollBatch[] = [];
    const table: PollTable = {
      okRow: (wallet, address, at, s) => ({ wallet, address, at, epoch: s.epoch, pending: '0', lifetime: null, rank: null, tier: null, raw: null }),
      failedRow: (wallet, address, at, error) => ({ wallet, address, at, error }),
      epochSeen: () => {
        if (failRead) throw new Error('disk I/O error');
        return false;
      },
      write: (batch) => writes.push(batch),
    };
    const polls = new PollWrites(table, { timer: manualTimer().timer });
    expect(() => polls.record('a', ADDR, T0, ok())).toThrow('disk I/O error');
    expect(polls.buffered).toBe(0);
    failRead = false;
    expect(polls.record('a', ADDR, T0 + 1, ok())).toEqual({ newEpoch: true });
    polls.flush();
    expect(writes).toEqual([{ epochs: [{ address: ADDR, epoch: '2025-06-01', at: T0 + 1 }], ok: [expect.objectContaining({ at: T0 + 1 })], failed: [] }]);
  });
});
