// The signer service (SPEC §7) over its unix socket: signatures per second and the latency it adds
// to a signed action, measured from the daemon's side with the daemon's own client
// (keys/backends/signer-service.ts: request, journal commit in the service, answer, message check,
// tweetnacl verify). The service runs as its own process, as in production, on a journal in a temp
// dir (synchronous=FULL, so every signature is an fsync; --journal-dir=/dev/shm puts it on tmpfs to
// separate the service's own cost from the disk's). Goal (issue #28): ≥ 2,000 signs/s and
// ≤ 2 ms p99 added. Run: npm run build && node bench/signer-service.mjs [--quick]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST } from './lib/common.mjs';

const { generateKeypair, signerFromSeed } = await import(join(DIST, 'keys/signer.js'));
const { writeKeyFile } = await import(join(DIST, 'keys/keys.js'));
const { SignerServiceBackend } = await import(join(DIST, 'keys/backends/signer-service.js'));
const { DEFAULT_ENDPOINTS } = await import(join(DIST, 'api/endpoints.js'));
const { formatSol } = await import(join(DIST, 'amount.js'));

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * An `autoclaim signer` process on a socket in a temp dir, holding one key (`bench`) whose policy
 * allows SOL2X deposits far beyond what a benchmark signs; `stop` ends it and removes its files.
 */
export async function startSignerService({ journalDir = undefined } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'autoclaim-signer-bench-'));
  const journal = journalDir === undefined ? './journal.db' : join(mkdtempSync(join(journalDir, 'autoclaim-signer-bench-')), 'journal.db');
  const { secretKey64, address } = generateKeypair();
  writeKeyFile(join(dir, 'k.json'), secretKey64);
  const socket = join(dir, 'signer.sock');
  writeFileSync(
    join(dir, 'signer.yaml'),
    `socket: ${socket}\nstate: { path: ${journal} }\nkeys:\n  - name: bench\n    address: ${address}\n    key: { file: ./k.json }\n    policy:\n      ops: [deposit]\n      symbols: [SOL2X]\n      max_sol_per_action: 1000\n      max_sol_per_day: 1000000000\n`,
  );
  const child = spawn(process.execPath, [join(DIST, 'cli/main.js'), 'signer', '--config', join(dir, 'signer.yaml'), '--log-level', 'warn'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 300 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 50));
  return {
    socket,
    address,
    secretKey64,
    key: 'bench',
    stop: async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
      if (journalDir !== undefined) rmSync(join(journal, '..'), { recursive: true, force: true });
    },
  };
}

export async function benchSignerService({ quick = false, journalDir = undefined } = {}) {
  const { socket, address, secretKey64, stop } = await startSignerService({ journalDir });
  try {
    const templates = Object.fromEntries(Object.entries(DEFAULT_ENDPOINTS).map(([op, e]) => [op, e.message]));
    const backend = await SignerServiceBackend.open({ socket, key: 'bench', address, templates });
    let n = 1;
    const action = () => ({ op: 'deposit', wallet: address, symbol: 'SOL2X', amount: formatSol(BigInt(n++)), ts: Math.floor(Date.now() / 1000) });

    // In-process signing of the same message: what the socket, the journal and the checks add to.
    const local = signerFromSeed(secretKey64.subarray(0, 32));
    const msg = new TextEncoder().encode(`${address}|SOL2X|1|1764000000`);
    const t0 = performance.now();
    for (let i = 0; i < 2000; i++) local.sign(msg);
    const inProcessUs = ((performance.now() - t0) / 2000) * 1000;

    // Latency: one request at a time, as the executor signs a step.
    const count = quick ? 300 : 3000;
    for (let i = 0; i < 100; i++) await backend.sign(action(), new AbortController().signal); // warm-up
    const times = [];
    for (let i = 0; i < count; i++) {
      const s = performance.now();
      await backend.sign(action(), new AbortController().signal);
      times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);

    // Throughput: 32 requests in flight (one connection, as one daemon).
    const seconds = quick ? 1 : 4;
    let done = 0;
    const until = performance.now() + seconds * 1000;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (performance.now() < until) {
          await backend.sign(action(), new AbortController().signal);
          done++;
        }
      }),
    );
    const perSec = (done * 1000) / (performance.now() - start);
    await backend.close();
    return {
      sequential: { count, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), maxMs: times.at(-1) },
      inProcessSignUs: inProcessUs,
      addedP50Ms: percentile(times, 50) - inProcessUs / 1000,
      addedP99Ms: percentile(times, 99) - inProcessUs / 1000,
      concurrent32: { signsPerSec: perSec, signed: done },
      sequentialSignsPerSec: 1000 / (times.reduce((a, b) => a + b, 0) / times.length),
    };
  } finally {
    await stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // --journal-dir=/dev/shm: the journal on tmpfs, to tell the service's own cost from the disk's fsync.
  const journalDir = process.argv.find((a) => a.startsWith('--journal-dir='))?.slice('--journal-dir='.length);
  console.log(JSON.stringify(await benchSignerService({ quick: process.argv.includes('--quick'), journalDir }), null, 1));
}
