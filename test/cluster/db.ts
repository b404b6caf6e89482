// A fresh PostgreSQL database per test file for the lease tests, with the `daemons` and `leases`
// tables, and one pool per "daemon" (each daemon of a cluster has its own connections). Every pool
// handed out is closed by close().
import pg from 'pg';
import { createDatabase } from '../support/postgres.js';

// The tables as the PostgreSQL store's migration creates them (src/store/postgres/); a stand-in until
// that migration lands, so these tests exercise the manager against the same columns.
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS daemons (id text primary key, host text not null, pid integer not null,
    started_at timestamptz not null, heartbeat_at timestamptz not null, expires_at timestamptz not null);
  CREATE TABLE IF NOT EXISTS leases (address text primary key, owner text null,
    token bigint not null default 0, expires_at timestamptz not null);
`;

export interface ClusterDb {
  url: string;
  /** A pool for the test's own reads and writes. */
  sql: pg.Pool;
  /** A new pool, as another daemon would have. */
  pool(): pg.Pool;
  close(): Promise<void>;
}

export async function clusterDb(): Promise<ClusterDb> {
  const url = await createDatabase();
  const pools: pg.Pool[] = [];
  const pool = (): pg.Pool => {
    const p = new pg.Pool({ connectionString: url, max: 3 });
    pools.push(p);
    return p;
  };
  const sql = pool();
  await sql.query(SCHEMA);
  return {
    url,
    sql,
    pool,
    close: async () => {
      await Promise.all(pools.map((p) => p.end()));
    },
  };
}

/** Owner of each address, as the database has it now (valid leases only). */
export async function owners(sql: pg.Pool): Promise<Map<string, string>> {
  const r = await sql.query<{ address: string; owner: string }>('SELECT address, owner FROM leases WHERE owner IS NOT NULL AND expires_at > now() ORDER BY address');
  return new Map(r.rows.map((row) => [row.address, row.owner]));
}

/** Makes these daemons' leases (and rows) lapse now, as if a lease had passed without a renewal. */
export async function expire(sql: pg.Pool, owner: string): Promise<void> {
  await sql.query(`UPDATE leases SET expires_at = now() - interval '1 second' WHERE owner = $1`, [owner]);
  await sql.query(`UPDATE daemons SET expires_at = now() - interval '1 second' WHERE id = $1`, [owner]);
}
