// The rule ids' read (store latestRulePlans, codecs.ts LATEST_RULE_PLANS_SQL) at a year's volume,
// on both stores: each schema made by the store's own open (migrations and plans_real_by_rule),
// then filled by one bulk INSERT (steps left out: the read looks them up only for its few newest
// plans). WALLETS wallets, three rules: `watched` (enabled: false all along: a dry plan per wallet
// per day, DAYS days), `compound` (real, daily) and `sweep` (real, weekly). Prints JSON: rows, the
// read's ms (each of RUNS runs, after one warm-up), the open of the store with that read after it
// (a start's first state reads), the query plans (EXPLAIN QUERY PLAN / EXPLAIN ANALYZE); on
// PostgreSQL before and after a VACUUM (a table just loaded or restored has no visibility map, and
// the planner's choice depended on it), with `has_real` asked as MIN(id) beside it (the form
// proposed first: it walked the primary key there); the build of plans_real_by_rule over the
// filled table (what the first start of the release that adds it waits for, writes blocked); and
// the read before it (`has_real` as EXISTS, no index) for comparison.
//   npm run build && nice -n 10 node bench/lib/rule-ids-read.mjs [WALLETS] [DAYS] [RUNS] [sqlite|postgres|both]
// e.g. node bench/lib/rule-ids-read.mjs 10000 365 3 (~15 minutes on 2 shared cores). The SQLite
// file (under bench/out/) and the throwaway cluster (the system's temp dir) are removed after;
// ~4 GB of disk while it runs at that volume. Numbers: docs/reliability.md, "The rule ids' read"
// (helper h28f, before the index) and "The real-plan index" (helper h29d).
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
// `has_real` as the store asks it, and as it was asked before (EXISTS: h28f's numbers) and first
// proposed (MIN of the rule's real ids), each put in its place for comparison.
const IN_FORCE = '(SELECT MIN(e.rule) FROM plans e WHERE e.rule >= p.rule AND e.dry = 0) = p.rule';
const EXISTS_REAL = 'EXISTS (SELECT 1 FROM plans e WHERE e.rule = p.rule AND e.dry = 0)';
const MIN_ID = '(SELECT MIN(e.id) FROM plans e WHERE e.rule = p.rule AND e.dry = 0) IS NOT NULL';
const asked = (sql, form) => {
  if (!sql.includes(IN_FORCE)) throw new Error('LATEST_RULE_PLANS_SQL changed: update this script');
  return sql.replace(IN_FORCE, form);
};
const INDEX = 'plans_real_by_rule';
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
  // No ANALYZE: the store never runs one, so a daemon's planner has no sqlite_stat1.
  const sql = (await import(join(DIST, 'store/codecs.js'))).LATEST_RULE_PLANS_SQL;
  const { INDEXES } = await import(join(DIST, 'store/sqlite/migrations.js'));
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
  idx.exec(`DROP INDEX ${INDEX}`);
  const b = performance.now();
  idx.exec(INDEXES.find((i) => i.name === INDEX).sql);
  const buildMs = Math.round(performance.now() - b);
  idx.exec(`DROP INDEX ${INDEX}`);
  const before = {
    ms: await time(() => idx.prepare(asked(sql, EXISTS_REAL)).all()),
    plan: idx.prepare(`EXPLAIN QUERY PLAN ${asked(sql, EXISTS_REAL)}`).all().map((r) => `${r.id}/${r.parent} ${r.detail}`),
  };
  idx.close();
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  return { store: 'sqlite', rows, fillMs, openMs, ms, latest, plan, buildMs, before };
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
    const sql = (await import(join(DIST, 'store/codecs.js'))).LATEST_RULE_PLANS_SQL;
    const { PG_INDEXES } = await import(join(DIST, 'store/postgres/migrations.js'));
    const explain = async (q) => (await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${q}`)).rows.map((r) => r['QUERY PLAN']);
    // Statistics but no visibility map yet, as after a bulk load or a restore, until a VACUUM.
    await c.query('ANALYZE plans');
    const notVacuumed = {
      ms: await time(() => c.query(sql)),
      plan: await explain(sql),
      minIdMs: await time(() => c.query(asked(sql, MIN_ID))),
      minIdPlan: await explain(asked(sql, MIN_ID)),
    };
    await c.query('VACUUM ANALYZE plans');
    const plan = await explain(sql);
    const rows = Number((await c.query('SELECT COUNT(*) AS n FROM plans')).rows[0].n);
    const version = (await c.query('SHOW server_version')).rows[0].server_version;
    const o = performance.now();
    const store = await openPostgresStore(url, { ...opts, queryTimeoutMs: 10_000 });
    await store.latestRulePlans();
    const openMs = Math.round(performance.now() - o);
    const ms = await time(() => store.latestRulePlans());
    const latest = (await store.latestRulePlans()).map((p) => [p.rule, p.dry, p.hasRealPlans]);
    await store.close();
    const minId = { ms: await time(() => c.query(asked(sql, MIN_ID))), plan: await explain(asked(sql, MIN_ID)) };
    await c.query(`DROP INDEX ${INDEX}`);
    const b = performance.now();
    await c.query(PG_INDEXES.find((i) => i.name === INDEX).sql);
    const buildMs = Math.round(performance.now() - b);
    await c.query(`DROP INDEX ${INDEX}`);
    await c.query('ANALYZE plans');
    const before = { ms: await time(() => c.query(asked(sql, EXISTS_REAL))), plan: await explain(asked(sql, EXISTS_REAL)) };
    await c.end();
    return { store: `postgres ${version}`, rows, fillMs, openMs, ms, latest, plan, notVacuumed, minId, buildMs, before };
  } finally {
    await cluster.stop();
  }
}

const out = { wallets: WALLETS, days: DAYS, planned: Object.fromEntries(RULES.map((r) => [r.rule, rowsOf(r)])), results: [] };
if (which !== 'postgres') out.results.push(await sqlite());
if (which !== 'sqlite') out.results.push(await postgres());
console.log(JSON.stringify(out, null, 2));
