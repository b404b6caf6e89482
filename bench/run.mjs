// `npm run bench`: every benchmark of issue #6 against the sandbox on loopback, then
// bench/RESULTS.md. Options: --quick (small sizes, one run: a smoke test of the harness),
// --only=signing,scheduling,footprint,throughput,rate,latency,plannerLive,cluster (a subset); --render
// (rewrite RESULTS.md from bench/out/results.json, e.g. to fold in a new bench/SOAK.json);
// --baseline=DIR (another checkout, built: its `--help`, `once` and per-poll CPU measured beside
// this build's, alternately, so the report shows before and after under the same load).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { log, machine, OUT, REPO } from './lib/common.mjs';
import { benchCluster } from './cluster.mjs';
import { benchFootprint } from './footprint.mjs';
import { benchLatency } from './latency.mjs';
import { benchPlannerLive } from './planner-live.mjs';
import { benchRateBudget } from './rate-budget.mjs';
import { renderReport } from './report.mjs';
import { benchScheduling } from './scheduling.mjs';
import { benchSigning } from './signing.mjs';
import { benchThroughput, cycleCost } from './throughput.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
const want = (name) => only === undefined || only.includes(name);
const baselineDir = args.find((a) => a.startsWith('--baseline='))?.slice('--baseline='.length);
const baseline = baselineDir === undefined ? undefined : { dir: baselineDir, dist: join(baselineDir, 'dist'), cli: join(baselineDir, 'dist/cli/main.js') };
if (baseline !== undefined && !existsSync(baseline.cli)) throw new Error(`--baseline: no ${baseline.cli} (build that checkout first)`);

mkdirSync(OUT, { recursive: true });
if (args.includes('--render')) {
  // Re-render bench/RESULTS.md from the last run's measurements (e.g. after `npm run bench:soak`).
  const last = JSON.parse(readFileSync(join(OUT, 'results.json'), 'utf8'));
  writeFileSync(join(REPO, last.quick ? 'bench/out/RESULTS.quick.md' : 'bench/RESULTS.md'), renderReport(last));
  process.exit(0);
}
/** Which commit the baseline checkout is at, for the report. */
function baselineInfo(dir) {
  try {
    return { dir, commit: execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim() };
  } catch {
    return { dir, commit: 'unknown' };
  }
}

const started = performance.now();
const results = { machine: machine(), quick, sections: {}, ...(baseline === undefined ? {} : { baseline: baselineInfo(baseline.dir) }) };
const timed = async (name, fn) => {
  if (!want(name)) return;
  const t = performance.now();
  log(`${name} …`);
  results.sections[name] = await fn();
  results.sections[name].elapsedSec = (performance.now() - t) / 1000;
  log(`${name} done in ${results.sections[name].elapsedSec.toFixed(0)} s`);
  writeFileSync(join(OUT, 'results.json'), JSON.stringify(results, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 1));
};

await timed('signing', async () => benchSigning({ runs: quick ? 1 : 5 }));
await timed('scheduling', async () => ({ scenarios: benchScheduling(quick ? { wallets: 400, hours: 3, perMinute: 100 } : {}) }));
await timed('footprint', async () => benchFootprint({ runs: quick ? 2 : 5, baselineCli: baseline?.cli }));
await timed('throughput', async () => {
  const costOpts = quick ? { wallets: 500, rounds: 1 } : { wallets: 3000, rounds: 3 };
  return {
    sizes: await benchThroughput(quick ? { sizes: [100, 1000], runs: 1, baselineCli: baseline?.cli } : { sizes: [100, 1000, 5000, 10_000], runs: 5, baselineCli: baseline?.cli }),
    cycleCost: await cycleCost(costOpts),
    ...(baseline === undefined ? {} : { cycleCostBefore: await cycleCost({ ...costOpts, dist: baseline.dist }) }),
  };
});
await timed('rate', async () => benchRateBudget(quick ? { seconds: 20 } : { seconds: 75 }));
await timed('latency', async () => benchLatency(quick ? { runs: 1, onceWallets: 200, runWallets: 100 } : { runs: 3 }));
await timed('plannerLive', async () => benchPlannerLive(quick ? { seconds: 15 } : {}));
await timed('cluster', async () => benchCluster({ quick }));

results.totalSec = (performance.now() - started) / 1000;
writeFileSync(join(OUT, 'results.json'), JSON.stringify(results, null, 1));
const file = join(REPO, quick ? 'bench/out/RESULTS.quick.md' : 'bench/RESULTS.md');
writeFileSync(file, renderReport(results));
log(`wrote ${file} (${results.totalSec.toFixed(0)} s in all)`);
