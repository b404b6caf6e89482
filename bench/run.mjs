// `npm run bench`: the daemon at the scale users live at (bench/scale.mjs), then bench/RESULTS.md.
//   default   `--help`'s peak RSS; `run` at 1,000, 10,000 and 100,000 wallets against the sandbox
//             enforcing 2,500 requests a minute with bursts of 100; 10,000 wallets with and
//             without the node flags and MALLOC_ARENA_MAX of the systemd unit and the image, side
//             by side (both at once, so both see the same load on a shared machine); and 10,000
//             wallets over HTTP and over HTTPS, side by side the same way.
//   --quick   a smoke test of the harness (~1 min): 1,000 wallets for 20 s, `--help` once.
//   --only=help,scale,flags,https,signing,signers,scheduling,rate,latency,plannerLive,cluster
//             a subset; the last seven are the focused benchmarks (signing speed, each signer
//             backend's signs/s and added latency, the planner simulated and live, burst shape,
//             decision latency, the cluster), run only when named.
//   --render  rewrite RESULTS.md from bench/RESULTS.json (e.g. to fold in a new SOAK.json).
// A full-size run keeps its figures in bench/RESULTS.json (committed beside RESULTS.md): the
// sections it ran replace theirs there, the others stay with the date and load they were measured
// at, so `--only=signers` refreshes one section without dropping the rest of the report.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { log, machine, OUT, REPO } from './lib/common.mjs';
import { renderReport } from './report.mjs';
import { benchHelp, benchScale, UNIT_FLAGS } from './scale.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
const DEFAULT = ['help', 'scale', 'flags', 'https'];
const want = (name) => (only === undefined ? DEFAULT.includes(name) : only.includes(name));

mkdirSync(OUT, { recursive: true });
const reportFile = (q) => join(REPO, q ? 'bench/out/RESULTS.quick.md' : 'bench/RESULTS.md');
const dataFile = (q) => (q ? join(OUT, 'results.json') : join(REPO, 'bench/RESULTS.json'));
const json = (v) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x), 1);
if (args.includes('--render')) {
  writeFileSync(reportFile(false), renderReport(JSON.parse(readFileSync(dataFile(false), 'utf8'))));
  process.exit(0);
}

const started = performance.now();
const kept = !quick && existsSync(dataFile(false)) ? JSON.parse(readFileSync(dataFile(false), 'utf8')).sections : {};
const results = { machine: machine(), quick, sections: { ...kept } };
const timed = async (name, fn) => {
  if (!want(name)) return;
  const t = performance.now();
  const loadBefore = loadavg()[0];
  log(`${name} …`);
  const section = await fn();
  // The 1-minute load average before and after: the machine may be shared, and wall-clock figures carry it.
  Object.assign(section, { elapsedSec: (performance.now() - t) / 1000, measuredAt: new Date().toISOString(), load: [loadBefore, loadavg()[0]] });
  results.sections[name] = section;
  log(`${name} done in ${section.elapsedSec.toFixed(0)} s`);
  writeFileSync(dataFile(quick), json(results));
};

// The largest fleet's key files serve every size (a fleet is its first N wallets).
const sizes = quick ? [1000] : [1000, 10_000, 100_000];
const fixture = Math.max(...sizes);
await timed('help', async () => benchHelp({ runs: quick ? 1 : 5 }));
await timed('scale', async () => {
  const runs = [];
  // Five and a half minutes each: the whole window, and its last 150 s once the poll path is compiled (settled).
  for (const n of sizes) runs.push(await benchScale({ wallets: n, fixture, seconds: quick ? 20 : 330, settleSeconds: quick ? 0 : 180 }));
  return { runs };
});
await timed('flags', async () => {
  const n = quick ? 1000 : 10_000;
  const seconds = quick ? 20 : 150;
  const [plain, unit] = await Promise.all([
    benchScale({ wallets: n, fixture, seconds, label: '-plain' }),
    benchScale({ wallets: n, fixture, seconds, label: '-unit', ...UNIT_FLAGS }),
  ]);
  return { plain, unit };
});
// The real API is HTTPS; the scale runs above speak plain HTTP to the sandbox. The two side by side
// (both at once, so both see the same load), as long as the scale runs, say what TLS adds.
await timed('https', async () => {
  const n = quick ? 1000 : 10_000;
  const window = quick ? { seconds: 20 } : { seconds: 330, settleSeconds: 180 };
  const [plain, https] = await Promise.all([
    benchScale({ wallets: n, fixture, ...window, label: '-http' }),
    benchScale({ wallets: n, fixture, ...window, label: '-https', tls: true }),
  ]);
  return { plain, https };
});
const older = {
  signing: async () => (await import('./signing.mjs')).benchSigning({ runs: quick ? 1 : 5 }),
  signers: async () => (await import('./signers.mjs')).benchSigners({ quick }),
  scheduling: async () => ({ scenarios: (await import('./scheduling.mjs')).benchScheduling(quick ? { wallets: 400, hours: 3, perMinute: 100 } : {}) }),
  rate: async () => (await import('./rate-budget.mjs')).benchRateBudget(quick ? { seconds: 20 } : { seconds: 75 }),
  latency: async () => (await import('./latency.mjs')).benchLatency(quick ? { runs: 1, onceWallets: 200, runWallets: 100 } : { runs: 3 }),
  plannerLive: async () => (await import('./planner-live.mjs')).benchPlannerLive(quick ? { seconds: 15 } : {}),
  cluster: async () => (await import('./cluster.mjs')).benchCluster({ quick }),
};
for (const [name, fn] of Object.entries(older)) await timed(name, fn);

results.totalSec = (performance.now() - started) / 1000;
results.ran = only ?? DEFAULT;
writeFileSync(dataFile(quick), json(results));
writeFileSync(reportFile(quick), renderReport(results));
log(`wrote ${reportFile(quick)} (${results.totalSec.toFixed(0)} s in all)`);
