// The lease manager's statements, one function each, over the `daemons` and `leases` tables that the
// PostgreSQL store's migration creates. Kept apart from the manager so its state machine reads as
// decisions, and so `status` can read the same view the manager splits by.
//
// Every expiry is computed and compared with the database's now(), never a daemon's clock: daemons
// whose clocks disagree still agree on who holds what. Each statement stands alone (autocommit):
// none needs another's rows under a lock, and a statement that fails changes nothing.
import { createHash } from 'node:crypto';
import type { QueryResult, QueryResultRow } from 'pg';

/** What the manager needs of a connection: a pg Pool or Client is one. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

/** `now() + ms` as SQL, the milliseconds bound as parameter $n. */
const plusMs = (n: number): string => `now() + $${n}::double precision * interval '1 millisecond'`;

export interface DaemonIdentity {
  id: string;
  host: string;
  pid: number;
  /** A digest of the wallet list it splits (walletsDigest). */
  wallets?: string;
  /** A digest of the rules, safety and lease settings it runs (agreement.ts configDigest). */
  config?: string;
  /** The list itself: sent when its digest changed since the last heartbeat that carried it, else kept. */
  addresses?: readonly string[];
}

/** What a heartbeat answers: the database's clock in the same round trip, and whether the row lacks its list. */
export interface HeartbeatAnswer {
  /** clock_timestamp() when the statement ran, Unix ms (the clock check, clock-bound.ts). */
  dbNowMs: number;
  /** The row has no wallet list (it was recreated after a reap): send it at the next heartbeat. */
  listMissing: boolean;
  /** The shared schema's version now (schema-watch.ts): a newer autoclaim may have migrated it since this one started. */
  schemaVersion: number | undefined;
}

/** A short digest of a wallet list, the same whatever its order. */
export function walletsDigest(addresses: readonly string[]): string {
  return createHash('sha256').update([...addresses].sort().join('\n')).digest('hex').slice(0, 16);
}

/**
 * Registers this daemon or extends its row (a heartbeat); recreates it if it was reaped while paused.
 * Reads the database's clock and the schema's version in the same statement, so the clock check
 * and the schema check cost no round trip.
 */
export async function heartbeat(db: Queryable, self: DaemonIdentity, leaseMs: number): Promise<HeartbeatAnswer> {
  const r = await db.query<{ db_now: number; list_missing: boolean; schema_version: number | null }>(
    `INSERT INTO daemons (id, host, pid, started_at, heartbeat_at, expires_at, wallets, config, addresses)
     VALUES ($1, $2, $3, now(), now(), ${plusMs(4)}, $5, $6, $7)
     ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), expires_at = EXCLUDED.expires_at, wallets = EXCLUDED.wallets,
       config = EXCLUDED.config, addresses = COALESCE(EXCLUDED.addresses, daemons.addresses)
     RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS db_now, addresses IS NULL AS list_missing,
       (SELECT max(version) FROM autoclaim_schema) AS schema_version`,
    [self.id, self.host, self.pid, leaseMs, self.wallets ?? null, self.config ?? null, self.addresses === undefined ? null : [...self.addresses]],
  );
  const row = r.rows[0];
  return { dbNowMs: Number(row?.db_now), listMissing: row?.list_missing ?? true, schemaVersion: row?.schema_version ?? undefined };
}

/** The published wallet lists of these daemons (those whose digest this daemon has not seen yet). */
export async function readLists(db: Queryable, ids: readonly string[]): Promise<Map<string, { wallets: string | undefined; addresses: string[] | undefined }>> {
  if (ids.length === 0) return new Map();
  const r = await db.query<{ id: string; wallets: string | null; addresses: string[] | null }>('SELECT id, wallets, addresses FROM daemons WHERE id = ANY($1::text[])', [
    [...ids],
  ]);
  return new Map(r.rows.map((row) => [row.id, { wallets: row.wallets ?? undefined, addresses: row.addresses ?? undefined }]));
}

/** Removes this daemon's row: a clean stop, so the others rebalance without waiting for its expiry. */
export async function leave(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM daemons WHERE id = $1', [id]);
}

/** Forgets daemons that expired long ago (each start is a new id, so rows would pile up). */
export async function reap(db: Queryable, afterMs: number): Promise<void> {
  await db.query(`DELETE FROM daemons WHERE expires_at < now() - $1::double precision * interval '1 millisecond'`, [afterMs]);
}

/**
 * Extends the leases this daemon holds with exactly these tokens, and only those not yet expired:
 * a lease that lapsed may already be another's, and is lost rather than quietly taken back.
 * Returns the addresses renewed.
 */
export async function renew(db: Queryable, owner: string, held: ReadonlyArray<{ address: string; token: bigint }>, leaseMs: number): Promise<Set<string>> {
  if (held.length === 0) return new Set();
  const r = await db.query<{ address: string }>(
    `UPDATE leases AS l SET expires_at = ${plusMs(2)}
     FROM unnest($3::text[], $4::bigint[]) AS h(address, token)
     WHERE l.address = h.address AND l.owner = $1 AND l.token = h.token AND l.expires_at > now()
     RETURNING l.address`,
    [owner, leaseMs, held.map((h) => h.address), held.map((h) => h.token.toString())],
  );
  return new Set(r.rows.map((row) => row.address));
}

export interface LeaseRow {
  address: string;
  /** Undefined when the lease is free (released, or never taken). */
  owner: string | undefined;
  token: bigint;
  /** The lease has not expired by the database's clock. */
  valid: boolean;
  /** When it expires (or expired), by the database's clock; Unix ms. */
  expiresAt: number;
}

