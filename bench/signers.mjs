// Issue #28's signing cost per backend, measured as the executor pays it: askSigner
// (executor/signing-guard.ts) on the daemon's own WalletSigner for the backend (keys/backends:
// openSigner) — the action rendered to its message, signed, and the answer checked against the
// wallet's address — for a SOL2X deposit. Backends: in-process (a key file), PKCS#11 on a SoftHSM2
// token made here (skipped, saying so, without softhsm2 and pkcs11-tool), and the signer service as
// its own process over its unix socket (journal commit with synchronous=FULL before each answer,
// logging at its default level, info: a line per signature). The service holds 32 wallets' keys
// and each wallet has its own client, as the daemon opens them (they share one connection to the
// socket); the actions go to the wallets in turn (--wallets=1: all on one wallet).
//   latency     one action at a time: p50/p99 of the time askSigner takes — what signing adds to
//               an action;
//   throughput  32 actions in flight (one daemon, many wallets' turns): signatures per second.
//   paced       one action every 24 ms (2,500 a minute, the API budget's rate, as the daemon would
//               at most send them): p50/p99 of each — not the goal's figure (that is `latency`),
//               what signing adds at the rate actions can come, with the signer idle in between.
// Goal (issue #28): the signer service ≥ 2,000 signs/s and ≤ 2 ms p99 added.
// Run: npm run build && node bench/signers.mjs [--quick] [--backends=file,pkcs11,signer] [--wallets=32]
//      [--journal-dir=/dev/shm] [--service-cpu-prof=DIR]   (or: node bench/run.mjs --only=signers)
import { execFileSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST } from './lib/common.mjs';
import { startSignerService } from './signer-service.mjs';

const { generateKeypair } = await import(join(DIST, 'keys/signer.js'));
const { writeKeyFile } = await import(join(DIST, 'keys/keys.js'));
const { openSigner, connectSigners, closeSigners } = await import(join(DIST, 'keys/backends/index.js'));
const { messageFor, templatesOf } = await import(join(DIST, 'keys/message.js'));
const { askSigner } = await import(join(DIST, 'executor/signing-guard.js'));
const { DEFAULT_ENDPOINTS } = await import(join(DIST, 'api/endpoints.js'));
const { formatSol } = await import(join(DIST, 'amount.js'));
const bs58 = (await import('bs58')).default;

const templates = templatesOf(DEFAULT_ENDPOINTS);
const clock = { monotonic: () => performance.now() };
/** The paced measurement's interval: 2,500 actions a minute, the API budget's rate. */
const PACE_MS = 24;
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const SOFTHSM = ['/usr/lib/softhsm/libsofthsm2.so', '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so', '/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so'].find((p) => existsSync(p));

/** CPU time (user + system) of a process, ms: this one's, or another's from /proc (Linux). */
function cpuMs(pid = undefined) {
  if (pid === undefined) {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  }
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime, in clock ticks (100 a second on Linux).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * The executor's cost of signing with `signers` (the wallets', in turn): sequential latency and
 * 32-in-flight throughput; with `servicePid`, the CPU each signature costs this process (the
 * daemon's side) and the service — what a busy machine leaves the wall clock to guess.
 */
async function measure(signers, { quick }, servicePid = undefined) {
  const problems = await connectSigners(signers);
  if (problems.length > 0) throw new Error(`${signers[0].backend}: ${problems[0].message}`);
  let n = 1;
  const ask = async () => {
    const signer = signers[n % signers.length];
    // Lamports, distinct per action (the signer service's journal sees no replay).
    const action = { op: 'deposit', wallet: signer.address, symbol: 'SOL2X', amount: formatSol(BigInt(n++)), ts: Math.floor(Date.now() / 1000) };
    const v = await askSigner(signer, action, messageFor(templates, action), 10_000, clock);
    if (!v.ok) throw new Error(`${signer.backend} refused: ${v.code} ${v.detail}`);
  };
  for (let i = 0; i < (quick ? 30 : 200); i++) await ask(); // warm-up
  const count = quick ? 300 : 3000;
  const times = [];
  const cpu = () => ({ client: cpuMs(), service: servicePid === undefined ? 0 : cpuMs(servicePid) });
  const perSign = (from, to, signs) => ({ clientUs: ((to.client - from.client) * 1000) / signs, ...(servicePid === undefined ? {} : { serviceUs: ((to.service - from.service) * 1000) / signs }) });
  const cpu0 = cpu();
  for (let i = 0; i < count; i++) {
    const s = performance.now();
    await ask();
    times.push(performance.now() - s);
  }
  const cpu1 = cpu();
  times.sort((a, b) => a - b);
  // Paced: each action starts at its own time (every 24 ms), whenever the one before it ended.
  const paced = [];
  const pacedCount = quick ? 100 : 500;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: pacedCount }, async (_, i) => {
      const wait = t0 + i * PACE_MS - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const s = performance.now();
      await ask();
      paced.push(performance.now() - s);
    }),
  );
  paced.sort((a, b) => a - b);
  const cpu2 = cpu();
  const seconds = quick ? 1 : 4;
  let done = 0;
  const cpuThroughput = cpu();
  const until = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (performance.now() < until) {
        await ask();
        done++;
      }
    }),
  );
  return {
    backend: signers[0].backend,
    wallets: signers.length,
    count,
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
    maxMs: times.at(-1),
    sequentialSignsPerSec: 1000 / (times.reduce((a, b) => a + b, 0) / times.length),
    signsPerSec: (done * 1000) / (performance.now() - start),
    paced: { everyMs: PACE_MS, count: pacedCount, p50Ms: percentile(paced, 50), p99Ms: percentile(paced, 99), maxMs: paced.at(-1) },
    cpuPerSign: { sequential: perSign(cpu0, cpu1, count), paced: perSign(cpu1, cpu2, pacedCount), concurrent32: perSign(cpuThroughput, cpu(), done) },
  };
}

