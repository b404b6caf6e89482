// Two builds' cost of a poll, side by side in one process: each build's daemon (runtime and Daemon,
// opened as `run` opens them, 10,000 wallets from a wallets_file) polls one forked sandbox, turns
// alternated one by one and paced as `run` paces them at 2,500 requests a minute (a turn every
// 24 ms in all), the CPU of each turn (process.cpuUsage, the whole process) charged to its build.
// Whatever else the machine does falls on both builds alike, so a shared machine still compares
// them; the same build on both sides differs by ~0.01 ms. Not the scale benchmark: no scheduler,
// no metrics, no `run` supervisor; one turn in flight at a time.
//   node cycle-ab.mjs DIST_A DIST_B [TURNS_EACH] [WALLETS]
// e.g. node bench/lib/cycle-ab.mjs /tmp/base/dist dist 2000. Prints JSON: ms of CPU a turn for
// each build (mean, median, p90) and what B saves against A.
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { API_KEY, NEVER_RULE, REPO, walletFixtures, writeRunConfig } from './common.mjs';
import { forkSandbox } from './sandbox-client.mjs';

const [distA, distB, turnsArg, walletsArg] = process.argv.slice(2);
if (distA === undefined || distB === undefined) throw new Error('usage: node cycle-ab.mjs DIST_A DIST_B [TURNS_EACH] [WALLETS]');
const turns = Number(turnsArg ?? 2000);
const n = Number(walletsArg ?? 10_000);
const WARM_UP = 300;
const PACE_MS = 12;

const wallets = (await walletFixtures(10_000)).slice(0, n);
const sandbox = await forkSandbox({ apiKey: API_KEY, wallets: wallets.map((w) => ({ address: w.address, pendingLamports: '0', accrualLamportsPerSec: '1000' })) });

async function open(dist, label) {
  const load = (p) => import(join(resolve(dist), p));
  const { openRuntime } = await load('runtime.js');
  const { Daemon } = await load('daemon.js');
  const { createLogger } = await load('log/logger.js');
  const { Redactor } = await load('log/redact.js');
  const { systemClock } = await load('domain.js');
  const { config } = writeRunConfig(`cycle-ab-${label}`, { fixtureSize: 10_000, baseUrl: sandbox.url, wallets, rules: NEVER_RULE, perMinute: 1_000_000, burst: 1_000, sideFile: true });
  const redactor = new Redactor();
  const logger = createLogger({ level: 'info', redactor, destination: pino.destination({ dest: '/dev/null', sync: true }) });
  const common = { configPath: config, env: { AUTOCLAIM_API_KEY: API_KEY }, cwd: REPO, clock: systemClock, logger, redactor };
  const runtime = await openRuntime({ ...common, lock: true });
  const daemon = new Daemon({ ...common, runtime, dry: false, failpoint: () => {} });
  await daemon.recover();
  return { label, runtime, daemon, cpu: [] };
}

const sides = [await open(distA, 'a'), await open(distB, 'b')];
let failed = 0;
try {
  for (let i = 0; i < turns + WARM_UP; i++) {
    for (const side of sides) {
      const wallet = wallets[(i * 7919) % n];
      const before = process.cpuUsage();
      const result = await side.daemon.runWallet(wallet.name);
      const used = process.cpuUsage(before);
      if (result?.polled !== true) failed++;
      if (i >= WARM_UP) side.cpu.push((used.user + used.system) / 1000);
      await sleep(PACE_MS);
    }
  }
} finally {
  for (const side of sides) await side.runtime.close();
  await sandbox.close();
}
const stat = (ms) => {
  const sorted = [...ms].sort((x, y) => x - y);
  const round = (x) => Number(x.toFixed(4));
  return { mean: round(ms.reduce((x, y) => x + y, 0) / ms.length), median: round(sorted[sorted.length >> 1]), p90: round(sorted[Math.floor(sorted.length * 0.9)]) };
};
const [a, b] = sides.map((s) => stat(s.cpu));
process.stdout.write(`${JSON.stringify({ turns, wallets: n, failed, a, b, savedMs: { mean: Number((a.mean - b.mean).toFixed(4)), median: Number((a.median - b.median).toFixed(4)) } })}\n`);
