// §1 poll-cycle throughput, §2 start-up and §3 peak RSS: `once` as a whole process against a plain
// undici script doing the same GETs, run alternately against one forked sandbox so that both see
// the same server and the same machine load; figures are medians over the runs.
import { API_KEY, CLI, NEVER_RULE, SERVICE_ENV, SERVICE_NODE_ARGS, events, log, median, runProcess, walletFixtures, walletsFile, writeRunConfig } from './lib/common.mjs';
import { forkSandbox } from './lib/sandbox-client.mjs';

/** The daemon's wallet-turn concurrency (DEFAULT_CONCURRENCY in src/daemon.ts) and api.connections' default. */
export const DAEMON_CONCURRENCY = 16;
export const DEFAULT_CONNECTIONS = 16;

const UNLIMITED = { perMinute: 1_000_000_000, burst: 1_000_000 };

/**
 * Spawn time to the start of the cycle, and from there to once.done, from the log's own timestamps.
 * The cycle starts at `once.started` (logged as the first polls go out); a build from before it
 * (the baseline) is timed from its first `poll.ok`, a few ms later. Beyond 1,000 wallets poll.ok
 * is at debug, so `once.started` is the mark that is always there.
 */
function phases(stdout, spawnedAt) {
  const ev = events(stdout);
  const first = ev.find((e) => e.event === 'once.started') ?? ev.find((e) => e.event === 'poll.ok');
  const done = ev.find((e) => e.event === 'once.done');
  if (!first || !done) return { startupMs: NaN, cycleMs: NaN, polled: 0 };
  const t0 = Date.parse(first.time);
  return { startupMs: t0 - spawnedAt, cycleMs: Date.parse(done.time) - t0, polled: done.polled };
}

/**
 * `once` as the service would run it: with the node flags and environment of `npm start`
 * (SERVICE_NODE_ARGS, SERVICE_ENV); `bare` runs a bare `node` with neither.
 */
async function onceRun(config, nodeArgs = SERVICE_NODE_ARGS, cli = CLI, { bare = false } = {}) {
  const spawnedAt = Date.now();
  const r = await runProcess([cli, 'once', '--config', config], { env: { ...(bare ? {} : SERVICE_ENV), AUTOCLAIM_API_KEY: API_KEY }, nodeArgs });
  if (r.code !== 0) throw new Error(`once exited ${r.code}: ${r.stderr.slice(0, 2000)}`);
  return { wallMs: r.wallMs, cpuSec: r.cpuSec, peakRssKb: r.peakRssKb, logLines: r.lines, ...phases(r.stdout, spawnedAt) };
}

async function rawRun(url, n) {
  const r = await runProcess(['bench/lib/raw-poll.mjs', url, walletsFile(n), String(DAEMON_CONCURRENCY), String(DEFAULT_CONNECTIONS)], {
    env: { AUTOCLAIM_API_KEY: API_KEY },
  });
  if (r.code !== 0) throw new Error(`raw script exited ${r.code}: ${r.stderr.slice(0, 2000)}`);
  return { wallMs: r.wallMs, cpuSec: r.cpuSec, peakRssKb: r.peakRssKb };
}

async function checkRun(config) {
  const r = await runProcess([CLI, 'check', '--config', config], { env: { AUTOCLAIM_API_KEY: API_KEY } });
  if (r.code !== 0) throw new Error(`check exited ${r.code}: ${r.stderr.slice(0, 2000)}`);
  return { wallMs: r.wallMs, cpuSec: r.cpuSec, peakRssKb: r.peakRssKb };
}

