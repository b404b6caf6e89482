// A fresh PostgreSQL database for a lease test, migrated as the PostgreSQL store migrates it (the
// `daemons` and `leases` tables among the rest), and one pool per "daemon" (each daemon of a
// cluster has its own connections). Every pool handed out is closed by close().
import pg from 'pg';
import { migrate } from '../../src/store/postgres/migrations.js';
import { createDatabase } from '../support/postgres.js';

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
  // The store's own migration: the manager runs against the very tables a deployment has.
  const client = await sql.connect();
  try {
    await migrate(client, url);
  } finally {
    client.release();
  }
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
