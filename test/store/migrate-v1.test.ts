// Opening a state file the previous release wrote (schema 1, keyed by wallet name) migrates it in
// place to schema 2, where a wallet is its address: nothing is lost, the plans version 1 let
// collide are kept under free seqs, and from then on every exactly-once key, hold and timestamp
// is the address's, whatever the wallet was called (issue 11, item 4).
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/index.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import { captureLog, type CapturedLog } from '../support/log.js';
import { draft, freshTempDir, open, stateError, summary, T0 } from './fixtures.js';
import { A, A_LAST_TS, B, C, D, E1, E2, MOVED_SEQ, rawRows, S, V1_PLANS, writeV1State } from './v1-state.js';

const tmp = freshTempDir();

function raw<T>(file: string, fn: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const userVersion = (file: string): number => raw(file, (db) => Number(db.pragma('user_version', { simple: true })));
const SCHEMA_SQL = "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name";
const schema = (file: string): unknown[] => raw(file, (db) => db.prepare(SCHEMA_SQL).all());
const TABLES = ['wallet_state', 'epochs_seen', 'plans', 'steps', 'attempts'] as const;
const dump = (file: string): Record<string, unknown[]> => Object.fromEntries(TABLES.map((t) => [t, rawRows(file, t)]));

describe.each([
  ['closed cleanly', false],
  ['killed -9, its rows only in the WAL', true],
])('a version-1 state file (%s) is migrated on open', (_label, killed) => {
  let before: Record<string, unknown[]>;
  let store: SqliteStore;
  let log: CapturedLog;
  beforeEach(() => {
    writeV1State(tmp.dbPath, { killed });
    if (killed) expect(fs.statSync(`${tmp.dbPath}-wal`).size).toBeGreaterThan(0);
    before = raw(tmp.dbPath, (db) => Object.fromEntries(TABLES.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all()])));
    expect(before.plans).toHaveLength(V1_PLANS.length);
    log = captureLog('info');
    store = open(tmp.dbPath, { logger: log.logger });
  });
  afterEach(() => {
    store.close();
  });

  it('to the current schema, whole, with foreign keys back on, and says so once', () => {
    expect(store.pragmas()).toMatchObject({ userVersion: SCHEMA_VERSION, foreignKeys: true, journalMode: 'wal' });
    expect(SCHEMA_VERSION).toBe(6);
    expect(store.integrityCheck()).toBe('ok');
    expect(log.events('state.migrated')).toEqual([
      expect.objectContaining({ from: 1, to: SCHEMA_VERSION }),
    ]);
    store.close();
    expect(raw(tmp.dbPath, (db) => db.pragma('foreign_key_check'))).toEqual([]);
    // The same tables, indexes and constraints as a state file created by this release.
    const fresh = `${tmp.dir}/fresh/autoclaim.db`;
    open(fresh).close();
    expect(schema(tmp.dbPath)).toEqual(schema(fresh));
    store = open(tmp.dbPath);
  });

  it('keeps every plan, step and attempt with its id; only the colliding plans move, to free seqs', () => {
    store.close();
    const after = dump(tmp.dbPath);
    // Schema 2 adds request_id (null for what schema 1 recorded) and renames the plan status
    // `failed` (a rejected step) to `rejected`; nothing else changes.
    const withRequestId = (rows: unknown[]) => rows.map((r) => ({ ...(r as object), request_id: null }));
    expect(after.steps).toEqual(withRequestId(before.steps as unknown[]));
    expect(after.attempts).toEqual(withRequestId(before.attempts as unknown[]));
    const expected = (before.plans as { id: number; seq: number; status: string }[]).map((p) => ({
      ...p,
      seq: MOVED_SEQ[p.id] ?? p.seq,
      status: p.status === 'failed' ? 'rejected' : p.status,
      manual_id: null,
      // Schema 3: who cancelled a queued `send` (none here).
      cancelled_at: null,
      cancelled_by: null,
      // Schema 6: no claimed amount an earlier release recorded is proved (the pending seen, for a claim answered without claimed_sol).
      claimed_proved: 0,
    }));
    expect(after.plans).toEqual(expected);
    // What moved, and that no two plans of one address now share a key.
    const keys = (after.plans as { address: string; rule: string; epoch: string; seq: number; dry: number }[]).map(
      (p) => `${p.address}/${p.rule}/${p.epoch}/${p.seq}/${p.dry}`,
    );
    expect(new Set(keys).size).toBe(keys.length);
    store = open(tmp.dbPath);
    for (const p of V1_PLANS) {
      const back = store.getPlan(p.id)!;
      const seq = MOVED_SEQ[p.id] ?? p.seq;
      const status = p.status === 'failed' ? 'rejected' : p.status;
      expect(back).toMatchObject({ wallet: p.wallet, address: p.address, rule: p.rule, epoch: p.epoch, seq, status });
      // Every stored request still decodes.
      for (const s of back.steps) expect(store.stepAttempts(s.id)).toHaveLength(p.steps[s.idx]!.sends?.length ?? 0);
    }
  });

  it('keeps one wallet_state row per address, the newest, labelled by the name it was last polled under', () => {
    expect(store.walletStates().map((w) => [w.address, w.wallet, w.lastPollAt])).toEqual([
      [A, 'new', T0 - 600_000],
      [B, 'ops', T0 - 300_000],
      [D, 'spare', T0 - 60_000],
    ]);
    expect(store.walletState(A)).toMatchObject({ pendingLamports: 0n, lifetimeLamports: 10_500_000_000n, rank: 6 });
    expect(store.walletState(B)).toMatchObject({ lastError: 'HTTP 503', lifetimeLamports: null });
    // Polling A under either name updates that one row.
    store.recordPoll('old', A, T0, { ok: true, summary: summary({ address: A }) });
    expect(store.walletStates()).toHaveLength(3);
    expect(store.walletState(A)).toMatchObject({ wallet: 'old', lastPollAt: T0 });
  });

  it('maps every epoch seen to the address, keeping the first time it was seen', () => {
    store.close();
    const seen = dump(tmp.dbPath).epochs_seen as { address: string; epoch: string; first_seen_at: number }[];
    const of = (addr: string) => seen.filter((e) => e.address === addr).map((e) => [e.epoch, e.first_seen_at]);
    expect(of(A)).toEqual([
      [E1, T0 - 30 * 3_600_000],
      [E2, T0 - 6 * 3_600_000],
    ]);
    expect(of(B)).toEqual([[E2, T0 - 5 * 3_600_000]]);
    expect(of(D)).toEqual([
      [E1, T0 - 30 * 3_600_000],
      [E2, T0 - 3 * 3_600_000],
    ]);
    store = open(tmp.dbPath);
    // Seen under `old`, polled under `new`: not a new epoch.
    expect(store.recordPoll('new', A, T0, { ok: true, summary: summary({ address: A, epoch: E1 }) })).toEqual({ newEpoch: false });
    expect(store.recordPoll('new', A, T0, { ok: true, summary: summary({ address: A, epoch: '2025-06-02' }) })).toEqual({ newEpoch: true });
  });

  it('holds the address on the unknown deposit recorded under its old name; the reassigned name does not carry it', () => {
    expect(store.hasUnknownSignedStep(A)).toBe(true);
    expect(store.hasUnknownSignedStep(C)).toBe(true);
    expect(store.hasUnknownSignedStep(D)).toBe(false);
    expect(store.hasUnknownSignedStep(B)).toBe(false);
    expect(store.unknownSteps().map((s) => s.id)).toEqual([12, 102]);
    expect(store.activePlans(A).map((p) => [p.id, p.status])).toEqual([
      [1, 'blocked'],
      [6, 'open'],
    ]);
    expect(store.openPlans(A).map((p) => p.id)).toEqual([6]);
    expect(store.activePlans(D)).toEqual([]);
  });

  it('gives lastRequestTs as the newest over both names, and none to the address a name was moved to', () => {
    expect(store.lastRequestTs(A)).toBe(A_LAST_TS);
    expect(A_LAST_TS).toBeGreaterThan(S); // signed under `old` with the clock ahead
    expect(store.lastRequestTs(B)).toBe(S - 5 * 3600 + 51);
    expect(store.lastRequestTs(C)).toBe(S - 30 * 3600 + 1);
    expect(store.lastRequestTs(D)).toBeUndefined();
  });

  it('refuses a new plan for a key already taken, under either name, and the history is the address’s', () => {
    const opts = { dry: false, now: T0, reason: 'r' };
    const at = (over: Parameters<typeof draft>[0]) => draft({ address: A, rule: 'compound', epoch: E2, ...over });
    expect(store.insertPlan(at({ wallet: 'new', seq: 0 }), opts)).toBeUndefined();
    expect(store.insertPlan(at({ wallet: 'old', seq: 0 }), opts)).toBeUndefined();
    expect(store.insertPlan(at({ wallet: 'new', seq: 1 }), opts)).toBeUndefined(); // where plan 2 moved
    expect(store.insertPlan(at({ wallet: 'new', seq: 0 }), { ...opts, dry: true })).toBeUndefined();
    expect(store.insertPlan(at({ wallet: 'new', seq: 1 }), { ...opts, dry: true })).toBeUndefined();
    expect(store.insertPlan(at({ wallet: 'new', rule: 'topup', seq: 3 }), opts)).toBeUndefined();
    // The next free seq is free; the same key for another address too.
    expect(store.insertPlan(at({ wallet: 'new', rule: 'topup', seq: 4 }), opts)?.id).toBe(12);
    expect(store.insertPlan(draft({ wallet: 'spare', address: D, epoch: E2 }), opts)).toBeDefined();

    const history = store.planHistory(A, 0);
    expect(history.map((h) => [h.id, h.rule, h.epoch, h.seq, h.dry])).toEqual([
      [1, 'compound', E2, 0, false],
      [2, 'compound', E2, 1, false],
      [3, 'topup', E2, 0, false],
      [4, 'topup', E2, 1, false],
      [5, 'topup', E2, 2, false],
      [6, 'topup', E2, 3, false],
      [7, 'compound', E2, 0, true],
      [8, 'compound', E2, 1, true],
      [11, 'compound', E1, 0, false],
      [12, 'topup', E2, 4, false],
    ]);
    expect(store.listPlans({ address: C }).map((p) => p.id)).toEqual([10]);
  });

  it('is migrated once: opening again changes nothing and logs no migration', () => {
    store.close();
    const once = { rows: dump(tmp.dbPath), schema: schema(tmp.dbPath) };
    const again = captureLog('info');
    store = open(tmp.dbPath, { logger: again.logger });
    expect(store.pragmas().userVersion).toBe(SCHEMA_VERSION);
    store.close();
    expect({ rows: dump(tmp.dbPath), schema: schema(tmp.dbPath) }).toEqual(once);
    expect(again.events('state.migrated')).toEqual([]);
    store = open(tmp.dbPath);
  });
});

