// Are the state files still the ones this connection opened? An open SQLite connection keeps
// writing to the inodes it opened: if the database is swapped for another file, or its `-wal` is
// deleted, under a running daemon, every later commit goes to a file nobody will ever read again,
// and after a restart the history of what was sent is gone, so it is sent again (issue 11, item 9).
//
// The same holds for the state lock (lock.ts): its lock lives on the inode that was opened, so a
// lock file deleted or replaced under a running daemon lets a second `run` lock a new one and sign
// from the same journal (issue 24, finding 7). It is watched with the files.
//
// So before and after each `sending` commit the database, its WAL and the lock are looked up by name and
// compared (device, inode) with what was opened; on any difference the step is not sent and, from
// then on, nothing is (the latch). And right after each `sending` commit the WAL is checkpointed
// into the database file, so that the record of a send never lives only in the `-wal`: deleting
// it, then kill -9, loses at most the answers, and a step found in `sending` is held as unknown.
//
// Across runs, the lock file keeps the newest attempt sent (lock.ts SendMark): a state file opened
// under the lock that does not reach it is an older copy of the journal, refused (STATE_ROLLED_BACK).
import fs from 'node:fs';
import type Database from 'better-sqlite3';
import { StateError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { realStatePath } from './files.js';
import type { SendMark } from './lock.js';

type Db = Database.Database;

interface FileId {
  dev: bigint;
  ino: bigint;
}

interface Watched {
  role: 'database' | 'WAL' | 'lock';
  path: string;
  id: FileId;
}

interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

interface StateFilesOptions {
  logger: Logger;
  /** A read-only connection records nothing, so there is nothing to guard. */
  readonly: boolean;
  /**
   * The state lock this process holds (lock.ts), checked like the files: deleted or replaced, it
   * no longer keeps a second `run` out, and two daemons signing from one journal send twice.
   */
  lock?: { path: string; file: FileId; sent?: SendMark } | undefined;
}

export class StateFiles {
  private readonly watched: readonly Watched[];
  private replaced: StateError | undefined;

  /** Call right after the database is opened (and in WAL mode): what it sees now is what it guards. */
  constructor(
    private readonly db: Db,
    private readonly file: string,
    private readonly opts: StateFilesOptions,
  ) {
    if (opts.readonly) {
      this.watched = [];
      return;
    }
    this.assertNotRolledBack();
    // In WAL mode the connection opens (or creates) the `-wal` at its first read; make sure it has.
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
    // SQLite names the WAL after the database's real path (symlinks resolved), as we do.
    const wal = `${realStatePath(file)}-wal`;
    this.watched = [
      { role: 'database', path: file, id: this.mustIdentify(file) },
      { role: 'WAL', path: wal, id: this.mustIdentify(wal) },
      ...(opts.lock === undefined ? [] : [{ role: 'lock' as const, path: opts.lock.path, id: opts.lock.file }]),
    ];
  }

  /**
   * Runs `commit` (the `sending` write) only if the files are still the ones opened, then makes
   * it durable in the database file itself and looks again. Throws STATE_REPLACED, now and on
   * every later call, once they are not: the caller treats a throw as "not recorded, not sent".
   */
  /**
   * For another process's steps — the recovery of what was left `sending` — the same rule as for
   * sending: a process whose files (or lock) are no longer the ones it opened is not the state's
   * owner any more, and turning a step another daemon is sending into `unknown` would lose its
   * answer (issue 24, finding 7).
   */
  owned<T>(write: () => T): T {
    this.verify();
    return write();
  }

  sending<T>(commit: () => T): T {
    this.verify();
    const out = commit();
    this.checkpoint();
    // A swap between the look and the commit would have sent the record to the old file.
    this.verify();
    this.markSent();
    return out;
  }

  /**
   * A state file that lacks attempts this host recorded as sent from it is an older copy of the
   * journal: on it every rule would judge its limits without the plans that moved money since, and
   * fire again (once_per_epoch, cooldowns and the day caps all forget), and a deposit left unknown
   * would be gone. Refused before anything is read or written.
   */
  private assertNotRolledBack(): void {
    const mark = this.opts.lock?.sent;
    if (mark?.high === undefined) return;
    const newest = this.newestAttempt();
    if (newest >= mark.high) return;
    throw new StateError(
      'STATE_ROLLED_BACK',
      `state database ${this.file} is older than the state this host last sent from: its newest request is #${newest}, ` +
        `and request #${mark.high} was recorded as sent (in ${this.opts.lock?.path ?? 'the lock file'}). It is a restored backup, ` +
        'a copy that lost its -wal, or another file at this path; on it autoclaim would send again what was sent. ' +
        'Put the newest state file back; to start on this one anyway (knowing that requests since it was copied may be sent again), ' +
        'remove the lock file while no autoclaim runs',
    );
  }

  /** The id of the newest attempt recorded: a sending commit adds one, nothing removes one. Asked only with a mark to keep. */
  private newestAttempt(): number {
    return this.db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM attempts').get()?.id ?? 0;
  }

  /** Raises the lock file's mark to the newest attempt; a failure only warns, as the checkpoint's. */
  private markSent(): void {
    const mark = this.opts.lock?.sent;
    if (mark === undefined) return;
    try {
      mark.record(this.newestAttempt());
    } catch (err) {
      this.opts.logger.warn(
        { event: 'state.mark_failed', file: this.opts.lock?.path, err: err instanceof Error ? err.message : String(err) },
        'could not record the newest request sent in the lock file; a restored older state file would not be noticed',
      );
    }
  }

  private verify(): void {
    if (this.replaced !== undefined) throw this.replaced;
    for (const w of this.watched) {
      const now = identify(w.path);
      if (now !== undefined && now.dev === w.id.dev && now.ino === w.id.ino) continue;
      const what =
        w.role === 'database' ? `state database ${w.path}` : w.role === 'WAL' ? `the WAL ${w.path} of state database ${this.file}` : `the lock file ${w.path} of state database ${this.file}`;
      const how = now === undefined ? 'was deleted' : 'was replaced by another file';
      // Without its lock file a second autoclaim may be running on this state: both would send.
      const lockHint = w.role === 'lock' ? ' (another autoclaim may now be running on this state: stop every one of them)' : '';
      this.replaced = new StateError(
        'STATE_REPLACED',
        `${what} ${how} while autoclaim had it open; nothing more will be sent${lockHint}: stop autoclaim, check the state file ` +
          '(`autoclaim actions`), then start it again',
      );
      this.opts.logger.error(
        { event: 'state.replaced', file: w.path, role: w.role, how: now === undefined ? 'deleted' : 'replaced' },
        this.replaced.message,
      );
      throw this.replaced;
    }
  }

  private checkpoint(): void {
    try {
      const [r] = this.db.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[];
      // A reader's snapshot can hold frames back; the next sending commit takes them along.
      if (r !== undefined && (r.busy !== 0 || r.checkpointed < r.log)) {
        this.opts.logger.debug({ event: 'state.checkpoint_partial', file: this.file, ...r }, 'WAL checkpoint left frames behind');
      }
    } catch (err) {
      // The `sending` record is committed (in the WAL) either way; failing here would make the
      // caller think it was not, so this only warns.
      this.opts.logger.warn(
        { event: 'state.checkpoint_failed', file: this.file, err: err instanceof Error ? err.message : String(err) },
        'could not checkpoint the state WAL into the database file',
      );
    }
  }

  private mustIdentify(path: string): FileId {
    const id = identify(path);
    if (id === undefined) throw new StateError('STATE_IO', `state file ${path} is missing right after opening ${this.file}`);
    return id;
  }
}

/** (device, inode) of what `path` names now, following symlinks; undefined when nothing does. */
function identify(path: string): FileId | undefined {
  let st: fs.BigIntStats;
  try {
    st = fs.statSync(path, { bigint: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new StateError('STATE_IO', `could not look at state file ${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return { dev: st.dev, ino: st.ino };
}