/** Module loading, config pipeline and key loading, timed separately in a fresh process. */
async function phasesRun(config) {
  const r = await runProcess(['bench/lib/startup-phases.mjs', config], { env: { AUTOCLAIM_API_KEY: API_KEY } });
  if (r.code !== 0) throw new Error(`startup-phases exited ${r.code}: ${r.stderr.slice(0, 2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

/** A node process that loads nothing: the floor under every start-up figure. */
async function bareNode() {
  const r = await runProcess(['-e', '0']);
  return { wallMs: r.wallMs };
}

/**
 * CPU per poll with parts of the cycle switched off (bench/lib/cycle-cost.mjs), in a fresh process;
 * of another build when `dist` is given (the baseline's).
 */
export async function cycleCost({ wallets = 5000, rounds = 2, dist } = {}) {
  await walletFixtures(10_000);
  const r = await runProcess(['bench/lib/cycle-cost.mjs', String(wallets), String(rounds)], { env: dist === undefined ? {} : { BENCH_DIST: dist } });
  if (r.code !== 0) throw new Error(`cycle-cost exited ${r.code}: ${r.stderr.slice(0, 2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

/**
 * `sizes`: wallet counts; each is run with the wallets in a wallets_file and as a YAML list.
 * `baselineCli`: another build's CLI (`--baseline=DIR`), whose `once` runs beside this one's, in
 * every run, against the same sandbox: the before and after of a change under the same load.
 */
/** The `once` figures of one series of runs, each ratio against the raw run of the same round. */
function onceSummary(runsOf, raw) {
  return {
    onceMs: median(runsOf.map((d) => d.wallMs)),
    ratio: median(runsOf.map((d, i) => raw[i].wallMs / d.wallMs)),
    onceCpuSec: median(runsOf.map((d) => d.cpuSec)),
    startupMs: median(runsOf.map((d) => d.startupMs)),
    oncePeakRssMb: Math.max(...runsOf.map((d) => d.peakRssKb)) / 1024,
    oncePeakRssMedianMb: median(runsOf.map((d) => d.peakRssKb)) / 1024,
    oncePeakRssRunsMb: runsOf.map((d) => d.peakRssKb / 1024),
  };
}

export async function benchThroughput({ sizes, runs, baselineCli }) {
  const out = [];
  for (const n of sizes) {
    const wallets = await walletFixtures(n);
    // Wallets accrue slowly and the rule's threshold is out of reach: pure poll cycles.
    const sandbox = await forkSandbox({
      apiKey: API_KEY,
      wallets: wallets.map((w) => ({ address: w.address, pendingLamports: '0', accrualLamportsPerSec: '1000' })),
    });
    try {
      const daemon = [];
      const raw = [];
      const check = [];
      const bare = [];
      const startup = [];
      // The same runs with the wallets in a JSON Lines `wallets_file` (the form for large fleets).
      const side = { daemon: [], check: [], startup: [] };
      // The baseline's `once`, wallets_file and YAML list, run beside each of this build's.
      const before = { daemon: [], side: [] };
      for (let i = 0; i < runs; i++) {
        const { config } = writeRunConfig(`once-${n}-${i}`, { fixtureSize: n, baseUrl: sandbox.url, wallets, rules: NEVER_RULE, ...UNLIMITED });
        const { config: sideConfig } = writeRunConfig(`once-${n}-${i}-side`, { fixtureSize: n, baseUrl: sandbox.url, wallets, rules: NEVER_RULE, ...UNLIMITED, sideFile: true });
        // Alternate which goes first, so a drift in machine load does not favour one side.
        if (i % 2 === 0) {
          raw.push(await rawRun(sandbox.url, n));
          daemon.push(await onceRun(config));
        } else {
          daemon.push(await onceRun(config));
          raw.push(await rawRun(sandbox.url, n));
        }
        side.daemon.push(await onceRun(sideConfig));
        if (baselineCli !== undefined) {
          before.side.push(await onceRun(sideConfig, SERVICE_NODE_ARGS, baselineCli));
          before.daemon.push(await onceRun(config, SERVICE_NODE_ARGS, baselineCli));
        }
        check.push(await checkRun(config));
        side.check.push(await checkRun(sideConfig));
        bare.push(await bareNode());
        startup.push(await phasesRun(config));
        side.startup.push(await phasesRun(sideConfig));
        log(
          `throughput n=${n} run ${i + 1}/${runs}: once ${daemon.at(-1).wallMs.toFixed(0)} ms (wallets_file ${side.daemon.at(-1).wallMs.toFixed(0)} ms), ` +
            `raw ${raw.at(-1).wallMs.toFixed(0)} ms, check ${check.at(-1).wallMs.toFixed(0)} ms`,
        );
      }
      // The same with a bare `node` (V8's default young generation): what the service flags buy.
      const { config: bareConfig } = writeRunConfig(`once-${n}-bare`, { fixtureSize: n, baseUrl: sandbox.url, wallets, rules: NEVER_RULE, ...UNLIMITED, sideFile: true });
      const bareFlags = await onceRun(bareConfig, [], CLI, { bare: true });
      const summarize = (runsOf, checks, phases) => ({
        onceMs: median(runsOf.map((d) => d.wallMs)),
        ratio: median(runsOf.map((d, i) => raw[i].wallMs / d.wallMs)),
        cycleRatio: median(runsOf.map((d, i) => raw[i].wallMs / d.cycleMs)),
        onceCpuSec: median(runsOf.map((d) => d.cpuSec)),
        startupMs: median(runsOf.map((d) => d.startupMs)),
        cycleMs: median(runsOf.map((d) => d.cycleMs)),
        checkMs: median(checks.map((c) => c.wallMs)),
        modulesMs: median(phases.map((x) => x.modulesMs)),
        configMs: median(phases.map((x) => x.configMs)),
        keysMs: median(phases.map((x) => x.keysMs)),
        oncePeakRssMb: Math.max(...runsOf.map((d) => d.peakRssKb)) / 1024,
        oncePeakRssMedianMb: median(runsOf.map((d) => d.peakRssKb)) / 1024,
        oncePeakRssRunsMb: runsOf.map((d) => d.peakRssKb / 1024),
        checkPeakRssMb: Math.max(...checks.map((c) => c.peakRssKb)) / 1024,
      });
      out.push({
        wallets: n,
        runs,
        daemon,
        raw,
        check,
        bare,
        side,
        sideMedian: summarize(side.daemon, side.check, side.startup),
        ...(baselineCli === undefined ? {} : { before: { side: onceSummary(before.side, raw), yaml: onceSummary(before.daemon, raw) } }),
        median: {
          ...summarize(daemon, check, startup),
          rawMs: median(raw.map((r) => r.wallMs)),
          rawCpuSec: median(raw.map((r) => r.cpuSec)),
          bareNodeMs: median(bare.map((b) => b.wallMs)),
          onceBareNode: { peakRssMb: bareFlags.peakRssKb / 1024, wallMs: bareFlags.wallMs, cpuSec: bareFlags.cpuSec },
          rawPeakRssMb: Math.max(...raw.map((r) => r.peakRssKb)) / 1024,
        },
      });
    } finally {
      await sandbox.close();
    }
  }
  return out;
}
