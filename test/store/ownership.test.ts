// Issue 11: autoclaim creates its state only where no file exists, and refuses an existing file
// that is empty or not its own, naming it, without writing a byte to it.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { SCHEMA_VERSION } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { captureLog } from '../support/log.js';
import { draft, freshTempDir, open, stateError, T0 } from './fixtures.js';

const tmp = freshTempDir();
let stateDir: string;
beforeEach(() => {
  stateDir = path.dirname(tmp.dbPath);
});

/** Writes a SQLite file by hand (rollback journal, as another program would) and closes it. */
function rawDb(file: string, build: (db: Database.Database) => void): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  build(db);
  db.close();
}

/** Refused writable and read-only alike, naming the file, and the file is left byte for byte. */
function expectRefused(file: string, code: string): StateError {
  const before = fs.readFileSync(file);
  const err = stateError(() => open(file));
  expect(err.code).toBe(code);
  expect(err.message).toContain(file);
  expect(stateError(() => open(file, { readonly: true })).code).toBe(code);
  expect(fs.readFileSync(file).equals(before)).toBe(true);
  expect(fs.existsSync(`${file}-wal`)).toBe(false);
  return err;
}

describe('a state file is created only where no file exists', () => {
  it('creates it whole, logs state.created, and leaves nothing else behind', () => {
    const { logger, events } = captureLog('info');
    const store = open(tmp.dbPath, { logger });
    expect(store.pragmas().userVersion).toBe(SCHEMA_VERSION);
    store.close();
    expect(events('state.created')).toEqual([expect.objectContaining({ file: tmp.dbPath })]);
    expect(fs.readdirSync(stateDir)).toEqual(['autoclaim.db']);
    expect(fs.statSync(tmp.dbPath).mode & 0o777).toBe(0o600);
    // And it opens again as autoclaim's own, with nothing created twice.
    const again = captureLog('info');
    open(tmp.dbPath, { logger: again.logger }).close();
    expect(again.events('state.created')).toEqual([]);
  });

  it('clears what a crash in the middle of an earlier creation left, then creates', () => {
    fs.mkdirSync(stateDir, { recursive: true });
    fs.writeFileSync(`${tmp.dbPath}.creating`, 'half a database');
    fs.writeFileSync(`${tmp.dbPath}.creating-journal`, 'its journal');
    const store = open(tmp.dbPath);
    store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' });
    store.close();
    expect(fs.readdirSync(stateDir).filter((f) => f.includes('creating'))).toEqual([]);
    expect(open(tmp.dbPath).listPlans()).toHaveLength(1);
  });

  it('through a dangling symlink, creates the file it points at', () => {
    const target = path.join(tmp.dir, 'elsewhere', 'real.db');
    fs.mkdirSync(stateDir, { recursive: true });
    fs.symlinkSync(target, tmp.dbPath);
    open(tmp.dbPath).close();
    expect(fs.lstatSync(tmp.dbPath).isSymbolicLink()).toBe(true);
    expect(fs.statSync(target).size).toBeGreaterThan(0);
  });
});

describe('an existing file that is not autoclaim’s is refused, untouched', () => {
  it('an empty file (0 bytes): STATE_EMPTY', () => {
    fs.mkdirSync(stateDir, { recursive: true });
    fs.writeFileSync(tmp.dbPath, '', { mode: 0o600 });
    const err = expectRefused(tmp.dbPath, 'STATE_EMPTY');
    expect(err.message).toMatch(/empty file \(0 bytes\)/);
    expect(fs.statSync(tmp.dbPath).size).toBe(0);
  });

  it('an empty SQLite database (no tables, user_version 0): STATE_EMPTY', () => {
    rawDb(tmp.dbPath, (db) => db.exec('CREATE TABLE t (x); DROP TABLE t;'));
    expect(fs.statSync(tmp.dbPath).size).toBeGreaterThan(0);
    expect(expectRefused(tmp.dbPath, 'STATE_EMPTY').message).toMatch(/empty SQLite database/);
  });

  it('another program’s database (its tables, user_version 0): STATE_FOREIGN naming its tables', () => {
    rawDb(tmp.dbPath, (db) => db.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total TEXT); INSERT INTO invoices VALUES (1, '9.99');"));
    const err = expectRefused(tmp.dbPath, 'STATE_FOREIGN');
    expect(err.message).toContain('invoices');
    const raw = new Database(tmp.dbPath, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('delete');
    raw.close();
  });

  it('a database claiming a schema version of ours without our tables: STATE_FOREIGN, not migrated', () => {
    rawDb(tmp.dbPath, (db) => {
      db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY)');
      db.pragma('user_version = 1');
    });
    const err = expectRefused(tmp.dbPath, 'STATE_FOREIGN');
    expect(err.message).toMatch(/schema version 1 but lacks autoclaim's tables \(.*plans/);
    const raw = new Database(tmp.dbPath, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(1);
    raw.close();
  });

  it('a file of another name linked to it (a second hard link): STATE_LINKED', () => {
    open(tmp.dbPath).close();
    const other = path.join(tmp.dir, 'other.db');
    fs.linkSync(tmp.dbPath, other);
    const err = expectRefused(tmp.dbPath, 'STATE_LINKED');
    expect(err.message).toMatch(/has 2 hard links/);
    expect(stateError(() => open(other)).code).toBe('STATE_LINKED');
    fs.rmSync(other);
    open(tmp.dbPath).close();
  });
});

describe('autoclaim’s own files are still taken', () => {
  it('an older schema version with its tables is migrated', () => {
    rawDb(tmp.dbPath, (db) => {
      db.exec(MIGRATIONS[0]!);
      db.pragma('user_version = 1');
    });
    const store = open(tmp.dbPath);
    expect(store.pragmas().userVersion).toBe(SCHEMA_VERSION);
    store.close();
  });

  it('a table added beside ours by hand does not make it foreign', () => {
    open(tmp.dbPath).close();
    rawDb(tmp.dbPath, (db) => db.exec('CREATE TABLE notes (t TEXT)'));
    const store = open(tmp.dbPath);
    expect(store.integrityCheck()).toBe('ok');
    store.close();
  });
});
