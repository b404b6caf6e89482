// §7 "spend the budget where it matters": the delay from a wallet crossing its rule's threshold to
// its claim, round-robin against the accrual planner, under the same rate budget. A simulation in
// virtual time: the real planners and the scheduler's own spreading (dist/scheduler), the
// sandbox's own world model (SandboxWorld: linear accrual, claims reset pending) on a fake clock,
// and the rate limiter modelled per interval (a poll without a token waits for the next one).
// Deterministic: a seeded PRNG draws thresholds, rates, starting pending and the jitter.
import { join } from 'node:path';
import { DIST, mean, prng, quantile } from './lib/common.mjs';

const { SandboxWorld } = await import(join(DIST, 'sandbox/world.js'));
const { generateKeypair } = await import(join(DIST, 'keys/signer.js'));
const { pollWindowMs, slotFloors, spreadOffsets } = await import(join(DIST, 'scheduler/scheduler.js'));
const { pollBudget, RoundRobinPlanner, lowestPendingThreshold } = await import(join(DIST, 'scheduler/planner.js'));
const { AccrualPlanner } = await import(join(DIST, 'scheduler/priority.js'));

const LAMPORTS = 1_000_000_000n;
const MIN = 60_000;
/** The fresh read before signing and the POST: what a claim costs beyond its poll. */
const REQUESTS_PER_CLAIM = 2;