async function inProcess(opts) {
  const dir = mkdtempSync(join(tmpdir(), 'autoclaim-signers-bench-'));
  try {
    const { secretKey64, address } = generateKeypair();
    writeKeyFile(join(dir, 'k.json'), secretKey64);
    const signer = openSigner({ file: join(dir, 'k.json') }, address, 'bench', { env: {}, templates });
    return await measure([signer], opts);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A SoftHSM2 token of its own (SOFTHSM2_CONF, read at C_Initialize) with an Ed25519 key made on it. */
async function pkcs11(opts) {
  if (SOFTHSM === undefined) return { backend: 'pkcs11', skipped: 'SoftHSM2 is not installed (apt-get install softhsm2 opensc)' };
  const dir = mkdtempSync(join(tmpdir(), 'autoclaim-signers-hsm-'));
  const conf = join(dir, 'softhsm2.conf');
  mkdirSync(join(dir, 'tokens'));
  writeFileSync(conf, `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const before = process.env.SOFTHSM2_CONF;
  process.env.SOFTHSM2_CONF = conf;
  const tool = (...args) => execFileSync(args[0], args.slice(1), { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let signer;
  try {
    tool('softhsm2-util', '--init-token', '--free', '--label', 'bench', '--so-pin', '12345678', '--pin', '5678');
    tool('pkcs11-tool', '--module', SOFTHSM, '--token-label', 'bench', '--login', '--pin', '5678', '--keypairgen', '--key-type', 'EC:edwards25519', '--label', 'wk', '--id', '01');
    tool('pkcs11-tool', '--module', SOFTHSM, '--token-label', 'bench', '--read-object', '--type', 'pubkey', '--id', '01', '-o', join(dir, 'pub.pem'));
    const x = createPublicKey(readFileSync(join(dir, 'pub.pem'))).export({ format: 'jwk' }).x;
    const address = bs58.encode(Buffer.from(x, 'base64url'));
    signer = openSigner({ pkcs11: { module: SOFTHSM, token: 'bench', label: 'wk', pinEnv: 'BENCH_PIN', sessions: 4 } }, address, 'bench', { env: { BENCH_PIN: '5678' }, templates });
    return { ...(await measure([signer], opts)), sessions: 4 };
  } finally {
    if (signer !== undefined) await closeSigners([signer]);
    if (before === undefined) delete process.env.SOFTHSM2_CONF;
    else process.env.SOFTHSM2_CONF = before;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Its wallets each a key of the service and a client of their own, as the daemon opens them. */
async function signerService(opts) {
  const service = await startSignerService({ journalDir: opts.journalDir, nodeArgs: opts.serviceNodeArgs, wallets: opts.wallets });
  const signers = [];
  try {
    for (const k of service.keys) signers.push(openSigner({ signer: { socket: service.socket, key: k.key } }, k.address, 'bench', { env: {}, templates }));
    return await measure(signers, opts, service.pid);
  } finally {
    await closeSigners(signers);
    await service.stop();
  }
}

export async function benchSigners({ quick = false, only = ['file', 'pkcs11', 'signer'], journalDir = undefined, serviceNodeArgs = [], wallets = 32 } = {}) {
  const opts = { quick, journalDir, serviceNodeArgs, wallets };
  const backends = [];
  for (const [name, fn] of [['file', inProcess], ['pkcs11', pkcs11], ['signer', signerService]]) if (only.includes(name)) backends.push(await fn(opts));
  const base = backends.find((b) => b.backend === 'file');
  // "Added": beyond what in-process signing (today's default) already costs an action.
  for (const b of backends) {
    if (b.skipped !== undefined || base === undefined || b === base) continue;
    b.addedP50Ms = b.p50Ms - base.p50Ms;
    b.addedP99Ms = b.p99Ms - base.p99Ms;
    b.paced.addedP50Ms = b.paced.p50Ms - base.paced.p50Ms;
    b.paced.addedP99Ms = b.paced.p99Ms - base.paced.p99Ms;
  }
  const service = backends.find((b) => b.backend === 'signer');
  return { backends, goal: { signsPerSec: 2000, p99AddedMs: 2, met: service === undefined ? undefined : service.signsPerSec >= 2000 && (service.addedP99Ms ?? service.p99Ms) <= 2 } };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // --backends=file,pkcs11,signer: a subset.
  const only = process.argv.find((a) => a.startsWith('--backends='))?.slice('--backends='.length).split(',');
  // --journal-dir=/dev/shm: the signer service's journal on tmpfs, to tell its own cost from the disk's fsync.
  const journalDir = process.argv.find((a) => a.startsWith('--journal-dir='))?.slice('--journal-dir='.length);
  // --service-cpu-prof=DIR: the signer service runs under node --cpu-prof, its profile written to DIR when it stops.
  const profDir = process.argv.find((a) => a.startsWith('--service-cpu-prof='))?.slice('--service-cpu-prof='.length);
  const serviceNodeArgs = profDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`];
  // --wallets=N: the signer service's wallets (default 32); --wallets=1 puts every action on one wallet and one connection.
  const wallets = Number(process.argv.find((a) => a.startsWith('--wallets='))?.slice('--wallets='.length) ?? 32);
  console.log(JSON.stringify(await benchSigners({ quick: process.argv.includes('--quick'), journalDir, serviceNodeArgs, wallets, ...(only ? { only } : {}) }), null, 1));
}
