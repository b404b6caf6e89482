// Daemons that split different wallet lists (a rolling config change, a host left behind) are told
// apart by the digest each publishes with its heartbeat: each logs cluster.wallets_differ once,
// naming the others, and cluster.wallets_agree once they list the same wallets again.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LeaseManager } from '../../src/cluster/leases.js';
import { walletsDigest } from '../../src/cluster/sql.js';
import { captureLog } from '../support/log.js';
import { clusterDb, type ClusterDb } from './db.js';

let db: ClusterDb;
beforeEach(async () => {
  db = await clusterDb();
});
afterEach(async () => {
  await db.close();
});

it('the digest is of the list, not of its order', () => {
  expect(walletsDigest(['b', 'a'])).toBe(walletsDigest(['a', 'b']));
  expect(walletsDigest(['a', 'b'])).not.toBe(walletsDigest(['a', 'b', 'c']));
});

it('two daemons with different lists each say so once, and say so again when they agree', async () => {
  let listB = ['w1', 'w2', 'w3'];
  const logA = captureLog();
  const logB = captureLog();
  const clock = { monotonic: () => performance.now() };
  const a = new LeaseManager({ db: db.pool(), clock, addresses: () => ['w1', 'w2', 'w3'], leaseMs: 3_000, id: 'a', logger: logA.logger });
  const b = new LeaseManager({ db: db.pool(), clock, addresses: () => listB, leaseMs: 3_000, id: 'b', logger: logB.logger });
  try {
    await a.register();
    await b.register();
    for (let i = 0; i < 2; i++) {
      await a.tick();
      await b.tick();
    }
    const said = (log: ReturnType<typeof captureLog>, event: string) => log.lines.filter((l) => l.event === event);
    expect(said(logA, 'cluster.wallets_differ')).toEqual([]);

    listB = ['w1', 'w2', 'w3', 'w4'];
    for (let i = 0; i < 3; i++) {
      await b.tick();
      await a.tick();
    }
    expect(said(logA, 'cluster.wallets_differ')).toMatchObject([{ level: 'warn', others: ['b'] }]);
    expect(said(logB, 'cluster.wallets_differ')).toMatchObject([{ level: 'warn', others: ['a'] }]);

    listB = ['w3', 'w2', 'w1'];
    await b.tick();
    await a.tick();
    expect(said(logA, 'cluster.wallets_agree')).toHaveLength(1);
    expect(said(logB, 'cluster.wallets_agree')).toHaveLength(1);
    expect(said(logA, 'cluster.wallets_differ')).toHaveLength(1);
  } finally {
    await a.release();
    await b.release();
  }
});
