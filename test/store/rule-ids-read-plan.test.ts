// The rule ids' read (codecs.ts LATEST_RULE_PLANS_SQL) on PostgreSQL finds each rule's newest plan
// along plans_by_rule, vacuumed or not. Asked as MAX(id) of the rule's plans, PostgreSQL walked the
// primary key back from the newest plan of all on a table not vacuumed lately (after a restore or a
// bulk load), through every plan newer than the rule's: 333 ms at 605,000 plans for a rule retired
// 60 days before, the whole table for one retired at the start (docs/reliability.md, helper h29d).
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { LATEST_RULE_PLANS_SQL } from '../../src/store/codecs.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { createDatabase } from '../support/postgres.js';
import { fields } from './contract-adapters.js';
import { T0 } from './fixtures.js';

describe('PostgreSQL', () => {
  it("the rule ids' read finds a rule's newest plan along plans_by_rule, vacuumed or not, never along the primary key", async () => {
    const url = await createDatabase();
    await (await openPostgresStore(url, { logger: silentLogger(), clock: { now: () => T0, monotonic: () => 0 } })).close();
    const c = new pg.Client(fields(url));
    await c.connect();
    try {
      // 200 wallets, 30 days: `watched` dry every day (never real), `compound` real every day.
      await c.query(`
        INSERT INTO plans (wallet, address, rule, epoch, seq, dry, status, estimate_lamports, reason, created_at, updated_at)
        SELECT 'w' || w, 'addr' || w, r.rule, 'e' || d, 0, r.dry, CASE r.dry WHEN 1 THEN 'dry' ELSE 'done' END, 1, 'r', ${T0} + d, ${T0} + d
        FROM generate_series(0, 29) d, (VALUES ('watched', 1), ('compound', 0)) r(rule, dry), generate_series(0, 199) w
        ORDER BY d, r.rule, w`);
      // Statistics, and no VACUUM: a table whose visibility map is not set yet costs an index-only
      // scan heap reads, which is when PostgreSQL chose the primary key for MAX(id).
      await c.query('ANALYZE plans');
      const plan = async (): Promise<string> =>
        (await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${LATEST_RULE_PLANS_SQL}`)).rows.map((r) => r['QUERY PLAN']).join('\n');
      const newestAlongRuleIndex = (p: string): void => {
        expect(p).toMatch(/Index (Only )?Scan Backward using plans_by_rule on plans q/);
        expect(p).not.toMatch(/plans_pkey/);
      };
      newestAlongRuleIndex(await plan());
      await c.query('VACUUM ANALYZE plans');
      newestAlongRuleIndex(await plan());
      const rows = await c.query<{ rule: string; epoch: string; has_real: number }>(LATEST_RULE_PLANS_SQL);
      expect(rows.rows.map((r) => [r.rule, r.epoch, r.has_real])).toEqual([['compound', 'e29', 1], ['watched', 'e29', 0]]);
    } finally {
      await c.end();
    }
  });
});
