// What readiness, `doctor` and the contract tests ask of the PostgreSQL store about itself: its
// settings in SQLite's names, whether its tables are all there, and whether a write would go
// through now. Kept apart from store.ts, whose methods are the journal's.
import type { Pool } from 'pg';
import type { StorePragmas } from '../port.js';
import type { Sql } from './db.js';
import { currentVersion, PG_SCHEMA_VERSION } from './migrations.js';

/**
 * SQLite's names, PostgreSQL's nearest equivalents: journalMode is wal_level (PostgreSQL always
 * logs ahead), synchronous 2 when synchronous_commit is on (a commit waits for its WAL flush,
 * SQLite's FULL) and 1 otherwise, foreign keys are always enforced, busyTimeoutMs is lock_timeout,
 * userVersion the schema version.
 */
export async function pragmas(c: Sql): Promise<StorePragmas> {
  const r = await c.query<{ wal: string; sync: string; lock: string; version: number | null }>(
    `SELECT current_setting('wal_level') AS wal, current_setting('synchronous_commit') AS sync,
            (SELECT setting FROM pg_settings WHERE name = 'lock_timeout') AS lock,
            (SELECT max(version) FROM autoclaim_schema) AS version`,
  );
  const row = r.rows[0];
  return {
    journalMode: row?.wal ?? 'unknown',
    synchronous: row?.sync === 'off' || row?.sync === 'local' ? 1 : 2,
    foreignKeys: true,
    busyTimeoutMs: Number(row?.lock ?? 0),
    userVersion: row?.version ?? 0,
  };
}

/**
 * PostgreSQL has no integrity_check; the nearest cheap question is whether every table of the
 * schema is there and readable and the schema version is the one this build knows: 'ok' or why not.
 */
export async function integrityCheck(c: Sql): Promise<string> {
  const problems: string[] = [];
  for (const t of ['wallet_state', 'epochs_seen', 'plans', 'steps', 'attempts', 'daemons', 'leases', 'outbox']) {
    const r = await c.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [t]);
    if (r.rows[0]?.t == null) problems.push(`table ${t} is missing`);
    else await c.query(`SELECT 1 FROM ${t} LIMIT 1`);
  }
  const v = await currentVersion(c);
  if (v !== PG_SCHEMA_VERSION) problems.push(`schema version is ${v}, not ${PG_SCHEMA_VERSION}`);
  return problems.length === 0 ? 'ok' : problems.join('\n');
}

/** A write that goes through now: a row written in a transaction that is rolled back. */
export async function probeWrite(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      await client.query("INSERT INTO epochs_seen (address, epoch, first_seen_at) VALUES ('', '', 0) ON CONFLICT DO NOTHING");
    } finally {
      await client.query('ROLLBACK');
    }
  } finally {
    client.release();
  }
}
