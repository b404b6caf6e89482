// The rule ids' read (store latestRulePlans, codecs.ts LATEST_RULE_PLANS_SQL) at a year's volume,
// on both stores: each schema made by the store's own migrations, then filled by one bulk INSERT
// (steps left out: the read looks them up only for its few newest plans). WALLETS wallets, three
// rules: `watched` (enabled: false all along: a dry plan per wallet per day, DAYS days),
// `compound` (real, daily) and `sweep` (real, weekly). Prints JSON: rows, the read's ms (each of
// RUNS runs, after one warm-up), the open of the store with that read after it (a start's first
// state reads), the query plans (EXPLAIN QUERY PLAN / EXPLAIN ANALYZE); then the rewrite and the
// index docs/reliability.md proposes (CANDIDATE below, made here by hand: no migration yet).
//   npm run build && nice -n 10 node bench/lib/rule-ids-read.mjs [WALLETS] [DAYS] [RUNS] [sqlite|postgres|both]
// e.g. node bench/lib/rule-ids-read.mjs 10000 365 5 (~10 minutes on 2 shared cores). The SQLite
// file (under bench/out/) and the throwaway cluster (the system's temp dir) are removed after;
// ~4 GB of disk while it runs at that volume. Numbers: docs/reliability.md, "The rule ids' read".
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DIST, OUT } from './common.mjs';

const [walletsArg, daysArg, runsArg, which = 'both'] = process.argv.slice(2);
const WALLETS = Number(walletsArg ?? 10_000);
const DAYS = Number(daysArg ?? 180);
const RUNS = Number(runsArg ?? 5);
const T0 = 1_750_000_000_000;
const DAY = 86_400_000;

const { createLogger } = await import(join(DIST, 'log/logger.js'));
const { default: pino } = await import('pino');
const logger = createLogger({ level: 'warn', redactor: { redact: (t) => t }, destination: pino.destination({ dest: 2, sync: true }) });
const clock = { now: () => T0 + DAYS * DAY };
const opts = { logger, clock, redactor: { redact: (t) => t } };

// One row per (wallet, rule, day) kept: watched every day (dry), compound every day, sweep every 7th.
const RULES = [
  { rule: 'watched', dry: 1, every: 1 },
  { rule: 'compound', dry: 0, every: 1 },
  { rule: 'sweep', dry: 0, every: 7 },
];
// The proposed index: a rule's real plans, so `has_real` is one probe (not yet a migration), and
// `has_real` asked as the MIN of that index's id: asked as EXISTS, PostgreSQL still scans the table
// (it expects a real plan within the first few rows), and without the index the MIN is dearer.
const CANDIDATE = 'CREATE INDEX plans_real_by_rule ON plans (rule, id) WHERE dry = 0';
const EXISTS_REAL = 'EXISTS (SELECT 1 FROM plans e WHERE e.rule = p.rule AND e.dry = 0)';
const MIN_REAL = '(SELECT MIN(e.id) FROM plans e WHERE e.rule = p.rule AND e.dry = 0) IS NOT NULL';
const rewrite = (sql) => {
  if (!sql.includes(EXISTS_REAL)) throw new Error('LATEST_RULE_PLANS_SQL changed: update this script');
  return sql.replace(EXISTS_REAL, MIN_REAL);
};
const rowsOf = (r) => WALLETS * Math.ceil(DAYS / r.every);

async function time(read) {
  await read();
  const ms = [];
  for (let i = 0; i < RUNS; i += 1) {
    const t = performance.now();
    await read();
    ms.push(Math.round((performance.now() - t) * 10) / 10);
  }
  return ms;
}

