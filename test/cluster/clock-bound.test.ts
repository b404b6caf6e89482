// One clock (issue 25, finding 1): each lease round compares this daemon's wall clock with the
// database's clock_timestamp(), read in the heartbeat's own round trip. The measurement (pure),
// then the manager against a real PostgreSQL with its wall clock offset by 90 s, then a whole
// daemon (runtime, executor, in-process sandbox) that signs nothing and is not ready while its
// clock is out of bounds, and signs again once it is back.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClockBound, measureSkew, withinBound } from '../../src/cluster/clock-bound.js';
import { LeaseManager } from '../../src/cluster/leases.js';
import { Daemon } from '../../src/daemon.js';
import { createDecisionClock } from '../../src/executor/decision-clock.js';
import { openRuntime } from '../../src/runtime.js';
import { evaluateReadiness } from '../../src/service/readiness.js';
import { makeWallets, tempDir } from '../e2e/helpers.js';
import { captureLog } from '../support/log.js';
import { createDatabase } from '../support/postgres.js';
import { sandboxYaml } from '../daemon/in-process.js';
import { clusterDb, type ClusterDb } from './db.js';

describe('measureSkew and withinBound', () => {
  it('puts the database’s reading at the middle of the round trip, good to half of it', () => {
    expect(measureSkew(10_000, 40, 9_000)).toEqual({ skewMs: 1_020, rttMs: 40 });
    expect(measureSkew(10_000, 0, 100_000)).toEqual({ skewMs: -90_000, rttMs: 0 });
    expect(measureSkew(10_000, -5, 10_000)).toEqual({ skewMs: 0, rttMs: 0 }); // a monotonic clock never runs back
  });

  it('is within bounds only when certainly within: |skew| + rtt/2 ≤ max', () => {
    expect(withinBound({ skewMs: 4_000, rttMs: 2_000 }, 5_000)).toBe(true);
    expect(withinBound({ skewMs: 4_000, rttMs: 2_002 }, 5_000)).toBe(false);
    expect(withinBound({ skewMs: -4_999, rttMs: 0 }, 5_000)).toBe(true);
    expect(withinBound({ skewMs: -90_000, rttMs: 1 }, 5_000)).toBe(false);
  });

  it('ClockBound opens one episode (error), keeps it while out, closes it (info) when back', () => {
    const log = captureLog();
    const bound = new ClockBound(5_000, log.logger, 'd');
    bound.observe({ skewMs: 100, rttMs: 2 }, 1);
    expect(bound.refusal()).toBeUndefined();
    bound.observe({ skewMs: 90_000, rttMs: 2 }, 2);
    bound.observe({ skewMs: 91_000, rttMs: 2 }, 3);
    expect(bound.refusal()).toMatchObject({ skewMs: 91_000, maxMs: 5_000, since: 2 });
    expect(bound.refusal()?.reason).toContain('90.0s ahead of');
    bound.observe({ skewMs: 10, rttMs: 2 }, 4);
    expect(bound.refusal()).toBeUndefined();
    expect(log.events('clock.skew')).toMatchObject([{ level: 'error', against: 'database', skew_ms: 90_000, max_ms: 5_000 }]);
    expect(log.events('clock.skew_resolved')).toMatchObject([{ level: 'info' }]);
  });

  it('the decision clock follows the wall clock when it is off the database’s and the wall clock is not (cluster review, helper 29)', () => {
    const log = captureLog();
    const bound = new ClockBound(5_000, log.logger, 'd');
    let wall = 1_000_000 + 90_000;
    const decision = createDecisionClock({ now: () => wall, monotonic: () => 0 });
    bound.decision = decision;
    // Both 90 s ahead (the wall clock wrong since boot): refused, nothing to follow yet.
    bound.observe({ skewMs: 90_000, rttMs: 2 }, 1, { skewMs: 90_000, rttMs: 2 });
    expect(decision.now()).toBe(1_090_000);
    expect(log.events('clock.decision_reset')).toEqual([]);
    // NTP sets the wall clock right; the decision clock is still 90 s ahead: it follows, back in time too.
    wall = 1_000_000;
    bound.observe({ skewMs: 10, rttMs: 2 }, 2, { skewMs: 90_010, rttMs: 2 });
    expect(decision.now()).toBe(1_000_000);
    expect(bound.refusal()).toBeUndefined();
    expect(log.events('clock.decision_reset')).toMatchObject([{ level: 'warn', against: 'database', skew_ms: 90_010 }]);
    // Within bounds: left alone.
    wall = 1_000_000 + 3_000;
    bound.observe({ skewMs: 3_000, rttMs: 2 }, 3, { skewMs: 10, rttMs: 2 });
    expect(decision.now()).toBe(1_000_000);
    expect(log.events('clock.decision_reset')).toHaveLength(1);
  });
});

