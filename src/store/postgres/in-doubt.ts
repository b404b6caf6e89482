// A step write whose COMMIT went out and whose answer never came back (the connection dropped,
// the server crashed, the deadline passed): it committed or it did not, and what the caller does
// next depends on which (a `sending` that committed may be followed by the request; one that did
// not must not be). It is never assumed, whichever write it was (every transition, a recovery, a
// plan's cancel or skip: the store's one path for step writes): the server process that ran the
// transaction is waited out (terminated if it is still there: from then on its outcome cannot
// change), then the steps it wrote are read back and compared with what the transaction saw. Until that read succeeds, within its deadline,
// the write counts as failed and says its outcome is unknown; a step left `sending` by it becomes
// `unknown` at the wallet's next recovery, as after a crash.
import { isDeepStrictEqual } from 'node:util';
import type { Pool } from 'pg';
import { StateError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { StepRow } from '../rows.js';
import type { CommitInDoubt } from './db.js';
import { getStep } from './steps.js';

export interface InDoubtOptions {
  pool: Pool;
  where: string;
  logger: Logger;
  /** How long to keep trying to learn the outcome. */
  deadlineMs: number;
  /** Monotonic ms, for the deadline. */
  monotonic: () => number;
}

/**
 * Whether the stored step is the one the transaction saw before its COMMIT, every column of it. Not
 * its state, attempt and time alone: recording a signature keeps the step `sending` at the same
 * attempt, and in the millisecond of the `sending` it follows (a key in memory, a database on a
 * local socket) only the request tells a signature recorded from one rolled back — taken for
 * recorded, it was sent while the database held it unsigned, which recovery signs and sends again.
 */
function isCommitted(stored: StepRow | undefined, expected: StepRow): boolean {
  return stored !== undefined && isDeepStrictEqual(stored, expected);
}

/**
 * Answers when the write committed (every step in `wrote` is stored as the transaction left it);
 * throws a StateError when it did not, or when nobody can tell yet.
 */
export async function settleInDoubt(what: string, doubt: CommitInDoubt, wrote: readonly StepRow[], o: InDoubtOptions): Promise<void> {
  const ids = wrote.map((s) => s.id);
  const step = ids.length === 1 ? ids[0] : ids;
  const until = o.monotonic() + o.deadlineMs;
  let wait = 100;
  let last: unknown = doubt;
  while (o.monotonic() < until) {
    try {
      if (doubt.backendPid !== undefined && (await backendAlive(o.pool, doubt.backendPid, doubt.backendStart))) {
        last = new Error(`the server process ${doubt.backendPid} that ran it is still there`);
      } else {
        const stored = await Promise.all(wrote.map((s) => getStep(o.pool, s.id)));
        const differs = wrote.findIndex((s, i) => !isCommitted(stored[i], s));
        const committed = differs === -1;
        o.logger.warn(
          { event: 'state.commit_in_doubt', path: o.where, step, write: what, committed, state: stored.length === 1 ? stored[0]?.state : undefined },
          committed ? 'the answer to a commit was lost; read back: it committed' : 'the answer to a commit was lost; read back: it did not commit',
        );
        if (committed) return;
        const which = wrote[differs];
        throw new StateError('STATE_IO', `state database ${o.where}: ${what} of step ${which?.id} did not commit (${doubt.message}); the step is ${stored[differs]?.state ?? 'gone'}`, { cause: doubt });
      }
    } catch (err) {
      if (err instanceof StateError) throw err;
      last = err;
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(1_000, wait * 2);
  }
  o.logger.error(
    { event: 'state.commit_in_doubt', path: o.where, step, write: what, committed: null, err: last instanceof Error ? last.message : String(last) },
    'the answer to a commit was lost and the step could not be read back; it counts as not recorded, and is recovered as unknown if it did commit',
  );
  throw new StateError('STATE_IO', `state database ${o.where}: ${what} of step ${ids.join(', ')}: whether it committed is unknown (${doubt.message})`, { cause: doubt });
}

/**
 * Whether the server process is still there; one of our role's may be ended (pg_terminate_backend),
 * so its outcome is final. It is the process with this pid *and* start time: after a failover (or a
 * server restart) the pid may be another session's — another daemon's, a person's psql — which must
 * be neither waited for nor ended. Without a start time (never, for a transaction that reached its
 * COMMIT) a process is only waited for, never ended.
 */
async function backendAlive(pool: Pool, pid: number, started: string | undefined): Promise<boolean> {
  const r = await pool.query<{ alive: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND ($2::timestamptz IS NULL OR backend_start = $2::timestamptz)) AS alive',
    [pid, started ?? null],
  );
  if (r.rows[0]?.alive !== true) return false;
  if (started !== undefined) {
    await pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_start = $2::timestamptz', [pid, started]).catch(() => undefined);
  }
  return true;
}
