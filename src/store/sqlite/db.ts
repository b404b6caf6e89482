// Opening the state database: files and modes, pragmas, migrations, and the mapping of every
// SQLite failure to a StateError, so callers fail closed on one error type.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AutoclaimError, StateError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { ensureDir, ensureFile, FILE_MODE, realStatePath } from './files.js';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations.js';
import { assertOurs, assertStateFile, ourTables } from './ownership.js';

export type Db = Database.Database;

/** A statement of the dialect both adapters share ($n placeholders, ../step-machine.ts) as SQLite takes it. */
export interface SharedStatement {
  stmt: Database.Statement<unknown[]>;
  /** ? in order stands for these $n (0-based): the values are passed in this order. */
  order: number[];
}

export function prepareShared(db: Db, sql: string): SharedStatement {
  const order: number[] = [];
  const stmt = db.prepare<unknown[]>(sql.replace(/\$(\d+)/g, (_, n: string) => (order.push(Number(n) - 1), '?')));
  return { stmt, order };
}

/** The values of a shared statement's $1, $2, ... in the order its ? take them. */
export function sharedArgs(s: SharedStatement, args: readonly unknown[]): unknown[] {
  return s.order.map((i) => args[i]);
}

interface OpenDbOptions {
  logger: Logger;
  readonly: boolean;
  busyTimeoutMs: number;
}

/** SQLite error codes that mean the file is not a usable database at all. */
const CORRUPT_CODES = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT']);

function sqliteCode(err: unknown): string | undefined {
  return err instanceof Database.SqliteError ? err.code : undefined;
}

/** Wraps anything that is not already one of ours as STATE_IO, keeping the cause. */
export function toStateError(err: unknown, what: string, file: string): AutoclaimError {
  if (err instanceof AutoclaimError) return err;
  const code = sqliteCode(err);
  const detail = err instanceof Error ? err.message : String(err);
  if (code !== undefined && (CORRUPT_CODES.has(code) || code.startsWith('SQLITE_CORRUPT'))) {
    return new StateError('STATE_CORRUPT', `state database ${file} is not a SQLite database or is corrupt (${detail})`, {
      cause: err,
    });
  }
  return new StateError('STATE_IO', `state database ${file}: ${what} failed: ${detail}`, { cause: err });
}

export function openDatabase(file: string, opts: OpenDbOptions): Db {
  let db: Db | undefined;
  try {
    if (opts.readonly) {
      if (!fs.existsSync(file)) {
        throw new StateError('STATE_MISSING', `no state database at ${file} (has autoclaim run with this state path?)`);
      }
    } else if (!createIfMissing(file, opts)) {
      prepareWritableFile(file, opts.logger);
    }
    assertStateFile(file);
    const ours = ourTables();
    db = new Database(file, { readonly: opts.readonly, fileMustExist: true, timeout: opts.busyTimeoutMs });
    // Before anything is written: WAL mode and migrations would change someone else's file.
    assertOurs(db, file, ours);
    configure(db, opts);
    migrate(db, file, opts);
    return db;
  } catch (err) {
    db?.close();
    throw toStateError(err, 'open', file);
  }
}

/**
 * Creates the state database where no file is, whole or not at all: it is built under a temporary
 * name and renamed into place, so a crash half-way never leaves at `state.path` an empty or
 * half-made file, which every later start would have to refuse (STATE_EMPTY). Returns false when
 * a file is already there.
 */
function createIfMissing(file: string, opts: OpenDbOptions): boolean {
  if (fs.existsSync(file)) return false;
  // A dangling symlink is created at its target, as SQLite would.
  const real = realStatePath(file);
  const tmp = `${real}.creating`;
  const leftovers = [tmp, `${tmp}-journal`, `${tmp}-wal`, `${tmp}-shm`];
  ensureDir(path.dirname(real));
  // Left by a crash during an earlier creation; creation runs under the single-instance lock.
  for (const p of leftovers) fs.rmSync(p, { force: true });
  try {
    ensureFile(tmp);
    const db = new Database(tmp, { fileMustExist: true, timeout: opts.busyTimeoutMs });
    try {
      configure(db, opts);
      migrate(db, file, opts);
    } finally {
      // The last connection to close checkpoints the WAL into the file and removes it.
      db.close();
    }
    if (fs.existsSync(`${tmp}-wal`)) throw new StateError('STATE_IO', `could not finish creating ${tmp}: its WAL was left behind`);
    if (fs.existsSync(file)) throw new StateError('STATE_IO', `state database ${file} appeared while autoclaim was creating it`);
  } catch (err) {
    for (const p of leftovers) fs.rmSync(p, { force: true });
    throw err;
  }
  fs.renameSync(tmp, real);
  syncDir(path.dirname(real));
  opts.logger.info({ event: 'state.created', file }, 'state database created');
  return true;
}

