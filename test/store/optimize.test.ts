// The store keeps the query planner's statistics (sqlite_stat1): SQLite's `PRAGMA optimize` at open
// (mask 0x10002: every table, not only those this connection asked) and at close, as SQLite's docs
// recommend for long-lived connections. Without them the rule ids' read (latestRulePlans) takes the
// rule's index and a table row per dry plan: 330 ms for a year of 10,000 wallets, 243 ms with
// statistics (docs/reliability.md, helper h28f). No daemon ever ran ANALYZE, so none had them.
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { draft, freshTempDir, open, T0 } from './fixtures.js';

const tmp = freshTempDir();

/** What sqlite_stat1 holds for `table`, read beside the store; [] where there is no sqlite_stat1. */
function stats(file: string, table: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").get() !== undefined;
    if (!has) return [];
    return db.prepare<[string], { idx: string }>('SELECT idx FROM sqlite_stat1 WHERE tbl = ? ORDER BY idx').all(table).map((r) => r.idx);
  } finally {
    db.close();
  }
}

function plans(n: number, seq0: number, store = open(tmp.dbPath)): void {
  try {
    for (let i = 0; i < n; i++) store.insertPlan(draft({ seq: seq0 + i }), { dry: i % 2 === 0, now: T0, reason: 'r' });
  } finally {
    store.close();
  }
}

it('leaves statistics of the plans table behind once a store has written plans and closed', () => {
  plans(20, 0);
  expect(stats(tmp.dbPath, 'plans')).toContain('plans_by_rule');
});

it('gathers them at open for a state file that has none (written before this release)', () => {
  plans(20, 0);
  const raw = new Database(tmp.dbPath, { fileMustExist: true });
  try {
    raw.exec('DROP TABLE IF EXISTS sqlite_stat1');
    raw.exec('DROP TABLE IF EXISTS sqlite_stat4');
  } finally {
    raw.close();
  }
  expect(stats(tmp.dbPath, 'plans')).toEqual([]);
  const store = open(tmp.dbPath);
  try {
    // Read while the store is open: its open gathered them, not its close.
    expect(stats(tmp.dbPath, 'plans')).toContain('plans_by_rule');
  } finally {
    store.close();
  }
});
