// The manager on its own timer (start()), as the daemon runs it: daemons converge and take over a
// stopped one's wallets with nobody ticking by hand; a failing database is logged and retried; and a
// tick that hangs does not keep the `lost` listeners from hearing that a lease passed its deadline.
// Assertions wait for a state with a generous bound, never for a time.
import type { QueryResult, QueryResultRow } from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseManager, type LeaseEventMap } from '../../src/cluster/leases.js';
import type { Queryable } from '../../src/cluster/sql.js';
import { captureLog } from '../support/log.js';
import { clusterDb, type ClusterDb } from './db.js';

const wallets = (n: number): string[] => Array.from({ length: n }, (_, i) => `addr${String(i).padStart(2, '0')}`);

let db: ClusterDb;
const started: LeaseManager[] = [];
beforeEach(async () => {
  db = await clusterDb();
});
afterEach(async () => {
  await Promise.allSettled(started.splice(0).map((m) => m.release()));
  await db.close();
});

async function until(what: string, cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('LeaseManager.start', () => {
  it('two daemons on their timers split the wallets, and one takes everything when the other stops cleanly', async () => {
    const addresses = wallets(11);
    const [a, b] = ['a', 'b'].map(
      (id) => new LeaseManager({ db: db.pool(), clock: { monotonic: () => performance.now() }, addresses: () => addresses, leaseMs: 1_200, id }),
    ) as [LeaseManager, LeaseManager];
    started.push(a, b);
    a.start();
    b.start();
    await until('an even split', () => a.held().length + b.held().length === 11 && Math.abs(a.held().length - b.held().length) === 1);
    expect(new Set([...a.held(), ...b.held()]).size).toBe(11);
    await a.release();
    await until('b holding all', () => b.held().length === 11);
  });

  it('logs a failed tick and tries again at the next', async () => {
    const log = captureLog();
    const failing: Queryable = {
      query: <R extends QueryResultRow>(): Promise<QueryResult<R>> => Promise.reject(new Error('connection refused')),
    };
    const m = new LeaseManager({ db: failing, clock: { monotonic: () => performance.now() }, addresses: () => ['x'], leaseMs: 600, id: 'a', logger: log.logger });
    m.start();
    await until('two failed ticks', () => log.events('lease.tick_failed').length >= 2);
    await expect(m.release()).rejects.toThrow('connection refused');
    const n = log.events('lease.tick_failed').length;
    await new Promise((r) => setTimeout(r, 700));
    expect(log.events('lease.tick_failed').length).toBe(n); // stopped: no more ticks
  });

  it('a tick stuck on the database still lets `lost` fire once a lease passes its local deadline', async () => {
    let hang = false;
    const pool = db.pool();
    const stuck: Queryable = {
      query: <R extends QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>> =>
        hang ? new Promise<QueryResult<R>>(() => undefined) : pool.query<R>(text, values),
    };
    let skew = 0;
    const m = new LeaseManager({ db: stuck, clock: { monotonic: () => performance.now() + skew }, addresses: () => ['x', 'y'], leaseMs: 1_500, id: 'a' });
    const lost: Array<LeaseEventMap['lost']> = [];
    m.on('lost', (e) => void lost.push(e));
    m.start();
    await until('both held', () => m.held().length === 2);
    hang = true;
    await new Promise((r) => setTimeout(r, 600)); // the next tick is out, and will never come back
    skew = 10_000;
    await until('lost', () => lost.length === 2);
    expect(lost.map((e) => e.why)).toEqual(['deadline', 'deadline']);
    expect(m.held()).toEqual([]);
    expect(m.tokenFor('x')).toBeUndefined();
    hang = false; // the stuck tick is abandoned; the clean stop still hands back
    await m.release();
    expect((await db.sql.query('SELECT count(*)::int AS n FROM leases WHERE owner IS NOT NULL')).rows).toEqual([{ n: 0 }]);
  });
});
