// The lease manager against a real PostgreSQL: daemons converge on an even split and rebalance when
// one joins or leaves, a clean stop hands back at once, a lapsed lease is lost (never quietly
// renewed) and taken by another with a higher token, and a paused daemon stops believing in its
// leases before the database lets anyone else take them. Tests tick the managers by hand and assert
// states; where the database's clock must pass, a lease is made to lapse by SQL instead of waited for.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseManager, type LeaseEventMap, type LeaseManagerOptions } from '../../src/cluster/leases.js';
import { readCluster } from '../../src/cluster/sql.js';
import { clusterDb, expire, owners, type ClusterDb } from './db.js';

const wallets = (n: number): string[] => Array.from({ length: n }, (_, i) => `addr${String(i).padStart(2, '0')}`);
const realClock = { monotonic: () => performance.now() };

let db: ClusterDb;
beforeEach(async () => {
  db = await clusterDb();
});
afterEach(async () => {
  await db.close();
});

type Recorded = { [K in keyof LeaseEventMap]: Array<LeaseEventMap[K]> };

function manager(id: string, addresses: readonly string[], opts: Partial<LeaseManagerOptions> = {}): LeaseManager & { seen: Recorded } {
  const m = new LeaseManager({ db: db.pool(), clock: realClock, addresses: () => addresses, leaseMs: 5_000, id, host: 'test', pid: 1, ...opts });
  const seen: Recorded = { acquired: [], draining: [], released: [], lost: [] };
  m.on('acquired', (e) => void seen.acquired.push(e));
  m.on('draining', (e) => void seen.draining.push(e));
  m.on('released', (e) => void seen.released.push(e));
  m.on('lost', (e) => void seen.lost.push(e));
  return Object.assign(m, { seen });
}

/** Ticks every manager in turn until `done` holds; a generous bound on rounds, not on time. */
async function rounds(managers: readonly LeaseManager[], done: () => boolean | Promise<boolean>, max = 20): Promise<number> {
  for (let i = 1; i <= max; i++) {
    for (const m of managers) await m.tick();
    await Promise.all(managers.map((m) => m.settled()));
    if (await done()) return i;
  }
  throw new Error(`not done after ${max} rounds: ${managers.map((m) => `${m.id}=${m.held().length}`).join(' ')}`);
}

