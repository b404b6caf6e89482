// The reads a daemon makes on every poll, and on every start and reload, must cost what the plans
// of their window cost, not what every plan ever recorded costs: a state file keeps a year of a
// fleet's history (docs/reliability.md, "Months of running review"). Asserted on SQLite's own
// query plans for the statements the store runs (no timing): every access to `plans` is a rowid
// lookup or an index range narrower than a whole address, and none scans the table.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { historyPlanIds, LATEST_RULE_PLANS_SQL } from '../../src/store/codecs.js';
import { POLL_VIEW_SQL } from '../../src/store/poll-view.js';
import { ADDR, ADDR2, draft, freshTempDir, open, T0 } from './fixtures.js';

const tmp = freshTempDir();
let raw: Database.Database | undefined;
afterEach(() => raw?.close());

const DAY_MS = 86_400_000;

/** A state file with a few epochs of two wallets, a one-off send among them, and a raw connection to it. */
function stateWithHistory(): Database.Database {
  const store = open(tmp.dbPath);
  for (let d = 0; d < 5; d++) {
    const epoch = new Date(T0 + d * DAY_MS).toISOString().slice(0, 10);
    for (const address of [ADDR, ADDR2]) store.insertPlan(draft({ address, epoch }), { dry: false, now: T0 + d * DAY_MS, reason: 'r' });
  }
  store.insertPlan(draft({ rule: '@send:op-1', manualId: 'op-1' }), { dry: false, now: T0, reason: 'r' });
  store.close();
  raw = new Database(tmp.dbPath, { readonly: true });
  return raw;
}

/** SQLite's plan for `sql` ($n placeholders), one line per step. */
function queryPlan(db: Database.Database, sql: string, args: readonly unknown[]): string[] {
  const order: number[] = [];
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => (order.push(Number(n) - 1), '?'));
  const rows = db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${text}`).all(...order.map((i) => args[i]));
  return rows.map((r) => r.detail);
}

/**
 * The steps that read `plans` (under any alias the statements give it) more broadly than a rowid,
 * an index range within one address, or a MIN/MAX lookup (a SEARCH with no constraint).
 */
function broadPlanReads(lines: readonly string[]): string[] {
  const aliases = new Set(['plans', 'h', 'p', 'a', 'm', 'n', 'q']);
  return lines.filter((line) => {
    const m = /^(SCAN|SEARCH) (\w+) (.*)$/.exec(line);
    if (m === null || !aliases.has(m[2]!)) return false;
    if (m[1] === 'SCAN') return true;
    const how = m[3]!;
    // An address alone is every plan that address ever had, unless the index holds only open and blocked plans.
    if (how.includes('(address=?)')) return !how.includes('plans_active');
    // manual_id IS NULL is every plan but the one-off sends.
    return how.includes('(manual_id=?)');
  });
}

describe("the reads of a turn, a start and a reload don't grow with the history", () => {
  it('the poll view reads the window of one address, by index ranges', () => {
    const db = stateWithHistory();
    const lines = queryPlan(db, POLL_VIEW_SQL, [ADDR, T0 + 3 * DAY_MS, '2025-06-05']);
    expect(broadPlanReads(lines), lines.join('\n')).toEqual([]);
    // Each reason a plan is in the history comes from its own index.
    expect(lines.join('\n')).toMatch(/plans_by_address_time \(address=\? AND created_at>\?\)/);
    expect(lines.join('\n')).toMatch(/plans_by_address_epoch \(address=\? AND epoch=\?\)/);
    expect(lines.join('\n')).toMatch(/plans_by_address_updated \(address=\? AND updated_at>\?\)/);
  });

  it('the history read (after running plans, and in the recheck before a signature) too', () => {
    const db = stateWithHistory();
    const sql = `SELECT * FROM plans p WHERE p.id IN (${historyPlanIds('$1', '$2', '$3')}) ORDER BY p.id`;
    const lines = queryPlan(db, sql, [ADDR, T0 + 3 * DAY_MS, '2025-06-05']);
    expect(broadPlanReads(lines), lines.join('\n')).toEqual([]);
  });

  it("each rule's newest plan (every start and reload) skips along the rule index", () => {
    const db = stateWithHistory();
    const lines = queryPlan(db, LATEST_RULE_PLANS_SQL, []);
    expect(broadPlanReads(lines), lines.join('\n')).toEqual([]);
    expect(lines.join('\n')).toMatch(/plans_by_rule \(rule>\?\)/);
    // a rule's newest plan: the last entry up to it, read backwards (no sort)
    expect(lines.join('\n')).toMatch(/SEARCH q USING COVERING INDEX plans_by_rule \(rule<\?\)/);
    expect(lines.join('\n')).not.toMatch(/TEMP B-TREE/);
    // and still answers what it did: the newest plan of each rule, one-off sends left out
    const rows = db.prepare<[], { rule: string; epoch: string }>(LATEST_RULE_PLANS_SQL).all();
    expect(rows.map((r) => [r.rule, r.epoch])).toEqual([['compound', '2025-06-05']]);
  });
});
