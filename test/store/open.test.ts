import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { captureLog } from '../support/log.js';
import { ADDR, draft, freshTempDir, open, request, stateError, summary, T0 } from './fixtures.js';

const tmp = freshTempDir();

function mode(p: string): number {
  return fs.statSync(p).mode & 0o777;
}

describe('openStore: files and settings', () => {
  it('creates the directory 0700 and the database (and its WAL files) 0600', () => {
    const store = open(tmp.dbPath);
    store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' });
    expect(mode(path.dirname(tmp.dbPath))).toBe(0o700);
    expect(mode(tmp.dbPath)).toBe(0o600);
    expect(mode(`${tmp.dbPath}-wal`)).toBe(0o600);
    expect(mode(`${tmp.dbPath}-shm`)).toBe(0o600);
    store.close();
  });

  it('applies WAL, synchronous=FULL, foreign keys and a busy timeout', () => {
    const store = open(tmp.dbPath);
    expect(store.pragmas()).toEqual({
      journalMode: 'wal',
      synchronous: 2,
      foreignKeys: true,
      busyTimeoutMs: 5000,
      userVersion: SCHEMA_VERSION,
    });
    store.close();
  });

  it("the poll record's synchronous=NORMAL never outlives it: every other write stays FULL, a failed record too", () => {
    const store = open(tmp.dbPath, { busyTimeoutMs: 0 });
    expect(store.recordPoll('treasury', ADDR, T0, { ok: true, summary: summary() })).toEqual({ newEpoch: true });
    expect(store.pragmas().synchronous).toBe(2);
    // A poll record that fails inside its transaction (another connection holds the write lock).
    const other = new Database(tmp.dbPath);
    other.exec('BEGIN IMMEDIATE');
    expect(stateError(() => store.recordPoll('treasury', ADDR, T0 + 1, { ok: false, error: 'HTTP 503' })).code).toBe('STATE_IO');
    other.exec('ROLLBACK');
    other.close();
    expect(store.pragmas().synchronous).toBe(2);
    store.close();
  });

  it('migrates once: reopening neither re-applies nor loses anything', () => {
    const first = open(tmp.dbPath);
    const plan = first.insertPlan(draft(), { dry: false, now: T0, reason: 'fired' });
    first.close();
    const again = open(tmp.dbPath);
    expect(again.pragmas().userVersion).toBe(SCHEMA_VERSION);
    expect(again.getPlan(plan!.id)).toEqual(plan);
    again.close();
    const third = open(tmp.dbPath);
    expect(third.listPlans()).toHaveLength(1);
    expect(third.integrityCheck()).toBe('ok');
    third.close();
  });

  it('warns when an existing database is readable by others', () => {
    open(tmp.dbPath).close();
    fs.chmodSync(tmp.dbPath, 0o644);
    const log = captureLog('info');
    open(tmp.dbPath, { logger: log.logger }).close();
    expect(log.events('state.permissions')[0]?.['mode']).toBe('0644');
  });

  it('close is idempotent and a closed store fails with STATE_IO', () => {
    const store = open(tmp.dbPath);
    store.close();
    store.close();
    expect(stateError(() => store.walletStates()).code).toBe('STATE_IO');
  });
});

describe('openStore: refusing what it cannot trust', () => {
  it('refuses a database newer than this code (STATE_TOO_NEW), writable or not', () => {
    open(tmp.dbPath).close();
    const raw = new Database(tmp.dbPath);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    const err = stateError(() => open(tmp.dbPath));
    expect(err.code).toBe('STATE_TOO_NEW');
    expect(err.message).toContain(tmp.dbPath);
    expect(stateError(() => open(tmp.dbPath, { readonly: true })).code).toBe('STATE_TOO_NEW');
  });

  it('refuses a file of garbage with STATE_CORRUPT naming the file', () => {
    fs.mkdirSync(path.dirname(tmp.dbPath), { recursive: true });
    fs.writeFileSync(tmp.dbPath, Buffer.from('this is not a database, it is a shopping list. '.repeat(40)), { mode: 0o600 });
    const err = stateError(() => open(tmp.dbPath));
    expect(err.code).toBe('STATE_CORRUPT');
    expect(err.message).toContain(tmp.dbPath);
    expect((err.cause as { code?: string }).code).toBe('SQLITE_NOTADB');
    expect(stateError(() => open(tmp.dbPath, { readonly: true })).code).toBe('STATE_CORRUPT');
  });

  it('refuses a database file made read-only (0400) with STATE_READONLY', () => {
    open(tmp.dbPath).close();
    fs.chmodSync(tmp.dbPath, 0o400);
    const err = stateError(() => open(tmp.dbPath));
    expect(err.code).toBe('STATE_READONLY');
    expect(err.message).toContain('0400');
    // A reader does not need to write.
    const reader = open(tmp.dbPath, { readonly: true });
    expect(reader.walletStates()).toEqual([]);
    reader.close();
  });

  it('refuses a state path that is a directory', () => {
    fs.mkdirSync(tmp.dbPath, { recursive: true });
    expect(stateError(() => open(tmp.dbPath)).code).toBe('STATE_IO');
  });
});

describe('openStore: read-only, beside a running daemon', () => {
  it('does not create a missing database (STATE_MISSING)', () => {
    expect(stateError(() => open(tmp.dbPath, { readonly: true })).code).toBe('STATE_MISSING');
    expect(fs.existsSync(path.dirname(tmp.dbPath))).toBe(false);
  });

  it.skipIf(SCHEMA_VERSION < 2)('does not migrate an old database (STATE_TOO_OLD)', () => {
    fs.mkdirSync(path.dirname(tmp.dbPath), { recursive: true });
    const raw = new Database(tmp.dbPath);
    raw.exec(MIGRATIONS[0]!);
    raw.pragma('user_version = 1');
    raw.close();
    expect(stateError(() => open(tmp.dbPath, { readonly: true })).code).toBe('STATE_TOO_OLD');
  });

  it('sees the writer’s commits live and cannot write itself (STATE_IO)', () => {
    const writer = open(tmp.dbPath);
    const reader = open(tmp.dbPath, { readonly: true });
    const plan = writer.insertPlan(draft(), { dry: false, now: T0, reason: 'r' });
    expect(reader.getPlan(plan!.id)?.rule).toBe('compound');
    const err = stateError(() => reader.insertPlan(draft({ seq: 1 }), { dry: false, now: T0, reason: 'r' }));
    expect(err.code).toBe('STATE_IO');
    expect((err.cause as { code?: string }).code).toMatch(/^SQLITE_READONLY/);
    reader.close();
    writer.close();
  });
});

describe('fail closed: a write that cannot commit is an error, and nothing changes', () => {
  it('insertPlan and markSending throw STATE_IO while another connection holds the write lock', () => {
    const store = open(tmp.dbPath, { busyTimeoutMs: 20 });
    const plan = store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' })!;
    const claim = plan.steps[0]!;

    const other = new Database(tmp.dbPath);
    other.exec('BEGIN IMMEDIATE');
    try {
      const e1 = stateError(() => store.insertPlan(draft({ seq: 1 }), { dry: false, now: T0, reason: 'r' }));
      expect(e1.code).toBe('STATE_IO');
      expect((e1.cause as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
      const e2 = stateError(() => store.markSending(claim.id, request(), T0));
      expect(e2.code).toBe('STATE_IO');
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(store.getStep(claim.id)?.state).toBe('planned');
    expect(store.getStep(claim.id)?.attempts).toBe(0);
    expect(store.stepAttempts(claim.id)).toEqual([]);
    expect(store.listPlans()).toHaveLength(1);
    store.close();
  });
});