export interface DaemonRow {
  id: string;
  host: string;
  pid: number;
  startedAt: number;
  heartbeatAt: number;
  expiresAt: number;
  /** Its row has not expired by the database's clock. */
  live: boolean;
  /** The digest of the wallet list it splits; undefined for a daemon that did not say. */
  wallets: string | undefined;
  /** The digest of its rules, safety and lease settings; undefined for a daemon that did not say. */
  config: string | undefined;
}

/** Who is in the cluster and who holds what, as the database sees it now. */
export interface ClusterView {
  daemons: DaemonRow[];
  leases: LeaseRow[];
}

/**
 * The cluster as one statement sees it (one snapshot, one now()), so the live daemons and the
 * leases agree with each other. Also what `status` shows: each wallet's owner and expiry.
 */
export async function readCluster(db: Queryable): Promise<ClusterView> {
  const r = await db.query<{ daemons: RawDaemon[] | null; leases: RawLease[] | null }>(
    `SELECT
       (SELECT json_agg(json_build_object(
          'id', id, 'host', host, 'pid', pid,
          'started_at', (extract(epoch FROM started_at) * 1000)::float8,
          'heartbeat_at', (extract(epoch FROM heartbeat_at) * 1000)::float8,
          'expires_at', (extract(epoch FROM expires_at) * 1000)::float8,
          'live', expires_at > now(), 'wallets', wallets, 'config', config) ORDER BY id) FROM daemons) AS daemons,
       (SELECT json_agg(json_build_object(
          'address', address, 'owner', owner, 'token', token::text,
          'expires_at', (extract(epoch FROM expires_at) * 1000)::float8,
          'valid', owner IS NOT NULL AND expires_at > now()) ORDER BY address) FROM leases) AS leases`,
  );
  const row = r.rows[0];
  return {
    daemons: (row?.daemons ?? []).map((d) => ({
      id: d.id,
      host: d.host,
      pid: d.pid,
      startedAt: d.started_at,
      heartbeatAt: d.heartbeat_at,
      expiresAt: d.expires_at,
      live: d.live,
      wallets: d.wallets ?? undefined,
      config: d.config ?? undefined,
    })),
    leases: (row?.leases ?? []).map((l) => ({
      address: l.address,
      owner: l.owner ?? undefined,
      token: BigInt(l.token),
      valid: l.valid,
      expiresAt: l.expires_at,
    })),
  };
}

interface RawDaemon {
  id: string;
  host: string;
  pid: number;
  started_at: number;
  heartbeat_at: number;
  expires_at: number;
  live: boolean;
  wallets: string | null;
  config: string | null;
}

interface RawLease {
  address: string;
  owner: string | null;
  token: string;
  expires_at: number;
  valid: boolean;
}

export interface Acquired {
  address: string;
  token: bigint;
  /** Who held it before (an expired holder, or this daemon itself); undefined when it was free. */
  previousOwner: string | undefined;
}

/**
 * Takes those of `addresses` that are free, expired, or already this daemon's, each with its token
 * raised by one, so every write the previous holder might still attempt is fenced out. Rows are
 * locked in address order, so two daemons acquiring at once wait for each other, never deadlock;
 * a row another daemon took meanwhile is re-checked after the wait and skipped.
 */
export async function acquire(db: Queryable, owner: string, addresses: readonly string[], leaseMs: number): Promise<Acquired[]> {
  if (addresses.length === 0) return [];
  // A wallet never seen gets a free row first (its own statement: an UPDATE does not see rows
  // inserted by the same statement).
  await db.query(
    `INSERT INTO leases (address, owner, token, expires_at)
     SELECT a, NULL, 0, now() FROM unnest($1::text[]) AS a
     ON CONFLICT (address) DO NOTHING`,
    [addresses],
  );
  const r = await db.query<{ address: string; token: string; previous_owner: string | null }>(
    `WITH prev AS (
       SELECT address, owner FROM leases
       WHERE address = ANY($1::text[]) AND (owner IS NULL OR expires_at <= now() OR owner = $2)
       ORDER BY address
       FOR UPDATE
     )
     UPDATE leases AS l SET owner = $2, token = l.token + 1, expires_at = ${plusMs(3)}
     FROM prev WHERE l.address = prev.address
     RETURNING l.address, l.token::text AS token, prev.owner AS previous_owner`,
    [addresses, owner, leaseMs],
  );
  return r.rows.map((row) => ({ address: row.address, token: BigInt(row.token), previousOwner: row.previous_owner ?? undefined }));
}

/**
 * Hands leases back at once (expired now, no owner), so the next daemon to look may take them;
 * all of this daemon's when `addresses` is omitted. Returns the addresses handed back.
 */
export async function release(db: Queryable, owner: string, addresses?: readonly string[]): Promise<string[]> {
  if (addresses !== undefined && addresses.length === 0) return [];
  const r =
    addresses === undefined
      ? await db.query<{ address: string }>(`UPDATE leases SET owner = NULL, expires_at = now() WHERE owner = $1 RETURNING address`, [owner])
      : await db.query<{ address: string }>(
          `UPDATE leases SET owner = NULL, expires_at = now() WHERE owner = $1 AND address = ANY($2::text[]) RETURNING address`,
          [owner, addresses],
        );
  return r.rows.map((row) => row.address);
}
