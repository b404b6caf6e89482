// The network between a daemon and PostgreSQL goes silent (a partition that drops packets rather
// than refusing them): the server's own timeouts cannot help, since nothing reaches it. The lease
// manager's pool (openPool with queryTimeoutMs, as src/cluster/open.ts opens it) fails the round
// on the client's side, the failure is logged, and the rounds after it work once the network is back.
import net from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LeaseManager } from '../../src/cluster/leases.js';
import { openPool } from '../../src/store/postgres/db.js';
import { captureLog } from '../support/log.js';
import { clusterDb, type ClusterDb } from './db.js';

/** A loopback TCP relay to PostgreSQL that can stop passing bytes, both ways, without closing. */
async function relay(to: { host: string; port: number }): Promise<{ port: number; silent: (on: boolean) => void; close: () => void }> {
  let quiet = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(to.port, to.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
    }
    client.on('data', (b) => void (quiet || upstream.write(b)));
    upstream.on('data', (b) => void (quiet || client.write(b)));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    silent: (on) => {
      quiet = on;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

let db: ClusterDb;
beforeEach(async () => {
  db = await clusterDb();
});
afterEach(async () => {
  await db.close();
});

it('a round on a silent connection fails after the query timeout, and a later one goes through', { timeout: 30_000 }, async () => {
  const target = new URL(db.url);
  const r = await relay({ host: target.hostname, port: Number(target.port) });
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

    r.silent(true);
    // Without the timeout this round would wait for an answer forever.
    await expect(m.tick()).rejects.toThrow(/timeout/i);
    r.silent(false);

    // The connection that timed out is dropped; a new one serves the next round, and the lease
    // (still within its time) is renewed.
    await m.tick();
    expect(m.tokenFor('x')).toBeDefined();
  } finally {
    await m.release().catch(() => undefined);
    await pool.end();
    r.close();
  }
});
