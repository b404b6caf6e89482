// Configs that disagree, on a real PostgreSQL (issue 25, findings 5 and 7), with the lease manager
// as the daemon runs it: two daemons with different wallet lists own every wallet either lists
// (the common ones split, the others taken after a lease free); two daemons whose rules differ
// (one renamed a rule) each log cluster.config_differs, and neither takes a wallet the other
// lists — the one that held them hands them back, the newcomer takes none.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LeaseManager } from '../../src/cluster/leases.js';
import { readCluster } from '../../src/cluster/sql.js';
import { captureLog } from '../support/log.js';
import { clusterDb, owners, type ClusterDb } from './db.js';

let db: ClusterDb;
const managers: LeaseManager[] = [];
beforeEach(async () => {
  db = await clusterDb();
});
afterEach(async () => {
  await Promise.allSettled(managers.splice(0).map((m) => m.release()));
  await db.close();
});

const LEASE = 3_000;

function manager(id: string, addresses: string[], config: string, clock: { monotonic: () => number }) {
  const log = captureLog();
  const m = new LeaseManager({ db: db.pool(), clock, addresses: () => addresses, config: () => config, leaseMs: LEASE, id, logger: log.logger });
  managers.push(m);
  return { m, log };
}

it('two daemons with different wallet lists: every wallet either lists is owned, the common ones split between them', async () => {
  let t = 0;
  const clock = { monotonic: () => t };
  const a = manager('a', ['w1', 'w2', 'w3', 'w4', 'w5', 'w6'], 'x', clock);
  const b = manager('b', ['w3', 'w4', 'w5', 'w6', 'w7', 'w8'], 'x', clock);
  await a.m.register();
  await b.m.register();
  // Rounds a third of a lease apart, as start() ticks them, for a little over a lease.
  for (let i = 0; i < 5; i++) {
    await a.m.tick();
    await b.m.tick();
    await a.m.settled();
    await b.m.settled();
    t += LEASE / 3;
  }
  const held = await owners(db.sql);
  expect([...held.keys()].sort()).toEqual(['w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7', 'w8']);
  // The common list w3..w6 split 2/2; each one's own wallets its own.
  const of = (d: string) => [...held].filter(([, o]) => o === d).map(([w]) => w).sort();
  expect(of('a').filter((w) => ['w3', 'w4', 'w5', 'w6'].includes(w))).toHaveLength(2);
  expect(of('a')).toEqual(expect.arrayContaining(['w1', 'w2']));
  expect(of('b')).toEqual(expect.arrayContaining(['w7', 'w8']));
  expect(a.log.events('cluster.wallets_differ')).toHaveLength(1);
  expect(a.log.events('cluster.config_differs')).toEqual([]);
  // The lists were published once each, with the first heartbeat, and read back by digest.
  const rows = (await db.sql.query<{ id: string; n: number }>('SELECT id, cardinality(addresses) AS n FROM daemons ORDER BY id')).rows;
  expect(rows).toEqual([
    { id: 'a', n: 6 },
    { id: 'b', n: 6 },
  ]);
});

it('a daemon with a renamed rule: cluster.config_differs on both, and no wallet taken from the other', async () => {
  let t = 0;
  const clock = { monotonic: () => t };
  const wallets = ['w1', 'w2', 'w3', 'w4'];
  const a = manager('a', wallets, 'digest-of-rules-v1', clock);
  await a.m.register();
  await a.m.tick();
  await a.m.settled();
  expect(a.m.held()).toEqual(wallets);
  const tokens = new Map((await readCluster(db.sql)).leases.map((l) => [l.address, l.token]));

  const b = manager('b', wallets, 'digest-of-rules-v2', clock);
  await b.m.register();
  const seenByB: string[][] = [];
  for (let i = 0; i < 6; i++) {
    await b.m.tick();
    await a.m.tick();
    await a.m.settled();
    await b.m.settled();
    seenByB.push(b.m.held());
    t += LEASE / 3;
  }
  // b never held any of them; a handed them back (drained) once it saw b: worked by neither.
  expect(seenByB.flat()).toEqual([]);
  expect(a.m.held()).toEqual([]);
  expect(await owners(db.sql)).toEqual(new Map());
  // No lease of them ever went to b: their tokens rose only by a's own hand-back (release keeps the token).
  for (const l of (await readCluster(db.sql)).leases) expect(l.token).toBe(tokens.get(l.address));
  for (const { log, other } of [
    { log: a.log, other: 'b' },
    { log: b.log, other: 'a' },
  ]) {
    expect(log.events('cluster.config_differs')).toMatchObject([{ level: 'error', others: [other], contested: 4 }]);
  }
  expect(a.m.configConflict()).toEqual({ others: ['b'], contested: 4 });

  // b leaves (the host is fixed and restarted): a takes its wallets back at its next rounds.
  await b.m.release();
  for (let i = 0; i < 2; i++) {
    await a.m.tick();
    await a.m.settled();
    t += LEASE / 3;
  }
  expect(a.m.held()).toEqual(wallets);
  expect(a.m.configConflict()).toBeUndefined();
  expect(a.log.events('cluster.config_agrees')).toHaveLength(1);
});
