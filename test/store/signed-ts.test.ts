// The newest signed ts of each address (lastRequestTs, read before every signature) is a running
// maximum kept by triggers on attempts (migration 5), no longer a json_extract of every attempt the
// address ever made, which grew with its history (16–26 ms p50 after a year of a daily rule:
// docs/reliability.md, "Months of running review"). The answers are the contract's
// (contract-steps.test.ts); here, that a state made before migration 5 is filled from its attempts,
// and that the triggers keep it through a re-send and a signature recorded after the fact.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/port.js';
import { PG_SCHEMA_VERSION } from '../../src/store/postgres/migrations.js';
import { UNSIGNED_BODY } from '../../src/store/rows.js';
import { SCHEMA_VERSION } from '../../src/store/sqlite/migrations.js';
import { pgFile, useAdapter } from './contract-adapters.js';
import { ADDR, ADDR2, draft, request, T0 } from './fixtures.js';

describe.each(['sqlite', 'postgres'] as const)('signed_ts (%s)', (name) => {
  const adapter = useAdapter(name);
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  /** Back to the schema before signed_ts: the table, its triggers and migration 5's indexes gone, and every later migration's column. */
  async function toSchemaBefore(s: Store): Promise<void> {
    const path = s.path;
    await s.close();
    store = undefined;
    const drops = 'DROP INDEX plans_by_address_epoch; DROP INDEX plans_by_address_updated; DROP INDEX plans_by_rule; DROP INDEX plans_active;';
    if (name === 'sqlite') {
      const db = new Database(path);
      db.exec(`DROP TRIGGER attempts_signed_ts_insert; DROP TRIGGER attempts_signed_ts_update; DROP TABLE signed_ts; ${drops} ALTER TABLE plans DROP COLUMN claimed_proved; PRAGMA user_version = ${SCHEMA_VERSION - 2};`);
      db.close();
    } else {
      await pgFile.admin!.query(`DROP TABLE signed_ts; DROP FUNCTION autoclaim_signed_ts() CASCADE; ${drops} ALTER TABLE plans DROP COLUMN claimed_proved; DELETE FROM autoclaim_schema WHERE version >= ${PG_SCHEMA_VERSION - 1};`);
    }
  }

  it('a state of the schema before is filled from the attempts it holds; the triggers keep it after', async () => {
    store = await adapter.open();
    const a = (await store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' }))!;
    const b = (await store.insertPlan(draft({ address: ADDR2 }), { dry: false, now: T0, reason: 'r' }))!;
    await store.markSending(a.steps[0]!.id, request({ ts: 1_748_779_300 }), T0);
    await store.markNotSent(a.steps[0]!.id, 'connect ECONNREFUSED', T0);
    await store.markSending(a.steps[0]!.id, request({ ts: 1_748_779_200 }), T0);
    await store.markSending(b.steps[0]!.id, request({ ts: 1_748_779_100 }), T0);
    await toSchemaBefore(store);

    store = await adapter.open();
    expect(await store.lastRequestTs(ADDR)).toBe(1_748_779_300);
    expect(await store.lastRequestTs(ADDR2)).toBe(1_748_779_100);
    expect(await store.lastRequestTs('nobody')).toBeUndefined();

    // A step recorded sending unsigned, then given its signature: the one ts, counted once.
    await store.markAcknowledged(b.steps[0]!.id, { status: 200, responseRaw: '{"status":"success"}' }, T0);
    const deposit = b.steps[1]!.id;
    await store.setStepAmount(deposit, 1n, T0);
    await store.markSending(deposit, request({ ts: 1_748_779_400, body: UNSIGNED_BODY }), T0);
    expect(await store.lastRequestTs(ADDR2)).toBe(1_748_779_400);
    await store.recordSigned(deposit, request({ ts: 1_748_779_400 }), T0);
    expect(await store.lastRequestTs(ADDR2)).toBe(1_748_779_400);
    expect(await store.lastRequestTs(ADDR)).toBe(1_748_779_300);
  });
});
