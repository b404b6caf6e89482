// Where a poll's CPU goes: the daemon's `once` cycle in this process, with parts switched off one
// at a time, against a forked sandbox. Prints JSON: CPU ms per poll for each mode (median of
// `rounds` interleaved rounds after one warm-up round), and the sandbox's own CPU per poll. Each
// round starts from an empty state database, as `once` in section 1 does.
//   node cycle-cost.mjs WALLETS ROUNDS
import { join } from 'node:path';
import { API_KEY, DIST, median, NEVER_RULE, openInProcess, REPO, walletFixtures, writeRunConfig } from './common.mjs';
import { forkSandbox } from './sandbox-client.mjs';

const [nArg, roundsArg] = process.argv.slice(2);
const n = Number(nArg ?? 5000);
const rounds = Number(roundsArg ?? 2);
const { Semaphore } = await import(join(DIST, 'scheduler/scheduler.js'));

const wallets = (await walletFixtures(10_000)).slice(0, n);
const sandbox = await forkSandbox({ apiKey: API_KEY, wallets: wallets.map((w) => ({ address: w.address, pendingLamports: '0', accrualLamportsPerSec: '1000' })) });
const MODES = {
  // The API client alone (same limiter, dispatcher, lossless parse and schema check): the floor.
  client: { client: true },
  full: {},
  'no poll.ok log': { quiet: true },
  'no poll record': { noStore: true },
};
const samples = Object.fromEntries(Object.keys(MODES).map((m) => [m, { cpu: [], sandbox: [] }]));
try {
  // Round 0 warms the JIT up for every mode and is not recorded.
  for (let r = 0; r <= rounds; r++) {
    for (const [mode, o] of Object.entries(MODES)) {
      const { config } = writeRunConfig('cycle-cost', { fixtureSize: 10_000, baseUrl: sandbox.url, wallets, rules: NEVER_RULE, perMinute: 1_000_000_000, burst: 1_000_000 });
      const { runtime, daemon: makeDaemon } = await openInProcess(config, { level: o.quiet ? 'warn' : 'info', logFile: join(REPO, 'bench/out/cycle-cost.log') });
      if (o.noStore) runtime.store.recordPoll = () => ({ newEpoch: false });
      const daemon = makeDaemon();
      const sandboxBefore = await sandbox.cpuMs();
      const before = process.cpuUsage();
      if (o.client) {
        const sem = new Semaphore(16);
        await Promise.all(runtime.config.wallets.map((w) => sem.run(() => runtime.client.walletSummary(w.address))));
      } else {
        await daemon.once();
      }
      const used = process.cpuUsage(before);
      if (r > 0) {
        samples[mode].cpu.push((used.user + used.system) / 1000 / n);
        samples[mode].sandbox.push(((await sandbox.cpuMs()) - sandboxBefore) / n);
      }
      await runtime.close();
    }
  }
} finally {
  await sandbox.close();
}
const out = { wallets: n, rounds, msPerPoll: {}, sandboxMsPerPoll: median(Object.values(samples).flatMap((s) => s.sandbox)) };
for (const [mode, s] of Object.entries(samples)) out.msPerPoll[mode] = median(s.cpu);
process.stdout.write(`${JSON.stringify(out)}\n`);
