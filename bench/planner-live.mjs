// §7, in real time: the daemon (in this process, from dist/) with its scheduler wired as
// src/daemon.ts wires it (PollScheduler `planner` + `budget`, `observe` on every `poll:ok` event),
// the planner swapped for each run, against a forked sandbox whose wallets accrue at
// different rates towards different thresholds and which enforces the rate budget itself. A
// small, fast world: a poll every 2 s, 1,200 requests a minute, 160 wallets — over four times
// what one interval's budget can poll.
// Measures, per planner: crossing → claim delay (from the claimed amount and the wallet's rate,
// exact for linear accrual), 429s, requests, claims.
import { join } from 'node:path';
import { API_KEY, DIST, log, mean, openInProcess, prng, quantile, sleep, walletFixtures, writeRunConfig } from './lib/common.mjs';
import { forkSandbox } from './lib/sandbox-client.mjs';

const { systemClock } = await import(join(DIST, 'domain.js'));
const { createEvents } = await import(join(DIST, 'events.js'));
const { PollScheduler } = await import(join(DIST, 'scheduler/scheduler.js'));
const { pollBudget, RoundRobinPlanner, lowestPendingThreshold } = await import(join(DIST, 'scheduler/planner.js'));
const { AccrualPlanner } = await import(join(DIST, 'scheduler/priority.js'));

const SOL = 1_000_000_000;
const THRESHOLDS = [0.01, 0.05, 0.1];
const RULES = THRESHOLDS.map(
  (t) => `  - name: claim-${t}
    when:
      pending_sol: { gte: ${t} }
    do:
      - claim
    limits:
      once_per_epoch: false
`,
).join('');

async function runOnce(kind, { wallets: n, seconds, perMinute, burst, poll, intervalMs, minCrossSec, maxCrossSec, seed }) {
  const random = prng(seed);
  const fleet = (await walletFixtures(10_000)).slice(0, n).map((w) => {
    const threshold = THRESHOLDS[Math.floor(random() * THRESHOLDS.length)];
    const crossSec = Math.exp(Math.log(minCrossSec) + random() * Math.log(maxCrossSec / minCrossSec));
    return { ...w, rules: [`claim-${threshold}`], thresholdLamports: BigInt(Math.round(threshold * SOL)), rate: Math.max(1, Math.round((threshold * SOL) / crossSec)), start: Math.floor(random() * threshold * SOL) };
  });
  const sandbox = await forkSandbox({
    apiKey: API_KEY,
    rateLimit: { perMinute, burst },
    wallets: fleet.map((w) => ({ address: w.address, pendingLamports: String(w.start), accrualLamportsPerSec: String(w.rate), balanceLamports: '0' })),
  });
  const { config } = writeRunConfig(`planner-${kind}`, { fixtureSize: 10_000, baseUrl: sandbox.url, wallets: fleet, rules: RULES, perMinute, burst, poll, readAttempts: 3 });
  const { runtime, logger, daemon: makeDaemon } = await openInProcess(config, { level: 'warn' });
  const planner =
    kind === 'accrual' ? new AccrualPlanner({ threshold: (w) => lowestPendingThreshold(w, runtime.config.rules) }) : new RoundRobinPlanner();
  let polls = 0;
  // As src/daemon.ts wires its own planner: observe every good poll on the monotonic clock…
  const events = createEvents();
  events.on('poll:ok', ({ wallet, summary }) => {
    polls++;
    planner.observe(wallet, summary, systemClock.monotonic());
  });
  const daemon = makeDaemon({ events });
  // …and hand the scheduler the planner and the interval's poll budget.
  daemon.makeScheduler = function makeScheduler() {
    return new PollScheduler({
      cron: this.config.schedule.poll,
      jitterMs: this.config.schedule.jitterMs,
      wallets: () => this.config.wallets,
      runWallet: (w) => this.runWallet(w.name),
      clock: systemClock,
      logger,
      concurrency: 16,
      planner,
      budget: (ms) => pollBudget(this.config.api.rateLimit, ms),
    });
  };
  try {
    await sandbox.thresholds(fleet.map((w) => [w.address, w.thresholdLamports]));
    await sandbox.resetStats();
    const warmupSec = Math.max(10, (Math.ceil(n / pollBudget({ perMinute }, intervalMs)) * 2 * intervalMs) / 1000);
    await daemon.start();
    await sleep(warmupSec * 1000);
    await sandbox.crossings(); // drop the warm-up's claims: the planner has not seen every wallet twice yet
    const before = await sandbox.stats();
    await sleep(seconds * 1000);
    const delays = (await sandbox.crossings()).map((ms) => ms / 1000);
    const after = await sandbox.stats();
    return {
      planner: kind,
      claims: delays.length,
      meanDelaySec: mean(delays),
      p50DelaySec: quantile(delays, 0.5),
      p95DelaySec: quantile(delays, 0.95),
      maxDelaySec: Math.max(...delays),
      requests: after.total - before.total,
      limiter429: after.limiter429,
      polls,
      budgetPerInterval: pollBudget({ perMinute }, intervalMs),
    };
  } finally {
    await daemon.stop(5_000);
    await runtime.close();
    await sandbox.close();
  }
}

export async function benchPlannerLive({ seconds = 45, wallets = 160, perMinute = 1200, burst = 40, poll = '*/2 * * * * *', intervalMs = 2_000, minCrossSec = 60, maxCrossSec = 600, seed = 11 } = {}) {
  const opts = { wallets, seconds, perMinute, burst, poll, intervalMs, minCrossSec, maxCrossSec, seed };
  const rr = await runOnce('round-robin', opts);
  log(`planner live: round-robin ${rr.claims} claims, mean ${rr.meanDelaySec.toFixed(2)} s`);
  const accrual = await runOnce('accrual', opts);
  log(`planner live: accrual ${accrual.claims} claims, mean ${accrual.meanDelaySec.toFixed(2)} s`);
  return { ...opts, roundRobin: rr, accrual, meanRatio: accrual.meanDelaySec / rr.meanDelaySec, p95Ratio: accrual.p95DelaySec / rr.p95DelaySec };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await benchPlannerLive({ seconds: Number(process.argv[2] ?? 60) }));
