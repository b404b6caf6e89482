// Is an existing file at `state.path` autoclaim's state? An empty file, an empty database or some
// other program's database in its place means the history of what was sent is not here: opening
// it as if it were would plan, and send, everything a second time. So autoclaim creates a state
// file only where no file exists (db.ts), and refuses anything else that is not its own, naming it.
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { StateError } from '../../errors.js';
import { MIGRATIONS } from './migrations.js';

type Db = Database.Database;

const ADVICE = 'autoclaim creates its state file only where no file exists; point state.path at the right file, or move this one away to start afresh';

/**
 * Checks what can be seen without SQLite: a file of zero bytes (autoclaim never leaves one, see
 * db.ts), and a file with a second hard link, which would give the same data a second `-wal`
 * and a second lock (SQLite places both by name), so two daemons could share it unseen.
 */
export function assertStateFile(file: string): void {
  const st = fs.statSync(file);
  if (!st.isFile()) throw new StateError('STATE_IO', `state path ${file} is not a regular file`);
  if (st.size === 0) {
    throw new StateError('STATE_EMPTY', `state database ${file} is an empty file (0 bytes), not autoclaim's state; ${ADVICE}`);
  }
  if (st.nlink > 1) {
    throw new StateError(
      'STATE_LINKED',
      `state database ${file} has ${st.nlink} hard links; autoclaim needs it to have one name (another name would get its own WAL and lock); remove the other links`,
    );
  }
}

/**
 * Checks, before anything is written to it, that an open database is one autoclaim made: a
 * user_version it knows with at least the tables that version has (`ours`, from ourTables()).
 * A newer version is left to the migration step, which refuses it (STATE_TOO_NEW).
 */
export function assertOurs(db: Db, file: string, ours: readonly (readonly string[])[]): void {
  const version = Number(db.pragma('user_version', { simple: true }));
  const tables = tableNames(db);
  if (version === 0) {
    if (tables.length === 0) {
      throw new StateError('STATE_EMPTY', `state database ${file} is an empty SQLite database, not autoclaim's state; ${ADVICE}`);
    }
    throw new StateError(
      'STATE_FOREIGN',
      `state database ${file} is a SQLite database autoclaim did not write (tables: ${list(tables)}); ${ADVICE}`,
    );
  }
  const expected = ours[version];
  if (expected === undefined) return;
  const have = new Set(tables);
  const missing = expected.filter((t) => !have.has(t));
  if (missing.length > 0) {
    throw new StateError(
      'STATE_FOREIGN',
      `state database ${file} says schema version ${version} but lacks autoclaim's tables (${list(missing)}); ${ADVICE}`,
    );
  }
}

function tableNames(db: Db): string[] {
  return db
    .prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
    .all()
    .map((r) => r.name);
}

/**
 * The tables a database has at each schema version (index = user_version): the migrations
 * replayed on an empty database in memory. db.ts asks before it opens the state file, so that the
 * state file's connection is the last one opened (tests reach it that way). The migrations are a
 * constant of the build, and so is the answer: it is worked out once a process.
 */
export function ourTables(): readonly (readonly string[])[] {
  return (tablesByVersion ??= replayMigrations());
}
let tablesByVersion: readonly (readonly string[])[] | undefined;

function replayMigrations(): string[][] {
  const mem = new Database(':memory:');
  try {
    // As db.ts runs them: a migration that rebuilds a referenced table needs foreign keys off.
    mem.pragma('foreign_keys = OFF');
    const byVersion = [tableNames(mem)];
    for (const sql of MIGRATIONS) {
      mem.exec(sql);
      byVersion.push(tableNames(mem));
    }
    return byVersion;
  } finally {
    mem.close();
  }
}

function list(names: string[]): string {
  const shown = names.slice(0, 8).join(', ');
  return names.length > 8 ? `${shown}, … (${names.length} in all)` : shown;
}
