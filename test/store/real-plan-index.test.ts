// plans_real_by_rule, the index of each rule's real plans that the rule ids' read (codecs.ts
// LATEST_RULE_PLANS_SQL) probes for `has_real`, is built by no migration and carries no version
// (sqlite/migrations.ts INDEXES, postgres/migrations.ts PG_INDEXES): a database the release before
// left gets it at the next daemon's start and keeps its version, so that release's daemons go on
// working beside this one on PostgreSQL (neither stepping aside nor refusing to start), and on
// PostgreSQL the read probes it instead of scanning the whole plans table, and finds a rule's
// newest plan along plans_by_rule instead of the primary key (docs/reliability.md, helpers h28f
// and h29d).
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { LATEST_RULE_PLANS_SQL } from '../../src/store/codecs.js';
import { PG_SCHEMA_VERSION } from '../../src/store/postgres/migrations.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { SCHEMA_VERSION } from '../../src/store/sqlite/migrations.js';
import { createDatabase } from '../support/postgres.js';
import { fields } from './contract-adapters.js';
import { draft, freshTempDir, open, T0 } from './fixtures.js';

const INDEX = 'plans_real_by_rule';

describe('SQLite', () => {
  const tmp = freshTempDir();
  let raw: Database.Database | undefined;
  afterEach(() => raw?.close());

  const hasIndex = (db: Database.Database): boolean => db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = ?").get(INDEX) !== undefined;

  it('a state file the release before left gets the index at the next open, at the same version', () => {
    const store = open(tmp.dbPath);
    store.insertPlan(draft({ rule: 'watched' }), { dry: true, now: T0, reason: 'r' });
    store.insertPlan(draft({ rule: 'compound' }), { dry: false, now: T0, reason: 'r' });
    store.close();
    // The release before: the same migrations, no index.
    raw = new Database(tmp.dbPath);
    raw.exec(`DROP INDEX ${INDEX}`);
    raw.close();
    // A read-only open (status, actions) builds nothing, and reads as before.
    const ro = open(tmp.dbPath, { readonly: true });
    expect(ro.latestRulePlans().map((p) => [p.rule, p.hasRealPlans])).toEqual([['watched', false], ['compound', true]]);
    ro.close();
    raw = new Database(tmp.dbPath, { readonly: true });
    expect(hasIndex(raw)).toBe(false);
    raw.close();

    open(tmp.dbPath).close();
    raw = new Database(tmp.dbPath, { readonly: true });
    expect(hasIndex(raw)).toBe(true);
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
  });
});

describe('PostgreSQL', () => {
  const logger = silentLogger();
  const clock = { now: () => T0, monotonic: () => 0 };
  const openPg = (url: string, extra: Record<string, unknown> = {}) => openPostgresStore(url, { logger, clock, ...extra });

  async function client(url: string): Promise<pg.Client> {
    const c = new pg.Client(fields(url));
    await c.connect();
    return c;
  }
  const indexOf = async (c: pg.Client): Promise<string | null> =>
    (await c.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [INDEX])).rows[0]?.t ?? null;
  const version = async (c: pg.Client): Promise<number | undefined> =>
    (await c.query<{ v: number }>('SELECT max(version) AS v FROM autoclaim_schema')).rows[0]?.v;

  it("a database the release before left gets the index at a daemon's start and keeps its version", async () => {
    const url = await createDatabase();
    await (await openPg(url)).close();
    const c = await client(url);
    try {
      // The release before: the same migrations, no index.
      await c.query(`DROP INDEX ${INDEX}`);
      const before = await version(c);
      // A command run beside the daemons (`send`: upgrade false) changes nothing under them.
      await (await openPg(url, { upgrade: false })).close();
      expect(await indexOf(c)).toBeNull();
      // A daemon's start builds it, and adds no version: the heartbeat of a daemon of the release
      // before reads the version it knows, so it goes on working (schema-watch.ts), and it would
      // start again on this database (no STATE_TOO_NEW).
      await (await openPg(url)).close();
      expect(await indexOf(c)).toBe(INDEX);
      expect(await version(c)).toBe(before);
      expect(before).toBe(PG_SCHEMA_VERSION);
    } finally {
      await c.end();
    }
  });

  it("the rule ids' read steps along the rule indexes, vacuumed or not, and never walks the table or its primary key", async () => {
    const url = await createDatabase();
    await (await openPg(url)).close();
    const c = await client(url);
    try {
      // 200 wallets, 30 days: `watched` dry every day (never real), `compound` real every day.
      await c.query(`
        INSERT INTO plans (wallet, address, rule, epoch, seq, dry, status, estimate_lamports, reason, created_at, updated_at)
        SELECT 'w' || w, 'addr' || w, r.rule, 'e' || d, 0, r.dry, CASE r.dry WHEN 1 THEN 'dry' ELSE 'done' END, 1, 'r', ${T0} + d, ${T0} + d
        FROM generate_series(0, 29) d, (VALUES ('watched', 1), ('compound', 0)) r(rule, dry), generate_series(0, 199) w
        ORDER BY d, r.rule, w`);
      // Statistics, and no VACUUM: a table whose visibility map is not set yet (as after a bulk
      // load or a restore) costs an index-only scan heap reads, and PostgreSQL then answered
      // MIN(id) of the rule's real plans by walking the primary key, every row of the table for
      // a rule that never planned for real.
      await c.query('ANALYZE plans');
      const plan = async (): Promise<string> =>
        (await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${LATEST_RULE_PLANS_SQL}`)).rows.map((r) => r['QUERY PLAN']).join('\n');
      // So did MAX(id) of the rule's plans for a rule's newest plan, back from the newest of all.
      const readsByIndexes = (p: string): void => {
        expect(p).toMatch(/Index Only Scan using plans_real_by_rule on plans e/);
        expect(p).toMatch(/Index Only Scan Backward using plans_by_rule on plans q/);
        expect(p).not.toMatch(/plans_pkey/);
      };
      readsByIndexes(await plan());
      await c.query('VACUUM ANALYZE plans');
      readsByIndexes(await plan());
      const rows = await c.query<{ rule: string; has_real: number }>(LATEST_RULE_PLANS_SQL);
      expect(rows.rows.map((r) => [r.rule, r.has_real])).toEqual([['compound', 1], ['watched', 0]]);
    } finally {
      await c.end();
    }
  });
});
