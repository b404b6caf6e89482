// Connecting to PostgreSQL: the driver (node-postgres, loaded only when a PostgreSQL state is
// opened, so a SQLite install never loads it), the pool, transactions, and the mapping of every
// failure to a StateError, so callers fail closed on one error type as with SQLite.
//
// A small pg.Pool rather than one client with a queue: a transaction needs a connection of its own
// for its whole length, and with one client every read (`status`, /readyz, the poll's epoch check)
// would queue behind a poll batch or a step transition. Four connections are enough for one daemon
// (its writes are short and mostly serial) and few enough that a fleet of daemons stays far below
// max_connections.
import type { ClientConfig, Pool, PoolClient, QueryResultRow } from 'pg';
import { AutoclaimError, StateError } from '../../errors.js';

export const POOL_MAX = 4;

/** What the repos need of a connection: a pool (autocommit) or a client inside a transaction. */
export interface Sql {
  query<R extends QueryResultRow>(text: string, values?: readonly unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

export interface PgOptions {
  /** The password, read by the caller (PGPASSWORD, a file, a credential); never in the URL. */
  password?: string;
  /** Writes refused by the server itself (`status`, `actions` beside a running daemon). */
  readonly?: boolean;
  /** Lock and statement waits, ms; default 5000 (SQLite's busy timeout). */
  busyTimeoutMs?: number;
  /**
   * A query with no answer after this long fails on the client's side (the server's timeouts cannot
   * help when the network between is what hangs). Default: none. The lease manager's pool sets it,
   * so a round stuck on a silent connection fails and the next one is tried.
   */
  queryTimeoutMs?: number;
  application?: string;
}

/** The URL as shown in messages and `path`: never a password, even one put there by mistake. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '';
    for (const k of [...u.searchParams.keys()]) if (/pass/i.test(k)) u.searchParams.set(k, '***');
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/** Wraps anything that is not already one of ours as STATE_IO, keeping the cause. */
export function toStateError(err: unknown, what: string, where: string): AutoclaimError {
  if (err instanceof AutoclaimError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new StateError('STATE_IO', `state database ${where}: ${what} failed: ${detail}`, { cause: err });
}

const INT8_OID = 20;

/**
 * bigint columns (times in Unix ms, ids) come back as numbers, as the row types say; node-postgres
 * hands them out as text because a bigint may exceed 2^53. None of ours can (ms until the year
 * 287,000, ids far below), and one that did would be corrupt, so it is refused rather than rounded.
 * Lamports are numeric and stay text, decoded by codecs.ts as with SQLite.
 */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new StateError('STATE_CORRUPT', `a stored integer (${text}) is beyond 2^53`);
  return n;
}

export async function openPool(url: string, opts: PgOptions): Promise<Pool> {
  const [{ default: pg }, { parse, toClientConfig }] = await Promise.all([import('pg'), import('pg-connection-string')]);
  // libpq's meaning of sslmode (require = encrypted, verify-full = encrypted and verified), which is
  // what an operator writing a postgres:// URL expects.
  const config: ClientConfig = toClientConfig(parse(url, { useLibpqCompat: true }));
  if (opts.password !== undefined) config.password = opts.password;
  const busy = opts.busyTimeoutMs ?? 5000;
  const pool = new pg.Pool({
    ...config,
    max: POOL_MAX,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: busy,
    ...(opts.queryTimeoutMs === undefined ? {} : { query_timeout: opts.queryTimeoutMs }),
    application_name: config.application_name ?? opts.application ?? 'autoclaim',
    // Session settings as startup parameters, applied by the server before the first query (a
    // SET queued on 'connect' would run beside the caller's first query, which pg deprecates).
    // A transaction left open by a paused client (SIGSTOP, a frozen VM, a stalled event loop) is
    // ended by the server after the same time: it would otherwise hold its rows, the lease row
    // FOR SHARE among them, and keep every other daemon from taking that wallet over.
    options: [
      config.options,
      `-c lock_timeout=${Math.max(1, Math.trunc(busy))}`,
      `-c idle_in_transaction_session_timeout=${Math.max(1000, Math.trunc(busy))}`,
      opts.readonly === true ? '-c default_transaction_read_only=on' : undefined,
    ]
      .filter((o) => o !== undefined && o !== '')
      .join(' '),
    // Per pool, so another user of the driver in this process keeps its own parsers.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
        oid === INT8_OID ? parseInt8 : (pg.types.getTypeParser(oid, format) as unknown)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client's error (the server went away) must not crash the process; the next query fails.
  pool.on('error', () => undefined);
  return pool;
}

/** BEGIN … COMMIT on a connection of its own; ROLLBACK (and the error) when `fn` throws. */
export async function transaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    try {
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true; // the connection is unusable; do not hand it back to the pool
      }
      throw err;
    }
  } finally {
    client.release(broken);
  }
}
