// The operator's metrics in a cluster (issue 15), with real lease managers on a real PostgreSQL
// wired to real metrics as the supervisor wires them (service/cluster-signals.ts): leases held,
// live daemons, lease losses by reason; the staleness of the wallets a daemon holds only (never of
// those another daemon works); a wallet taken over arriving with the last success its previous
// owner recorded; and a daemon whose leases were taken reading as standby, not as a fault.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseManager } from '../../src/cluster/leases.js';
import { silentLogger } from '../../src/log/logger.js';
import { clusterCounts, heldScope, watchLeases } from '../../src/service/cluster-signals.js';
import { createFleet } from '../../src/service/fleet.js';
import { createMetrics, type Metrics } from '../../src/service/metrics.js';
import { evaluateReadiness } from '../../src/service/readiness.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import type { Store } from '../../src/store/port.js';
import { parseExposition, sampleValue } from '../deploy/signals.js';
import { clusterDb, expire, type ClusterDb } from './db.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T = 1_800_000_000_000;
const clock = { now: () => T, monotonic: () => performance.now() };
const wallets = ['a0', 'a1', 'a2', 'a3'].map((name) => ({ name, address: `Addr${name}` }));
const addresses = wallets.map((w) => w.address);

let db: ClusterDb;
let store: Store;
beforeEach(async () => {
  db = await clusterDb();
  store = await openPostgresStore(db.url, { logger: silentLogger(), clock });
  // The last successes the database holds: every wallet polled well 10 s ago (by whichever daemon).
  for (const w of wallets) {
    await store.recordPoll(w.name, w.address, T - 10_000, {
      ok: true,
      summary: { address: w.address, epoch: '2027-01-15', pendingLamports: 1n, lifetimeLamports: null, rank: null, tier: null, breakdown: [], raw: {} },
    });
  }
});
afterEach(async () => {
  await store.close();
  await db.close();
});

/** A daemon's metrics, started an hour ago, wired to its manager; nothing polled in this process. */
function daemonMetrics(manager: LeaseManager): Metrics {
  const m = createMetrics({
    processMetrics: false,
    clock,
    startedAt: T - HOUR,
    cluster: () => clusterCounts(manager),
    fleet: createFleet({ scope: heldScope(manager) }),
  });
  m.configure({ wallets, rules: [], perWallet: true, staleAfterMs: 3 * MINUTE });
  watchLeases(manager, { metrics: m, store, logger: silentLogger() });
  return m;
}

async function scrape(m: Metrics) {
  const s = parseExposition(await m.render());
  const losses = Object.fromEntries(['expired', 'taken', 'deadline', 'recovery_failed'].map((reason) => [reason, sampleValue(s, 'autoclaim_lease_losses_total', { reason })]));
  return {
    held: sampleValue(s, 'autoclaim_leases_held'),
    live: sampleValue(s, 'autoclaim_cluster_daemons_live'),
    stale: sampleValue(s, 'autoclaim_wallets_stale'),
    losses,
    perWallet: s.filter((x) => x.name === 'autoclaim_wallet_last_successful_poll_timestamp_seconds').map((x) => x.labels.wallet).sort(),
  };
}

async function round(...managers: LeaseManager[]): Promise<void> {
  for (const m of managers) await m.tick();
  await Promise.all(managers.map((m) => m.settled()));
}

describe('cluster metrics', () => {
  it('count held leases, live daemons and losses by reason; staleness covers only the wallets held', async () => {
    let mono = performance.now();
    const a = new LeaseManager({ db: db.pool(), clock: { monotonic: () => mono }, addresses: () => addresses, leaseMs: 30_000, id: 'a', host: 'h', pid: 1 });
    const b = new LeaseManager({ db: db.pool(), clock: { monotonic: () => performance.now() }, addresses: () => addresses, leaseMs: 30_000, id: 'b', host: 'h', pid: 2 });
    const ma = daemonMetrics(a);
    const mb = daemonMetrics(b);

    // Before its first round: every series there, at zero; it counts itself live; holding nothing,
    // it has no wallet to be stale (unscoped, all four would be: none polled in this process...
    // and the start was an hour ago).
    expect(await scrape(ma)).toEqual({ held: 0, live: 1, stale: 0, losses: { expired: 0, taken: 0, deadline: 0, recovery_failed: 0 }, perWallet: [] });

    await a.register();
    await b.register();
    for (let i = 0; i < 10 && !(a.held().length === 2 && b.held().length === 2); i++) await round(a, b);
    expect([a.held().length, b.held().length]).toEqual([2, 2]);
    const sa = await scrape(ma);
    expect(sa).toMatchObject({ held: 2, live: 2, stale: 0, perWallet: a.held().map((x) => x.slice(4)).sort() });
    expect((await scrape(mb)).perWallet).toEqual(b.held().map((x) => x.slice(4)).sort());
    // Each daemon's last success is that of its wallets, as the database had it when it took them.
    expect(ma.fleet.lastSuccessAt()).toBe(T - 10_000);

    // a's wallets were not polled since they were taken, and they go stale — for a, and for a only.
    const later = T + 10 * MINUTE;
    expect(ma.fleet.staleCount(later, 3 * MINUTE, T - HOUR)).toBe(2);
    expect(mb.fleet.staleCount(later, 3 * MINUTE, T - HOUR)).toBe(2);

    // a paused past its local deadline: both leases lost ('deadline'); it takes them back (its
    // rows in the database are still its own) with a raised token.
    mono += 30_000;
    await round(a);
    expect((await scrape(ma)).losses).toEqual({ expired: 0, taken: 0, deadline: 2, recovery_failed: 0 });
    expect(a.held()).toHaveLength(2);

    // a cut off long enough for its leases to lapse; b takes every wallet; a hears they were taken.
    await expire(db.sql, 'a');
    await round(b);
    expect(b.held()).toHaveLength(4);
    await round(a);
    const after = await scrape(ma);
    expect(after).toEqual({ held: 0, live: 2, stale: 0, losses: { expired: 0, taken: 2, deadline: 2, recovery_failed: 0 }, perWallet: [] });
    expect(await scrape(mb)).toMatchObject({ held: 4, stale: 0, perWallet: ['a0', 'a1', 'a2', 'a3'], losses: { taken: 0, deadline: 0 } });
    // The wallets b took over came with the last success the database had, not b's view at start.
    expect(mb.fleet.staleCount(T + MINUTE, 3 * MINUTE, T - HOUR)).toBe(0);

    // a, holding nothing while b is live, is standby: not ready, not a fault, no poll check.
    const readiness = evaluateReadiness({
      now: T,
      lastSuccessAt: ma.fleet.lastSuccessAt(),
      startedAt: T - HOUR,
      pollIntervalMs: MINUTE,
      staleAfterIntervals: 3,
      dbError: undefined,
      signing: { all: undefined, wallets: new Map() },
      signersDown: [],
      configValid: true,
      cluster: clusterCounts(a),
    });
    expect(readiness).toMatchObject({ ready: false, standby: true, reasons: [expect.stringMatching(/^cluster: standby: /)] });

    await a.release();
    await b.release();
  });
});