describe('the lease manager against a real PostgreSQL', () => {
  let db: ClusterDb;
  beforeEach(async () => {
    db = await clusterDb();
  });
  afterEach(async () => {
    await db.close();
  });

  it('measures the skew at every round: 90 s ahead is refused, back in bounds is not', async () => {
    let offset = 90_000;
    const log = captureLog();
    const m = new LeaseManager({
      db: db.pool(),
      clock: { now: () => Date.now() + offset, monotonic: () => performance.now() },
      addresses: () => ['w1'],
      leaseMs: 3_000,
      id: 'a',
      logger: log.logger,
    });
    try {
      await m.register();
      expect(m.clockRefusal()).toMatchObject({ maxMs: 5_000 });
      expect(m.clockRefusal()!.skewMs).toBeGreaterThan(85_000);
      offset = -90_000;
      await m.tick();
      expect(m.clockRefusal()!.skewMs).toBeLessThan(-85_000);
      offset = 0;
      await m.tick();
      expect(m.clockRefusal()).toBeUndefined();
      expect(log.events('clock.skew')).toHaveLength(1);
      expect(log.events('clock.skew_resolved')).toHaveLength(1);
    } finally {
      await m.release();
    }
  });
});

describe('a daemon whose clock is out of bounds', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('signs nothing and is not ready; back within bounds it signs by itself', async () => {
    const { dir, cleanup } = tempDir('autoclaim-clock-');
    cleanups.push(cleanup);
    const url = await createDatabase();
    const wallets = makeWallets(dir, ['w0']);
    mkdirSync(join(dir, 'state'), { recursive: true });
    const configPath = join(dir, 'autoclaim.yaml');
    writeFileSync(configPath, `${sandboxYaml(wallets)}cluster:\n  max_clock_skew: 5s\n`);
    // Behind, then right: the in-process sandbox dates its epochs by this clock too, and a clock
    // stepped back across midnight UTC (90 s ahead, then right, in the 90 s before midnight) saw
    // the epoch run back, which the daemon refuses: the test failed on a CI run at 23:58.
    let offset = -90_000;
    const clock = { now: () => Date.now() + offset, monotonic: () => performance.now() };
    const log = captureLog();
    const common = { configPath, env: { AUTOCLAIM_STATE_URL: url }, cwd: dir, clock, logger: log.logger, redactor: log.redactor };
    const runtime = await openRuntime({ ...common, lock: true });
    cleanups.push(() => runtime.close());
    const daemon = new Daemon({ ...common, runtime, dry: false, failpoint: () => {} });
    const readiness = () =>
      evaluateReadiness({
        now: clock.now(),
        lastSuccessAt: clock.now(),
        startedAt: clock.now(),
        pollIntervalMs: 60_000,
        staleAfterIntervals: 3,
        dbError: undefined,
        signing: daemon.signingPauses(),
        signersDown: [],
        configValid: true,
        cluster: { held: 1, live: 1 },
      });

    const skewed = await daemon.once();
    expect(skewed).toMatchObject({ wallets: 1, polled: 1, plans: 0 });
    expect(await runtime.store.openPlans()).toEqual([]);
    expect(log.events('clock.skew')).toMatchObject([{ level: 'error', against: 'database' }]);
    expect(log.events('action.sent')).toEqual([]);
    const r = readiness();
    expect(r.ready).toBe(false);
    expect(r.reasons.join('\n')).toMatch(/signing: paused for every wallet .*clock: this machine's clock is \d+\.\ds behind the database's/);

    offset = 0;
    await runtime.cluster!.manager.tick();
    expect(readiness().ready).toBe(true);
    const back = await daemon.once();
    expect(back).toMatchObject({ plans: 1, failed: 0, unknown: 0 });
    expect(log.events('action.acknowledged')).toHaveLength(1);
    expect(log.events('clock.skew_resolved')).toHaveLength(1);
  });
});
