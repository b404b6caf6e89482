// §4 rate budget: the daemon's `run` against a sandbox that enforces the same budget with its own
// token bucket (a 429 there means the client went over), with wallets outnumbering the budget.
// Scaled down in time: 500 a minute with burst 10 and a poll every 6 s, instead of burst 100 and
// a poll a minute, so a 90 s run covers 15 poll intervals.
import { API_KEY, CLI, NEVER_RULE, events, log, sleep, startProcess, walletFixtures, writeRunConfig } from './lib/common.mjs';
import { forkSandbox } from './lib/sandbox-client.mjs';

/**
 * The largest number of requests seen in any window beyond what the refill allows in it:
 * max over i ≤ j of (j - i + 1) - rate·(t_j - t_i). A token-bucket-conforming stream keeps this
 * at or below the burst.
 */
export function effectiveBurst(times, perMinute) {
  const r = perMinute / 60_000;
  let best = 0;
  let maxStart = Number.NEGATIVE_INFINITY;
  times.forEach((t, j) => {
    maxStart = Math.max(maxStart, r * t - j);
    best = Math.max(best, j + 1 - r * t + maxStart);
  });
  return best;
}

export async function benchRateBudget({ wallets: n = 2000, perMinute = 500, burst = 10, poll = '*/6 * * * * *', seconds = 90 } = {}) {
  const fleet = (await walletFixtures(10_000)).slice(0, n);
  const sandbox = await forkSandbox({
    apiKey: API_KEY,
    rateLimit: { perMinute, burst },
    wallets: fleet.map((w) => ({ address: w.address, pendingLamports: '0', accrualLamportsPerSec: '1000' })),
  });
  try {
    const { config } = writeRunConfig(`rate-${n}`, { fixtureSize: 10_000, baseUrl: sandbox.url, wallets: fleet, rules: NEVER_RULE, perMinute, burst, poll, readAttempts: 3 });
    await sandbox.resetStats();
    await sandbox.arrivals({ on: true, take: true });
    const daemon = startProcess([CLI, 'run', '--config', config], { env: { AUTOCLAIM_API_KEY: API_KEY } });
    await sleep(seconds * 1000);
    const { times } = await sandbox.arrivals({ on: false, take: true });
    const stats = await sandbox.stats();
    const out = await daemon.stop();
    const ev = events(out.stdout);
    const span = times.length > 1 ? times.at(-1) - times[0] : 0;
    const capacity = burst + (perMinute * span) / 60_000;
    // Steady state: after the first burst is spent, the refill alone is the budget.
    const steadyFrom = times[0] + (burst * 60_000) / perMinute;
    const steady = times.filter((t) => t >= steadyFrom);
    const steadySpan = steady.length > 1 ? steady.at(-1) - steadyFrom : 0;
    let peak1s = 0;
    for (let i = 0, j = 0; j < times.length; j++) {
      while (times[j] - times[i] >= 1000) i++;
      peak1s = Math.max(peak1s, j - i + 1);
    }
    const result = {
      wallets: n,
      perMinute,
      burst,
      poll,
      seconds,
      requests: times.length,
      limiter429: stats.limiter429,
      served429: stats.served429,
      usedOfCapacity: times.length / capacity,
      steadyUsed: steadySpan > 0 ? steady.length / ((perMinute * steadySpan) / 60_000) : NaN,
      effectiveBurst: effectiveBurst(times, perMinute),
      peakPerMinute: stats.peakPerMinute,
      peak1s,
      overlapWarnings: ev.filter((e) => e.event === 'poll.overlap').length,
      pollsOk: ev.filter((e) => e.event === 'poll.ok').length,
      exitCode: out.code,
    };
    log(`rate budget: ${result.requests} requests in ${seconds} s, ${result.limiter429} limiter 429s, effective burst ${result.effectiveBurst.toFixed(2)}`);
    return result;
  } finally {
    await sandbox.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await benchRateBudget({ seconds: Number(process.argv[2] ?? 90) }));
