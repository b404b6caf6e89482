// What readiness, `doctor` and the contract tests ask of the PostgreSQL store about itself: whether
// its tables are all there, and whether a write would go through now. Kept apart from store.ts, whose methods are the journal's.
import type { Pool } from 'pg';
import type { Sql } from './db.js';
import { currentVersion, PG_SCHEMA_VERSION } from './migrations.js';

/**
 * PostgreSQL has no integrity_check; the nearest cheap question is whether every table of the
 * schema is there and readable and the schema version is the one this build knows: 'ok' or why not.
 */
export async function integrityCheck(c: Sql): Promise<string> {
  const problems: string[] = [];
  for (const t of ['wallet_state', 'epochs_seen', 'plans', 'steps', 'attempts', 'daemons', 'leases', 'outbox', 'signed_ts']) {
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