async function sqlite() {
  mkdirSync(OUT, { recursive: true });
  const file = join(OUT, `rule-ids-read-${WALLETS}x${DAYS}.sqlite`);
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  const { openStore } = await import(join(DIST, 'store/sqlite/store.js'));
  openStore(file, opts).close();
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  const t = performance.now();
  // Day-major, as a daemon records them: every rule's plans of a day before the next day's.
  db.exec(`
    WITH RECURSIVE d(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM d WHERE n + 1 < ${DAYS}),
                   w(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM w WHERE n + 1 < ${WALLETS}),
                   r(rule, dry, every, o) AS (VALUES ${RULES.map((r, i) => `('${r.rule}', ${r.dry}, ${r.every}, ${i})`).join(', ')})
    INSERT INTO plans (wallet, address, rule, epoch, seq, dry, status, estimate_lamports, reason, created_at, updated_at)
    SELECT 'w' || w.n, 'addr' || w.n, r.rule, 'e' || d.n, 0, r.dry, CASE r.dry WHEN 1 THEN 'dry' ELSE 'done' END,
           '1000000', 'bench', ${T0} + d.n * ${DAY}, ${T0} + d.n * ${DAY}
    FROM d, r, w WHERE d.n % r.every = 0 ORDER BY d.n, r.o, w.n`);
  const fillMs = Math.round(performance.now() - t);
  // No ANALYZE: the store never runs one, so a daemon's planner has no sqlite_stat1 (with it, the
  // has_real part is a skip-scan of the (address, rule, ...) unique index instead: `analyzed` below).
  const sql = (await import(join(DIST, 'store/codecs.js'))).LATEST_RULE_PLANS_SQL;
  const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => `${r.id}/${r.parent} ${r.detail}`);
  const rows = db.prepare('SELECT COUNT(*) AS n FROM plans').get().n;
  db.close();
  const o = performance.now();
  const store = openStore(file, opts);
  await store.latestRulePlans();
  const openMs = Math.round(performance.now() - o);
  const ms = await time(() => store.latestRulePlans());
  const latest = (await store.latestRulePlans()).map((p) => [p.rule, p.dry, p.hasRealPlans]);
  store.close();
  const idx = new Database(file);
  const rewriteMs = await time(() => idx.prepare(rewrite(sql)).all());
  idx.exec(CANDIDATE);
  const withIndexMs = await time(() => idx.prepare(sql).all());
  const withIndexRewriteMs = await time(() => idx.prepare(rewrite(sql)).all());
  const withIndexPlan = idx.prepare(`EXPLAIN QUERY PLAN ${rewrite(sql)}`).all().map((r) => `${r.id}/${r.parent} ${r.detail}`);
  idx.exec('DROP INDEX plans_real_by_rule');
  idx.exec('ANALYZE');
  const analyzed = {
    ms: await time(() => idx.prepare(sql).all()),
    plan: idx.prepare(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => `${r.id}/${r.parent} ${r.detail}`),
  };
  idx.close();
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  return { store: 'sqlite', rows, fillMs, openMs, ms, latest, plan, rewriteMs, withIndexMs, withIndexRewriteMs, withIndexPlan, analyzed };
}

async function postgres() {
  const { startPostgres } = await import('../../test/support/postgres-node.mjs');
  const cluster = await startPostgres();
  try {
    const url = await cluster.createDatabase();
    const { openPostgresStore } = await import(join(DIST, 'store/postgres/store.js'));
    await (await openPostgresStore(url, { ...opts, queryTimeoutMs: 10_000 })).close();
    const { default: pg } = await import('pg');
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const t = performance.now();
    await c.query(`
      INSERT INTO plans (wallet, address, rule, epoch, seq, dry, status, estimate_lamports, reason, created_at, updated_at)
      SELECT 'w' || w.n, 'addr' || w.n, r.rule, 'e' || d.n, 0, r.dry, CASE r.dry WHEN 1 THEN 'dry' ELSE 'done' END,
             1000000, 'bench', ${T0} + d.n * ${DAY}::bigint, ${T0} + d.n * ${DAY}::bigint
      FROM generate_series(0, ${DAYS - 1}) d(n),
           (VALUES ${RULES.map((r, i) => `('${r.rule}', ${r.dry}, ${r.every}, ${i})`).join(', ')}) r(rule, dry, every, o),
           generate_series(0, ${WALLETS - 1}) w(n)
      WHERE d.n % r.every = 0 ORDER BY d.n, r.o, w.n`);
    const fillMs = Math.round(performance.now() - t);
    await c.query('VACUUM ANALYZE plans');
    const sql = (await import(join(DIST, 'store/codecs.js'))).LATEST_RULE_PLANS_SQL;
    const plan = (await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`)).rows.map((r) => r['QUERY PLAN']);
    const rows = Number((await c.query('SELECT COUNT(*) AS n FROM plans')).rows[0].n);
    const version = (await c.query('SHOW server_version')).rows[0].server_version;
    const o = performance.now();
    const store = await openPostgresStore(url, { ...opts, queryTimeoutMs: 10_000 });
    await store.latestRulePlans();
    const openMs = Math.round(performance.now() - o);
    const ms = await time(() => store.latestRulePlans());
    const latest = (await store.latestRulePlans()).map((p) => [p.rule, p.dry, p.hasRealPlans]);
    await store.close();
    const rewriteMs = await time(() => c.query(rewrite(sql)));
    await c.query(CANDIDATE);
    await c.query('ANALYZE plans');
    const withIndexMs = await time(() => c.query(sql));
    const withIndexRewriteMs = await time(() => c.query(rewrite(sql)));
    const withIndexPlan = (await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${rewrite(sql)}`)).rows.map((r) => r['QUERY PLAN']);
    await c.end();
    return { store: `postgres ${version}`, rows, fillMs, openMs, ms, latest, plan, rewriteMs, withIndexMs, withIndexRewriteMs, withIndexPlan };
  } finally {
    await cluster.stop();
  }
}

const out = { wallets: WALLETS, days: DAYS, planned: Object.fromEntries(RULES.map((r) => [r.rule, rowsOf(r)])), results: [] };
if (which !== 'postgres') out.results.push(await sqlite());
if (which !== 'sqlite') out.results.push(await postgres());
console.log(JSON.stringify(out, null, 2));
