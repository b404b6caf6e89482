// §5 decision latency: from the sandbox serving a summary with pending over the threshold to the
// claim request reaching it (one wallet in ten over the threshold), with the state database at
// synchronous=FULL for plans and steps. Timestamps are the sandbox's own (performance.now() in its
// process): summary computed → claim request's headers read, which includes the response's and the
// claim's trips over loopback, parsing, recordPoll, decide, the plan and step commits (two
// fsyncs) and signing; not the sandbox's own signature check (tweetnacl, several ms).
import { API_KEY, CLI, claimRule, log, OUT, quantile, runProcess, sleep, startProcess, walletFixtures, writeRunConfig } from './lib/common.mjs';
import { forkSandbox } from './lib/sandbox-client.mjs';
import { join } from 'node:path';

const SOL = 1_000_000_000n;

/** What one FULL commit costs on this disk: the floor under every decision (two per claim). */
async function fsyncCost() {
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(join(OUT, 'fsync-probe.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)');
  const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
  const times = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    ins.run('x'.repeat(200));
    times.push(performance.now() - t);
  }
  db.close();
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

/**
 * mode 'once': one `once` cycle, 16 wallet turns at a time (the daemon's concurrency), so each
 * decision shares the event loop with 15 other turns. mode 'run': the daemon's `run`, polls spread
 * over a 10 s interval as the scheduler does, so decisions rarely overlap.
 */
async function latencyRun(mode, fleet, every, r) {
  const sandbox = await forkSandbox({
    apiKey: API_KEY,
    wallets: fleet.map((w, i) => ({ address: w.address, pendingLamports: String(i % every === 0 ? SOL : 0n), accrualLamportsPerSec: '1000' })),
  });
  const expected = Math.ceil(fleet.length / every);
  try {
    await sandbox.trace(SOL / 2n);
    const { config } = writeRunConfig(`latency-${mode}-${r}`, {
      fixtureSize: 10_000,
      baseUrl: sandbox.url,
      wallets: fleet,
      rules: claimRule('0.5'),
      perMinute: 1_000_000_000,
      burst: 1_000_000,
      poll: '*/10 * * * * *',
    });
    if (mode === 'once') {
      const res = await runProcess([CLI, 'once', '--config', config], { env: { AUTOCLAIM_API_KEY: API_KEY } });
      if (res.code !== 0) throw new Error(`once exited ${res.code}: ${res.stderr.slice(0, 2000)}`);
    } else {
      // Start just after a 10 s boundary, so the first tick spreads the fleet over most of an interval.
      await sleep(10_000 - (Date.now() % 10_000) + 200);
      const daemon = startProcess([CLI, 'run', '--config', config], { env: { AUTOCLAIM_API_KEY: API_KEY } });
      const deadline = Date.now() + 45_000;
      while (Date.now() < deadline && (await sandbox.traceGet()).claims < expected) await sleep(500);
      await daemon.stop();
    }
    return await sandbox.traceGet();
  } finally {
    await sandbox.close();
  }
}

function summarize(samples, extra) {
  return { ...extra, samples: samples.length, p50Ms: quantile(samples, 0.5), p90Ms: quantile(samples, 0.9), p99Ms: quantile(samples, 0.99), maxMs: Math.max(...samples) };
}

export async function benchLatency({ onceWallets = 1000, runWallets = 300, every = 10, runs = 3 } = {}) {
  const all = await walletFixtures(10_000);
  const out = {};
  for (const [mode, n] of [['once', onceWallets], ['run', runWallets]]) {
    const samples = [];
    const applied = [];
    let claims = 0;
    for (let r = 0; r < runs; r++) {
      const got = await latencyRun(mode, all.slice(0, n), every, r);
      samples.push(...got.samples);
      applied.push(...got.applied);
      claims += got.claims;
      log(`latency ${mode} run ${r + 1}/${runs}: ${samples.length} samples`);
    }
    out[mode] = summarize(samples, { wallets: n, overThreshold: Math.ceil(n / every), runs, claims, appliedP50Ms: quantile(applied, 0.5) });
  }
  out.fsyncMs = await fsyncCost();
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await benchLatency({ runs: 1 }));