function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function prepareWritableFile(file: string, logger: Logger): void {
  const st = fs.statSync(file);
  if (!st.isFile()) throw new StateError('STATE_IO', `state path ${file} is not a regular file`);
  // Root writes through any mode, so SQLite alone would not notice; the owner's write bit says
  // whether whoever set up this file meant it to be written.
  const mode = st.mode & 0o777;
  if ((mode & 0o200) === 0 || !writable(file)) {
    throw new StateError(
      'STATE_READONLY',
      `state database ${file} is read-only (mode 0${mode.toString(8)}); autoclaim must be able to write it`,
    );
  }
  if ((mode & 0o077) !== 0) {
    logger.warn(
      { event: 'state.permissions', file, mode: `0${mode.toString(8)}`, expected: `0${FILE_MODE.toString(8)}` },
      'state database is readable by group or others',
    );
  }
}

function writable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Negative: in KiB (SQLite's convention for cache_size). */
export const CACHE_SIZE_KIB = -2000;

/**
 * What the WAL is cut back to when SQLite starts it over (journal_size_limit). The WAL is reused
 * from its start after each checkpoint that caught up, but its file keeps the largest size it ever
 * had: a reader holding a snapshot for an hour (an operator's `sqlite3` session left in a
 * transaction, a backup tool) keeps every commit of that hour in it — at 2,500 polls a minute,
 * gigabytes — and the disk stayed spent for the file's life. Four times the WAL of SQLite's own
 * automatic checkpoint (1,000 pages of 4 KiB), so a WAL under steady load is never cut.
 */
export const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

function configure(db: Db, opts: OpenDbOptions): void {
  db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(opts.busyTimeoutMs))}`);
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = FULL');
  // SQLite's own default page cache (2 MiB); better-sqlite3 raises it to 16 MiB, and a daemon
  // writing a row per wallet filled it, memory held for pages that are in the OS page cache
  // anyway, a read away.
  db.pragma(`cache_size = ${CACHE_SIZE_KIB}`);
  if (opts.readonly) return;
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  const mode = db.pragma('journal_mode = WAL', { simple: true });
  if (mode !== 'wal') throw new StateError('STATE_IO', `could not switch the state database to WAL (got ${String(mode)})`);
}

/**
 * Whether a writable open of `file` would migrate it: a state file of an older schema. False where
 * there is no file (one is made at this schema, at once) or it cannot be read as SQLite: the open
 * then says why. Read-only, so a file that is not ours is left as it was.
 */
export function migrationPending(file: string): boolean {
  if (!fs.existsSync(file)) return false;
  let db: Db | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    return userVersion(db) < SCHEMA_VERSION;
  } catch {
    return false;
  } finally {
    db?.close();
  }
}

function userVersion(db: Db): number {
  return Number(db.pragma('user_version', { simple: true }));
}

function migrate(db: Db, file: string, opts: OpenDbOptions): void {
  const from = userVersion(db);
  if (from > SCHEMA_VERSION) {
    throw new StateError(
      'STATE_TOO_NEW',
      `state database ${file} has schema version ${from}, newer than this autoclaim knows (${SCHEMA_VERSION}); ` +
        'run a newer autoclaim or restore an older state file',
    );
  }
  if (from === SCHEMA_VERSION) return;
  if (opts.readonly) {
    throw new StateError(
      'STATE_TOO_OLD',
      `state database ${file} has schema version ${from}; start the daemon once to migrate it to ${SCHEMA_VERSION}`,
    );
  }
  // A migration may rebuild a table that others reference (SQLite's documented 12-step way):
  // foreign keys must be off while it runs (the pragma is a no-op inside a transaction), and
  // foreign_key_check proves, before each commit, that nothing was left dangling.
  db.pragma('foreign_keys = OFF');
  let migrated = false;
  try {
    for (let v = from; v < SCHEMA_VERSION; v++) {
      const sql = MIGRATIONS[v];
      if (sql === undefined) break;
      // user_version lives in the file header, so it commits or rolls back with the migration.
      db.transaction(() => {
        // Another process (a CLI command beside the daemon) may have migrated since we looked.
        if (userVersion(db) !== v) return;
        db.exec(sql);
        const dangling = db.pragma('foreign_key_check') as unknown[];
        if (dangling.length > 0) {
          // Either the migration is wrong or the file already had rows pointing nowhere; both are
          // worth a person's look before anything is written.
          throw new StateError(
            'STATE_MIGRATION',
            `state database ${file}: ${dangling.length} row(s) refer to rows that do not exist after migrating to schema ${v + 1}; ` +
              'nothing was changed. Check it with `sqlite3 FILE "PRAGMA foreign_key_check"` and restore a backup or report it',
          );
        }
        db.pragma(`user_version = ${v + 1}`);
        migrated = true;
      }).immediate();
    }
  } finally {
    db.pragma('foreign_keys = ON');
  }
  if (migrated) opts.logger.info({ event: 'state.migrated', file, from, to: SCHEMA_VERSION }, 'state database migrated');
}