/** Polls until `cond` holds (a generous bound): for waiting on the database's clock. */
async function until(cond: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!(await cond())) {
    if (performance.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every address held by exactly one manager, and the counts within one of each other. */
function balanced(managers: readonly LeaseManager[], addresses: readonly string[]): boolean {
  const all = managers.flatMap((m) => m.held());
  const counts = managers.map((m) => m.held().length);
  return all.length === addresses.length && new Set(all).size === addresses.length && Math.max(...counts) - Math.min(...counts) <= 1;
}

describe('LeaseManager', () => {
  it.each([
    [2, 10],
    [3, 30],
    [3, 10],
  ])('%i daemons converge on an even split of %i wallets, agreeing with the database', async (k, n) => {
    const addresses = wallets(n);
    const ms = Array.from({ length: k }, (_, i) => manager(`d${i}`, addresses));
    for (const m of ms) await m.register();
    await rounds(ms, () => balanced(ms, addresses));
    const inDb = await owners(db.sql);
    for (const m of ms) for (const a of m.held()) expect(inDb.get(a)).toBe(m.id);
    for (const m of ms) for (const a of m.held()) expect(m.tokenFor(a)).toBeGreaterThan(0n);
    expect(ms.map((m) => m.liveDaemons().length)).toEqual(ms.map(() => k));
  });

  it('a daemon joining takes only its share; one leaving cleanly hands back at once and only its wallets move', async () => {
    const addresses = wallets(30);
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((id) => manager(id, addresses)) as [ReturnType<typeof manager>, ReturnType<typeof manager>, ReturnType<typeof manager>, ReturnType<typeof manager>];
    for (const m of [a, b, c]) await m.register();
    await rounds([a, b, c], () => balanced([a, b, c], addresses));
    const before = new Map([a, b, c].flatMap((m) => m.held().map((w) => [w, m.id])));
    for (const m of [a, b, c]) m.seen.acquired.length = 0;

    await d.register();
    await rounds([a, b, c, d], () => balanced([a, b, c, d], addresses));
    expect([a, b, c, d].map((m) => m.held().length)).toEqual([8, 8, 7, 7]);
    expect([a, b, c].flatMap((m) => m.seen.acquired)).toEqual([]);
    expect(d.seen.acquired.map((e) => e.address).sort()).toEqual(d.held());
    // Each was handed back (free) before d took it, and came from one of the three.
    for (const e of d.seen.acquired) expect([e.previousOwner, before.has(e.address)]).toEqual([undefined, true]);
    for (const m of [a, b, c]) expect(m.seen.released.every((e) => e.why === 'rebalance')).toBe(true);

    const bHeld = b.held();
    await b.release();
    expect(b.held()).toEqual([]);
    expect(b.seen.released.filter((e) => e.why === 'stop').map((e) => e.address).sort()).toEqual(bHeld);
    const view = await readCluster(db.sql);
    expect(view.daemons.map((x) => x.id)).toEqual(['a', 'c', 'd']);
    expect(view.leases.filter((l) => l.owner === 'b')).toEqual([]);

    const held = new Map([a, c, d].map((m) => [m.id, m.held()]));
    await rounds([a, c, d], () => balanced([a, c, d], addresses));
    expect([a, c, d].map((m) => m.held().length)).toEqual([10, 10, 10]);
    // Nobody gave anything up: the only wallets that moved were b's.
    for (const m of [a, c, d]) expect(m.held()).toEqual(expect.arrayContaining(held.get(m.id) ?? []));
  });

  it('a clean stop hands everything back at once: the next daemon takes it all in one tick, not a lease later', async () => {
    const addresses = wallets(12);
    const a = manager('a', addresses, { leaseMs: 60_000 });
    const b = manager('b', addresses, { leaseMs: 60_000 });
    await a.register();
    await b.register();
    await rounds([a, b], () => balanced([a, b], addresses));
    await a.release();
    await b.tick();
    await b.settled();
    expect(b.held()).toEqual(addresses);
    expect(b.liveDaemons()).toEqual(['b']);
  });

  it('a daemon that stops ticking loses its leases at expiry; another takes them with a higher token', async () => {
    const addresses = wallets(10);
    const a = manager('a', addresses, { leaseMs: 1_200 });
    const b = manager('b', addresses, { leaseMs: 1_200 });
    await a.register();
    await b.register();
    await rounds([a, b], () => balanced([a, b], addresses));
    const aTokens = new Map(a.held().map((w) => [w, a.tokenFor(w) ?? 0n]));

    // a is frozen: only b ticks, for as long as the database takes to expire a's row and leases.
    const deadline = performance.now() + 20_000;
    while (b.held().length < addresses.length) {
      if (performance.now() > deadline) throw new Error(`b holds ${b.held().length} after 20 s`);
      await b.tick();
      await b.settled();
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const [w, t] of aTokens) expect(b.tokenFor(w)).toBeGreaterThan(t);
    for (const [w] of aTokens) expect(b.seen.acquired.find((e) => e.address === w)?.previousOwner).toBe('a');
    // a's own deadline passed long before: it does not believe in any of them.
    for (const w of addresses) expect(a.tokenFor(w)).toBeUndefined();
    expect(a.held()).toEqual([]);

    // a wakes up: its leases are lost (taken), and the two rebalance.
    await rounds([a, b], () => balanced([a, b], addresses));
    expect(a.seen.lost.map((e) => e.why)).toEqual(expect.arrayContaining(['deadline']));
    expect(new Set(a.seen.lost.map((e) => e.address))).toEqual(new Set(aTokens.keys()));
  });

  it('a lapsed lease is lost, never quietly renewed: taken back it gets a new token and runs recovery again', async () => {
    const addresses = wallets(3);
    const a = manager('a', addresses);
    await a.register();
    await rounds([a], () => a.held().length === 3);
    const t = a.tokenFor('addr00') ?? 0n;
    await expire(db.sql, 'a');
    await a.tick();
    await a.settled();
    expect(a.seen.lost.map((e) => [e.address, e.why])).toEqual([
      ['addr00', 'expired'],
      ['addr01', 'expired'],
      ['addr02', 'expired'],
    ]);
    expect(a.tokenFor('addr00')).toBe(t + 1n);
    expect(a.seen.acquired.filter((e) => e.address === 'addr00').map((e) => e.token)).toEqual([t, t + 1n]);
    expect(a.held()).toEqual(addresses);
  });

  it('a lease taken by another while this one was away is lost as taken', async () => {
    const a = manager('a', ['x']);
    const b = manager('b', ['x']);
    await a.register();
    await rounds([a], () => a.held().length === 1);
    await expire(db.sql, 'a');
    await b.register();
    await b.tick();
    await b.settled();
    expect(b.held()).toEqual(['x']);
    await a.tick();
    expect(a.seen.lost).toEqual([{ address: 'x', token: 1n, why: 'taken' }]);
    expect(a.tokenFor('x')).toBeUndefined();
    expect(b.tokenFor('x')).toBe(2n);
  });

  it('a paused daemon stops believing in its leases before the database lets another take them', async () => {
    let mono = 0;
    const a = manager('a', ['x', 'y'], { clock: { monotonic: () => mono }, leaseMs: 30_000, marginMs: 6_000 });
    const b = manager('b', ['x', 'y'], { leaseMs: 30_000 });
    await a.register();
    await rounds([a], () => a.held().length === 2);
    // A renewal moves the local deadline to the renewal's start + lease − margin, not further.
    mono = 20_000;
    await a.tick();
    mono = 20_000 + 30_000 - 6_000 - 1;
    expect(a.tokenFor('x')).toBe(1n);
    mono = 20_000;
    await b.register();

    mono += 30_000 - 6_000; // a "slept" past its local deadline; the database's lease (30 s of real time) still runs
    expect(a.tokenFor('x')).toBeUndefined();
    expect(a.held()).toEqual([]);
    await b.tick();
    expect(b.held()).toEqual([]); // still a's in the database: b may not take it yet
    expect((await owners(db.sql)).get('x')).toBe('a');

    // a wakes: the leases it stopped believing in are lost, then taken back (b is live: one each).
    await a.tick();
    await a.settled();
    expect(a.seen.lost.map((e) => e.why)).toEqual(['deadline', 'deadline']);
    expect(a.held()).toHaveLength(1);
    expect(a.tokenFor(a.held()[0] ?? '')).toBe(2n);
    await rounds([a, b], () => balanced([a, b], ['x', 'y']));
  });

  it('a takeover waits for a fenced write in flight (the lease row FOR SHARE) to commit', async () => {
    const a = manager('a', ['x'], { leaseMs: 900 });
    const b = manager('b', ['x'], { leaseMs: 900 });
    await a.register();
    await rounds([a], () => a.held().length === 1);
    const writer = await db.pool().connect();
    try {
      // What the store's fence does in every write's transaction, begun while a still holds x.
      await writer.query('BEGIN');
      const fenced = await writer.query(`SELECT 1 FROM leases WHERE address = 'x' AND owner = 'a' AND token = 1 AND expires_at > now() FOR SHARE`);
      expect(fenced.rows).toHaveLength(1);
      // a is frozen past its lease; b comes to take x and must wait for the write.
      await until(async () => (await owners(db.sql)).size === 0);
      await b.register();
      let done = false;
      const taking = b.tick().then(() => (done = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(done).toBe(false);
      await writer.query('COMMIT');
      await taking;
    } finally {
      writer.release();
    }
    await b.settled();
    expect(b.held()).toEqual(['x']);
    expect(b.tokenFor('x')).toBe(2n);
  });

  it('a wallet joins held() only after its acquired handlers finish; a failing one hands the lease back and it is tried again', async () => {
    const a = manager('a', ['x', 'y']);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let failOnce = true;
    a.on('acquired', async (e) => {
      if (e.address === 'x') await gate;
      if (e.address === 'y' && failOnce) {
        failOnce = false;
        throw new Error('recovery failed');
      }
    });
    await a.register();
    await a.tick();
    expect(a.held()).toEqual([]);
    expect(a.tokenFor('x')).toBe(1n); // recovery's own writes are fenced by the new token
    await new Promise((r) => setTimeout(r, 20));
    expect(a.seen.lost).toEqual([{ address: 'y', token: 1n, why: 'recovery_failed' }]);
    expect(a.tokenFor('y')).toBeUndefined();

    release();
    await a.settled();
    expect(a.held()).toEqual(['x']);
    await a.tick(); // y handed back, and taken again with a new token
    await a.settled();
    expect(a.seen.released).toEqual([{ address: 'y', token: 1n, why: 'recovery_failed' }]);
    expect(a.held()).toEqual(['x', 'y']);
    expect(a.tokenFor('y')).toBe(2n);
  });

  it('a draining wallet keeps its lease (and token) until its turn is over, then is handed back', async () => {
    const addresses = wallets(4);
    const a = manager('a', addresses);
    const b = manager('b', addresses);
    let finish: () => void = () => undefined;
    const turn = new Promise<void>((r) => (finish = r));
    a.on('draining', () => turn);
    await a.register();
    await rounds([a], () => a.held().length === 4);
    await b.register();
    await a.tick();
    expect(a.held()).toHaveLength(2);
    const draining = a.seen.draining.map((e) => e.address);
    expect(draining).toHaveLength(2);
    for (const w of draining) expect(a.tokenFor(w)).toBeDefined();
    await a.tick();
    await b.tick();
    expect(b.held()).toEqual([]); // not handed back yet: the turn is still running
    finish();
    await rounds([a, b], () => balanced([a, b], addresses));
    expect(b.held()).toEqual(draining.sort());
    expect(a.seen.released.map((e) => e.address).sort()).toEqual(draining);
  });

  it('a drain that never ends is cut short after drainMs: the lease is handed back anyway', async () => {
    const a = manager('a', ['x', 'y'], { drainMs: 0 });
    const b = manager('b', ['x', 'y']);
    a.on('draining', () => new Promise<void>(() => undefined));
    await a.register();
    await rounds([a], () => a.held().length === 2);
    await b.register();
    await rounds([a, b], () => balanced([a, b], ['x', 'y']));
    expect(a.seen.released.map((e) => e.why)).toEqual(['rebalance']);
  });

  it('under concurrent ticks no wallet is ever believed held by two daemons, and tokens only rise', async () => {
    const addresses = wallets(20);
    const ms = ['a', 'b', 'c'].map((id) => manager(id, addresses, { leaseMs: 3_000 }));
    for (const m of ms) await m.register();
    const believed = (): void => {
      for (const w of addresses) expect(ms.filter((m) => m.tokenFor(w) !== undefined).length).toBeLessThanOrEqual(1);
    };
    for (let i = 0; i < 15; i++) {
      // c leaves and comes back now and then; everyone ticks at once
      if (i === 5) await ms[2]?.release();
      await Promise.all(ms.filter((m, j) => !(j === 2 && i >= 5 && i < 10)).map((m) => m.tick()));
      believed();
    }
    await Promise.all(ms.map((m) => m.settled()));
    const tokens = new Map<string, bigint[]>();
    for (const m of ms) for (const e of m.seen.acquired) tokens.set(e.address, [...(tokens.get(e.address) ?? []), e.token]);
    for (const list of tokens.values()) expect(new Set(list).size).toBe(list.length); // never the same token twice
  });
});
