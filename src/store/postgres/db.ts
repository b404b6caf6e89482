// Connecting to PostgreSQL: the driver (node-postgres, loaded only when a PostgreSQL state is
// opened, so a SQLite install never loads it), the pool, transactions, and the mapping of every
// failure to a StateError, so callers fail closed on one error type as with SQLite.
//
// A small pg.Pool rather than one client with a queue: a transaction needs a connection of its own
// for its whole length, and with one client every read (`status`, /readyz, the poll's epoch check)
// would queue behind a poll batch or a step transition. Four connections are enough for one daemon
// (its writes are short and mostly serial) and few enough that a fleet of daemons stays far below
// max_connections.
//
// The database may fail (issue 25): every connection has an 'error' listener (pg emits one on idle
// and checked-out clients alike, and an unheard one would kill the process), every query a deadline
// on both sides (statement_timeout on the server, query_timeout on the client, for a network that
// hangs rather than refuses) and every transaction one as a whole, TCP keepalive is on, and every
// session commits durably (synchronous_commit = on, whatever postgresql.conf, ALTER DATABASE or
// ALTER ROLE say): a `sending` that a crash could forget would let a request go out unrecorded.
import type { ClientConfig, Pool, PoolClient, QueryResultRow } from 'pg';
import { AutoclaimError, StateError } from '../../errors.js';

export const POOL_MAX = 4;
/** state.query_timeout's default: a query (or a wait for a connection) with no answer by then fails. */
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;
/** The client's own timer fires this long after the server's statement_timeout, which should end the query first. */
const CLIENT_GRACE_MS = 1_000;
/** A whole transaction (several queries) is given this many query deadlines before its connection is closed under it. */
const TRANSACTION_QUERIES = 3;
/** TCP keepalive's first probe after this much silence: a half-open connection is found by the kernel too. */
const KEEPALIVE_DELAY_MS = 10_000;

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
   * Every query's deadline (state.query_timeout; default 10 s): the server ends a statement after it
   * (statement_timeout), and the client gives up a moment later whatever the network does (the
   * server's timeouts cannot help when the network between is what hangs). A transaction is given
   * three of them as a whole.
   */
  queryTimeoutMs?: number;
  application?: string;
  /** Hears every connection error (idle or checked out); without it they are dropped (the query that meets one fails). */
  onConnectionError?: (err: Error) => void;
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
  const deadline = Math.max(1, Math.trunc(opts.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS));
  const pool = new pg.Pool({
    ...config,
    max: POOL_MAX,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: deadline,
    query_timeout: deadline + CLIENT_GRACE_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
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
      `-c statement_timeout=${deadline}`,
      // Startup parameters outrank postgresql.conf, ALTER DATABASE and ALTER ROLE: a commit is
      // flushed to disk (and to a synchronous standby, if one is configured) before it answers.
      '-c synchronous_commit=on',
      // READ COMMITTED whatever default_transaction_isolation says: a transaction that takes an
      // advisory lock and then reads (the signer journal's caps, the migrations) must see what the
      // holder it waited for committed; under REPEATABLE READ its one snapshot is taken by the
      // statement that waits for the lock, before that commit (the backslash keeps the space).
      '-c default_transaction_isolation=read\\ committed',
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
  // An error on any client (the server went away, a reset, the idle-in-transaction timeout) must
  // not crash the process: the query that meets it fails, and the pool replaces the client. The
  // pool's own listener covers idle clients only; this one every client, checked out or not.
  const heard = (err: Error): void => opts.onConnectionError?.(err);
  pool.on('error', heard);
  pool.on('connect', (client) => client.on('error', heard));
  transactionDeadlines.set(pool, deadline * TRANSACTION_QUERIES);
  return pool;
}

const transactionDeadlines = new WeakMap<Pool, number>();

/**
 * When each connection's server process started, read once per connection before its first
 * transaction: with the pid it names that process, and no other, should a COMMIT's answer be lost
 * (in-doubt.ts). A pid is reused by the server, and a failover's new primary numbers its own.
 */
const backendStarts = new WeakMap<PoolClient, string>();

async function backendStart(client: PoolClient): Promise<string | undefined> {
  const known = backendStarts.get(client);
  if (known !== undefined) return known;
  const r = await client.query<{ s: string | null }>('SELECT backend_start::text AS s FROM pg_stat_activity WHERE pid = pg_backend_pid()');
  const s = r.rows[0]?.s ?? undefined;
  if (s !== undefined) backendStarts.set(client, s);
  return s;
}

/**
 * Whether an error says the database could not be reached or did not answer in time (rather than
 * refusing what was asked): no SQLSTATE at all (a socket error, a client-side deadline, the
 * connection ended), or a connection exception (08), a shutdown or restart (57P01-57P03), too many
 * connections (53300) or a statement cancelled by its deadline (57014).
 */
export function isConnectionLoss(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e !== undefined && e !== null; depth++) {
    if (!(e instanceof AutoclaimError)) {
      if (!(e instanceof Error)) return false;
      const code = (e as { code?: unknown }).code;
      if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code.startsWith('08') || /^57P0[123]$/.test(code) || code === '53300' || code === '57014';
      return true;
    }
    e = e.cause;
  }
  return false;
}

/**
 * COMMIT was sent and no answer came (the connection dropped, or its deadline passed): the
 * transaction may or may not have committed. The caller must find out by reading, never assume.
 * `backendPid` is the server process that ran it: once that process is gone, its outcome is final.
 * `backendStart` is when that process started (pg_stat_activity.backend_start, as text): a pid
 * alone may name another session after a restart or a failover to another server.
 */
export class CommitInDoubt extends Error {
  constructor(
    readonly backendPid: number | undefined,
    cause: unknown,
    readonly backendStart?: string,
  ) {
    super(`the answer to COMMIT was lost: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'CommitInDoubt';
  }
}

/**
 * BEGIN … COMMIT on a connection of its own; ROLLBACK (and the error) when `fn` throws. The whole
 * transaction has a deadline: past it the connection is closed under it (the server then rolls it
 * back), so no transaction holds a connection or a row lock for longer. A COMMIT whose answer is
 * lost throws CommitInDoubt.
 */
export async function transaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  const limit = transactionDeadlines.get(pool);
  const timer =
    limit === undefined
      ? undefined
      : setTimeout(() => {
          broken = true;
          void client.end().catch(() => undefined);
        }, limit);
  timer?.unref();
  try {
    const started = await backendStart(client);
    await client.query('BEGIN');
    try {
      const out = await fn(client);
      try {
        await client.query('COMMIT');
      } catch (err) {
        // A server that answered (a deferred constraint, a serialization failure) did not commit.
        if (!isConnectionLoss(err)) throw err;
        broken = true;
        throw new CommitInDoubt((client as unknown as { processID?: number }).processID, err, started);
      }
      return out;
    } catch (err) {
      if (err instanceof CommitInDoubt) throw err;
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true; // the connection is unusable; do not hand it back to the pool
      }
      throw err;
    }
  } finally {
    clearTimeout(timer);
    client.release(broken);
  }
}

/** How long a close waits for connections still checked out (each under its own deadline) before leaving them. */
const END_POOL_MS = 5_000;

/** pool.end(), bounded: a stop must not hang on a connection the network has black-holed. */
export async function endPool(pool: Pool): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, END_POOL_MS);
    timer.unref();
  });
  await Promise.race([pool.end().catch(() => undefined), waited]);
  clearTimeout(timer);
}
