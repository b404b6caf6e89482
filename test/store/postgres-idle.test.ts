// A daemon paused in the middle of a fenced transaction (SIGSTOP, a frozen VM) holds the wallet's
// lease row FOR SHARE; the server ends such a transaction after the store's busy timeout
// (idle_in_transaction_session_timeout), so another daemon can take the wallet over, and the paused
// one's write never commits.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { openPool } from '../../src/store/postgres/db.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { createDatabase } from '../support/postgres.js';
import { fields } from './contract-adapters.js';

let url: string;
let admin: pg.Pool;
beforeAll(async () => {
  url = await createDatabase();
  await (await openPostgresStore(url, { logger: silentLogger() })).close(); // migrated
  admin = new pg.Pool({ ...fields(url), max: 2 });
  await admin.query(`INSERT INTO leases (address, owner, token, expires_at) VALUES ('addr', 'paused', 1, now() - interval '1 second')`);
});
afterAll(async () => {
  await admin.end();
});

it('ends a transaction its client left open, so a takeover does not wait on it', async () => {
  const pool = await openPool(url, { busyTimeoutMs: 1_000 });
  const paused = await pool.connect();
  paused.on('error', () => undefined);
  try {
    await paused.query('BEGIN');
    await paused.query(`SELECT 1 FROM leases WHERE address = 'addr' FOR SHARE`);
    // The client says nothing more, as a stopped process would. A takeover that would wait on the
    // row forever without the timeout goes through once the server ends the idle transaction.
    const taker = await admin.connect();
    try {
      await taker.query('SET lock_timeout = 10000');
      const taken = await taker.query(`UPDATE leases SET owner = 'new', token = token + 1 WHERE address = 'addr' AND expires_at <= now()`);
      expect(taken.rowCount).toBe(1);
    } finally {
      taker.release();
    }
    await expect(paused.query('SELECT 1')).rejects.toThrow(/terminat|idle-in-transaction|Connection/i);
  } finally {
    paused.release(true);
    await pool.end();
  }
});