const THRESHOLDS_SOL = ['0.1', '0.5', '1', '5'];
const rules = THRESHOLDS_SOL.map((sol) => ({
  name: `claim-${sol}`,
  when: [{ field: 'pending_sol', op: 'gte', value: BigInt(Math.round(Number(sol) * 1e9)) }],
  do: [{ kind: 'claim' }],
  limits: { oncePerEpoch: false, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
}));

/**
 * One run: `wallets` wallets whose time from empty to threshold is log-uniform in
 * [minCrossMin, maxCrossMin] minutes; polls every intervalMs with the budget the rate limit
 * leaves (10% kept for claims); `drift` multiplies every rate by a factor in [0.5, 2] every 30 min.
 */
export function simulate({ planner: kind, wallets: n, hours, perMinute, intervalMs = MIN, jitterMs = 10_000, maxIntervals = 5, minCrossMin = 30, maxCrossMin = 1440, drift = false, seed = 7 }) {
  const random = prng(seed);
  let now = 0;
  const clock = { now: () => now, monotonic: () => now };
  const world = new SandboxWorld({ clock, epochMs: 365 * 86_400_000, symbols: ['SOL2X'], defaultAccrualLamportsPerSec: 0n, autoRegister: false });
  const fleet = [];
  for (let i = 0; i < n; i++) {
    const rule = rules[Math.floor(random() * rules.length)];
    const threshold = rule.when[0].value;
    const crossMs = Math.exp(Math.log(minCrossMin) + random() * Math.log(maxCrossMin / minCrossMin)) * MIN;
    const rate = (threshold * 1000n) / BigInt(Math.round(crossMs)) || 1n; // lamports per second
    const start = (threshold * BigInt(Math.floor(random() * 1000))) / 1000n;
    const { address } = generateKeypair();
    world.setWallet(address, { pendingLamports: start, accrualLamportsPerSec: rate });
    const config = { name: `w${i}`, address, key: { env: 'UNUSED' }, rules: [rule.name] };
    fleet.push({ config, threshold, rate, crossedAt: undefined, lastPollTick: undefined, maxGap: 0 });
  }
  const byName = new Map(fleet.map((f) => [f.config.name, f]));
  const configs = fleet.map((f) => f.config);
  const planner = kind === 'round-robin' ? new RoundRobinPlanner() : new AccrualPlanner({ threshold: (w) => lowestPendingThreshold(w, rules), maxIntervals });
  const budget = pollBudget({ perMinute }, intervalMs);

  /** The exact time a wallet's pending reaches its threshold on the current accrual segment. */
  const project = (f) => {
    const pending = world.wallet(f.config.address).pendingLamports;
    if (pending >= f.threshold) return now;
    const rate = world.wallet(f.config.address).accrualLamportsPerSec;
    return rate === 0n ? Infinity : now + Number(((f.threshold - pending) * 1000n + rate - 1n) / rate);
  };
  for (const f of fleet) f.projected = project(f);

  const delays = [];
  let polls = 0;
  let claims = 0;
  let wasted = 0;
  let peakRequestsPerInterval = 0;
  let carried = [];
  let carriedMax = 0;
  const capacity = pollBudget({ perMinute }, intervalMs, 0.02); // the limiter's refill, net of its headroom
  const warmupMs = 60 * MIN;
  const ticks = Math.floor((hours * 60 * MIN) / intervalMs);
  const jitter = Math.min(jitterMs, intervalMs * 0.2);
  for (let k = 0; k < ticks; k++) {
    const tickAt = k * intervalMs;
    if (drift && k > 0 && tickAt % (30 * MIN) === 0) {
      now = tickAt;
      for (const f of fleet) {
        if (f.crossedAt === undefined && f.projected <= now) f.crossedAt = f.projected;
        const factor = Math.exp(Math.log(0.5) + random() * Math.log(4)); // ×0.5..×2, geometric mean 1
        const rate = BigInt(Math.max(1, Math.round(Number(world.wallet(f.config.address).accrualLamportsPerSec) * factor)));
        world.setWallet(f.config.address, { accrualLamportsPerSec: rate });
        if (f.crossedAt === undefined) f.projected = project(f);
      }
    }
    now = tickAt;
    // The rate limiter, per interval: `capacity` requests (its refill). A poll that finds none left
    // waits for the next interval and goes first there, as in the limiter's FIFO; meanwhile the
    // scheduler neither offers that wallet nor counts its request again (budget net of busy turns).
    let tokens = capacity;
    const busy = new Set(carried.map((c) => c.w.name));
    // The window as PollScheduler sets it (from the most the planner may pick), and tells the planner.
    const net = Math.max(0, budget - busy.size);
    const windowMs = pollWindowMs(intervalMs, jitterMs, Math.min(configs.length, Math.floor(net)), budget);
    const chosen = planner.choose(busy.size === 0 ? configs : configs.filter((w) => !busy.has(w.name)), net, now, intervalMs, undefined, windowMs);
    // The planner's floors, as PollScheduler passes them: jitter does not wrap a pick slotted after its crossing to before it.
    const offsets = spreadOffsets(chosen.length, windowMs, jitter, random, slotFloors(planner, chosen, now));
    const order = [...carried.map((c) => ({ w: c.w, at: tickAt })), ...chosen.map((w, j) => ({ w, at: tickAt + (offsets[j] ?? 0) })).sort((a, b) => a.at - b.at)];
    carried = [];
    let requests = 0;
    for (const { w, at } of order) {
      if (tokens < 1) {
        carried.push({ w });
        continue;
      }
      now = at;
      const f = byName.get(w.name);
      if (f.crossedAt === undefined && f.projected <= now) f.crossedAt = f.projected;
      const summary = world.summary(w.address);
      polls++;
      requests++;
      tokens--;
      planner.observe(w, summary, now);
      if (f.lastPollTick !== undefined) f.maxGap = Math.max(f.maxGap, k - f.lastPollTick);
      f.lastPollTick = k;
      if (summary.pendingLamports >= f.threshold) {
        // A claim is a fresh read and a POST; they go even if they overdraw this interval's tokens
        // (they would wait a moment in the limiter), and the polls after them pay for it.
        world.claim(w.address, 'simulated');
        claims++;
        requests += REQUESTS_PER_CLAIM;
        tokens -= REQUESTS_PER_CLAIM;
        if (f.crossedAt !== undefined && f.crossedAt >= warmupMs) delays.push((now - f.crossedAt) / 1000);
        f.crossedAt = undefined;
        f.projected = project(f);
      } else {
        wasted++;
      }
    }
    carriedMax = Math.max(carriedMax, carried.length);
    peakRequestsPerInterval = Math.max(peakRequestsPerInterval, requests);
  }
  return {
    planner: kind,
    wallets: n,
    hours,
    budget,
    claims,
    polls,
    pollsWithoutClaim: wasted,
    measured: delays.length,
    meanDelaySec: mean(delays),
    p50DelaySec: quantile(delays, 0.5),
    p95DelaySec: quantile(delays, 0.95),
    maxDelaySec: Math.max(...delays),
    maxGapIntervals: Math.max(...fleet.map((f) => f.maxGap)),
    neverPolled: fleet.filter((f) => f.lastPollTick === undefined).length,
    peakRequestsPerInterval,
    mostPollsWaitingForTokens: carriedMax,
  };
}

/** Round-robin and the accrual planner side by side on the same worlds. */
export function benchScheduling({ wallets = 2000, hours = 8, perMinute = 500, maxIntervals = 5 } = {}) {
  const scenarios = [
    { name: 'steady accrual', drift: false },
    { name: 'rates drifting ×0.5–2 every 30 min', drift: true },
  ];
  return scenarios.map((s) => {
    const common = { wallets, hours, perMinute, maxIntervals, drift: s.drift };
    const rr = simulate({ ...common, planner: 'round-robin' });
    const accrual = simulate({ ...common, planner: 'accrual' });
    return { scenario: s.name, maxIntervals, roundRobin: rr, accrual, meanRatio: accrual.meanDelaySec / rr.meanDelaySec, p95Ratio: accrual.p95DelaySec / rr.p95DelaySec };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t = performance.now();
  console.log(JSON.stringify(benchScheduling(), null, 1));
  console.error(`${((performance.now() - t) / 1000).toFixed(1)} s`);
}
