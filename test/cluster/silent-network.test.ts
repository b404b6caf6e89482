// The network between a daemon and PostgreSQL goes silent (a partition that drops packets rather
// than refusing them): the server's own timeouts cannot help, since nothing reaches it. The lease
// manager's pool (openPool with queryTimeoutMs, as src/cluster/open.ts opens it) fails the round
// on the client's side, the failure is logged, and the rounds after it work once the network is back.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LeaseManager } from '../../src/cluster/leases.js';
import { openPool } from '../../src/store/postgres/db.js';
import { captureLog } from '../support/log.js';
import { tcpProxy } from '../support/tcp-proxy.js';
import { clusterDb, type ClusterDb } from './db.js';

let db: ClusterDb;
beforeEach(async () => {
  db = await clusterDb();
});
afterEach(async () => {
  await db.close();
});

it('a round on a silent connection fails after the query timeout, and a later one goes through', { timeout: 30_000 }, async () => {
  const target = new URL(db.url);
  const r = await tcpProxy({ host: target.hostname, port: Number(target.port) });
  const via = new URL(db.url);
  via.port = String(r.port);
  const pool = await openPool(via.toString(), { queryTimeoutMs: 1_000 });
  const log = captureLog();
  const m = new LeaseManager({ db: pool, clock: { monotonic: () => performance.now() }, addresses: () => ['x'], leaseMs: 3_000, id: 'a', logger: log.logger });
  try {
    await m.register();
    await m.tick();
    await m.settled();
    expect(m.held()).toEqual(['x']);

    r.blackhole(true);
    // Without the timeout this round would wait for an answer forever.
    await expect(m.tick()).rejects.toThrow(/timeout/i);
    r.blackhole(false);

    // The connection that timed out is dropped; a new one serves the next round, and the lease
    // (still within its time) is renewed.
    await m.tick();
    expect(m.tokenFor('x')).toBeDefined();
  } finally {
    await m.release().catch(() => undefined);
    await pool.end();
    await r.close();
  }
});
