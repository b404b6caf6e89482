// One daemon per state file (SPEC §2). The lock is an exclusive SQLite file lock held on
// `<db>.lock` for the life of a connection opened with locking_mode=EXCLUSIVE: the kernel drops it
// when the process dies, even by SIGKILL, so there is never a stale lock to break by hand. The
// holder is described in `<db>.lock.json`, because the loser cannot read a file locked against it.
// The state database itself is not locked: `status` and `actions` open it beside a running daemon.
// The lock is taken on the file's real path, so a symlink or another spelling of `state.path`
// (`./var/../var/a.db`) meets the same lock. A second hard link has another real path; the store
// refuses to open a state file with more than one link (STATE_LINKED, see db.ts), which covers it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { StateError } from '../../errors.js';
import { ensureDir, ensureFile, realStatePath, writeFileAtomic } from './files.js';

interface LockHolder {
  pid: number;
  host: string;
  /** ISO time the lock was taken. */
  startedAt: string;
  /** The state file's real path, whatever spelling the holder was given. */
  db: string;
}

/**
 * What this host has sent from the state file, kept beside it in the lock file (which outlives
 * every run): the highest `attempts` id whose `sending` was committed. A state file whose newest
 * attempt is below it is an older copy (a backup restored, a `-wal` lost after a crash) or another
 * file at its path: it does not know of requests that went out, and would plan and send them again.
 * The store refuses to open it (STATE_ROLLED_BACK, identity.ts).
 */
export interface SendMark {
  /** Undefined when nothing was recorded (never sent from, or a lock file from an older release). */
  readonly high: number | undefined;
  /** Raises the mark to `attemptId` (never lowers it); durable when it returns. */
  record(attemptId: number): void;
}

export interface Lock {
  /** The lock file (`<db>.lock`). */
  readonly path: string;
  /**
   * The lock file's (device, inode) when it was taken. The kernel's lock is on that inode: if the
   * name comes to point elsewhere (deleted, replaced), a second autoclaim can take "the" lock while
   * this one still runs, so the store compares it before each `sending` commit (identity.ts).
   */
  readonly file: { dev: bigint; ino: bigint };
  readonly holder: LockHolder;
  readonly sent: SendMark;
  /** Gives the lock up; idempotent. Dying does the same. */
  release(): void;
}

/** The lock files of the state file `dbPath`, beside its real path. */
export function lockPaths(dbPath: string): { lock: string; info: string } {
  return lockPathsOf(realStatePath(dbPath));
}

function lockPathsOf(real: string): { lock: string; info: string } {
  return { lock: `${real}.lock`, info: `${real}.lock.json` };
}

export function acquireLock(dbPath: string, opts: { now?: () => number } = {}): Lock {
  let real: string;
  try {
    // The directory first, so that its own symlinks (if any) are there to be resolved.
    ensureDir(path.dirname(dbPath));
    real = realStatePath(dbPath);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new StateError('STATE_IO', `could not resolve the state path ${dbPath}: ${detail}`, { cause: err });
  }
  const paths = lockPathsOf(real);
  const holder: LockHolder = {
    pid: process.pid,
    host: os.hostname(),
    startedAt: new Date((opts.now ?? Date.now)()).toISOString(),
    db: real,
  };
  let conn: Database.Database | undefined;
  let file: Lock['file'];
  let sent: SendMark;
  try {
    ensureFile(paths.lock);
    // timeout 0: a held lock is an answer, not something to wait for.
    conn = new Database(paths.lock, { timeout: 0 });
    conn.pragma('locking_mode = EXCLUSIVE');
    conn.pragma('synchronous = FULL');
    // The first write in exclusive locking mode takes the EXCLUSIVE lock and keeps it until close.
    conn.exec('BEGIN EXCLUSIVE');
    conn.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER, host TEXT, started_at TEXT)');
    conn.exec('DELETE FROM holder');
    conn.prepare('INSERT INTO holder (pid, host, started_at) VALUES (?, ?, ?)').run(holder.pid, holder.host, holder.startedAt);
    sent = sendMarkIn(conn);
    conn.exec('COMMIT');
    writeFileAtomic(paths.info, `${JSON.stringify(holder)}\n`);
    const st = fs.statSync(paths.lock, { bigint: true });
    file = { dev: st.dev, ino: st.ino };
  } catch (err) {
    conn?.close();
    if (isBusy(err)) {
      throw new StateError(
        'STATE_LOCKED',
        `state ${dbPath}${real === dbPath ? '' : ` (${real})`} is in use by another autoclaim (${describeHolder(paths.info)}); lock file ${paths.lock}`,
        { cause: err },
      );
    }
    const detail = err instanceof Error ? err.message : String(err);
    throw new StateError('STATE_IO', `could not take the lock ${paths.lock}: ${detail}`, { cause: err });
  }

  const held = conn;
  let released = false;
  return {
    path: paths.lock,
    file,
    holder,
    sent,
    release() {
      if (released) return;
      released = true;
      // While we still hold the lock nobody else can have rewritten the sidecar: it is ours to remove.
      fs.rmSync(paths.info, { force: true });
      held.close();
    },
  };
}

/**
 * The send mark kept in an open SQLite file: the lock file's, and the signer journal's mark file
 * (signer/journal.ts), which counts signatures instead of requests. `record` is as durable as the
 * file's own settings make it: the lock file keeps SQLite's default (synchronous FULL, durable on
 * return); the signer's mark file chooses WAL with NORMAL (openMark says why).
 */
export function sendMarkIn(conn: Database.Database): SendMark {
  conn.exec('CREATE TABLE IF NOT EXISTS sent (id INTEGER PRIMARY KEY CHECK (id = 1), high INTEGER NOT NULL)');
  const high = (conn.prepare('SELECT high FROM sent WHERE id = 1').get() as { high: number } | undefined)?.high;
  const raise = conn.prepare<[number]>('INSERT INTO sent (id, high) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET high = max(high, excluded.high)');
  return {
    high,
    record(id) {
      raise.run(id);
    },
  };
}

function isBusy(err: unknown): boolean {
  return err instanceof Database.SqliteError && (err.code.startsWith('SQLITE_BUSY') || err.code.startsWith('SQLITE_LOCKED'));
}

function describeHolder(infoPath: string): string {
  let text: string;
  try {
    text = fs.readFileSync(infoPath, 'utf8');
  } catch {
    return 'holder unknown';
  }
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    return `pid ${String(h.pid)} on ${String(h.host)}, started ${String(h.startedAt)}`;
  } catch {
    return 'holder unknown';
  }
}
