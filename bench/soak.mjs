// `npm run bench:soak` (node --expose-gc): the daemon's `run` in this process, against a forked
// sandbox, until it has made ≥ 200,000 polls; the heap is sampled after a full GC at a fixed
// period. After a warm-up the heap must stay flat (within 10%). Writes bench/SOAK.json, which
// `npm run bench` folds into bench/RESULTS.md.
//   node --expose-gc bench/soak.mjs [--polls=200000] [--wallets=600] [--schedule="* * * * * *"]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, DIST, log, machine, mean, NEVER_RULE, openInProcess, REPO, sleep, walletFixtures, writeRunConfig } from './lib/common.mjs';
import { forkSandbox } from './lib/sandbox-client.mjs';

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc (npm run bench:soak does)');
  process.exit(2);
}
const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const targetPolls = Number(arg('polls', 200_000));
const walletCount = Number(arg('wallets', 600));
const schedule = arg('schedule', '* * * * * *');
const sampleEverySec = Number(arg('sample', 10));
const warmupShare = 0.2;

const wallets = (await walletFixtures(10_000)).slice(0, walletCount);
const sandbox = await forkSandbox({ apiKey: API_KEY, wallets: wallets.map((w) => ({ address: w.address, pendingLamports: '0', accrualLamportsPerSec: '1000' })) });
const { config } = writeRunConfig('soak', { fixtureSize: 10_000, baseUrl: sandbox.url, wallets, rules: NEVER_RULE, perMinute: 1_000_000_000, burst: 1_000_000, poll: schedule });

// The log goes where a service's would, through the same redacting logger, but to /dev/null:
// 200,000 lines are not the point here.
const { runtime, daemon: makeDaemon } = await openInProcess(config);
let polls = 0;
let failed = 0;
const { createEvents } = await import(join(DIST, 'events.js'));
const events = createEvents();
events.on('poll:ok', () => polls++);
events.on('poll:failed', () => failed++);
const daemon = makeDaemon({ events });

const samples = [];
const sample = () => {
  globalThis.gc();
  const m = process.memoryUsage();
  samples.push({ atSec: (performance.now() - t0) / 1000, polls, mb: m.heapUsed / 2 ** 20, rssMb: m.rss / 2 ** 20 });
};
const t0 = performance.now();
await daemon.start();
sample();
log(`soak: ${walletCount} wallets on "${schedule}", until ${targetPolls.toLocaleString('en-US')} polls`);
while (polls < targetPolls) {
  await sleep(sampleEverySec * 1000);
  sample();
  const s = samples.at(-1);
  log(`soak: ${s.polls.toLocaleString('en-US')} polls, heap ${s.mb.toFixed(1)} MB, rss ${s.rssMb.toFixed(0)} MB`);
}
await daemon.stop(20_000);
await runtime.close();
await sandbox.close();

const seconds = (performance.now() - t0) / 1000;
const steady = samples.slice(Math.max(1, Math.ceil(samples.length * warmupShare)));
const head = mean(steady.slice(0, 3).map((s) => s.mb));
const tail = mean(steady.slice(-3).map((s) => s.mb));
// Least squares of heap against polls over the steady samples: growth per 10,000 polls.
const xs = steady.map((s) => s.polls);
const ys = steady.map((s) => s.mb * 1024);
const mx = mean(xs);
const my = mean(ys);
const slope = xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
const result = {
  date: new Date().toISOString(),
  machine: machine(),
  wallets: walletCount,
  schedule,
  polls,
  failedPolls: failed,
  seconds,
  sampleEverySec,
  warmupSamples: samples.length - steady.length,
  firstMb: head,
  lastMb: tail,
  minMb: Math.min(...steady.map((s) => s.mb)),
  maxMb: Math.max(...steady.map((s) => s.mb)),
  drift: (tail - head) / head,
  slopeKbPer10kPolls: slope * 10_000,
  samples: samples.map((s) => ({ atSec: Math.round(s.atSec), polls: s.polls, mb: Math.round(s.mb * 10) / 10, rssMb: Math.round(s.rssMb) })),
};
writeFileSync(join(REPO, 'bench/SOAK.json'), `${JSON.stringify(result, null, 1)}\n`);
log(`soak: ${polls.toLocaleString('en-US')} polls in ${seconds.toFixed(0)} s; heap after warm-up ${head.toFixed(1)} → ${tail.toFixed(1)} MB (${((tail / head - 1) * 100).toFixed(1)}%); wrote bench/SOAK.json`);
process.exit(Math.abs(result.drift) <= 0.1 ? 0 : 1);