describe('a version-1 state file that cannot be migrated here', () => {
  it('is not migrated by a read-only open (STATE_TOO_OLD), and is left as it was', () => {
    writeV1State(tmp.dbPath);
    const before = { rows: dump(tmp.dbPath), schema: schema(tmp.dbPath) };
    const err = stateError(() => open(tmp.dbPath, { readonly: true }));
    expect(err.code).toBe('STATE_TOO_OLD');
    expect(err.message).toContain(tmp.dbPath);
    expect(userVersion(tmp.dbPath)).toBe(1);
    expect({ rows: dump(tmp.dbPath), schema: schema(tmp.dbPath) }).toEqual(before);
  });

  it('is left whole at version 1 when the migration would leave a dangling reference (STATE_MIGRATION)', () => {
    // A step whose plan is gone: foreign_key_check must stop the commit.
    writeV1State(tmp.dbPath, {
      tamper: (db) => {
        db.exec("INSERT INTO steps (id, plan_id, idx, kind, state, created_at, updated_at) VALUES (999, 4242, 0, 'claim', 'planned', 0, 0)");
      },
    });
    const before = { rows: dump(tmp.dbPath), schema: schema(tmp.dbPath) };
    const err = stateError(() => open(tmp.dbPath));
    expect(err.code).toBe('STATE_MIGRATION');
    expect(err.message).toMatch(/1 row\(s\) refer to rows that do not exist after migrating to schema 2/);
    expect(userVersion(tmp.dbPath)).toBe(1);
    expect({ rows: dump(tmp.dbPath), schema: schema(tmp.dbPath) }).toEqual(before);
  });
});
