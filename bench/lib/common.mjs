// Shared by the benchmark scripts: paths, key fixtures, config files, child processes, statistics
// and a description of the machine. Plain .mjs importing the built dist/, so `npm run bench` needs
// no compile step beyond the project's own build.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '../..');
/**
 * The build under test: this checkout's dist/, or BENCH_DIST (another checkout's dist/, e.g. the
 * baseline `--baseline=DIR` measures beside this one).
 */
export const DIST = process.env.BENCH_DIST === undefined ? join(REPO, 'dist') : resolve(process.env.BENCH_DIST);
export const CLI = join(DIST, 'cli/main.js');
/** Scratch space (git-ignored): cached key fixtures, state files, raw measurements. */
export const OUT = join(REPO, 'bench/out');
export const API_KEY = 'bench-api-key-not-a-secret-0123456789';

const dist = (p) => import(join(DIST, p));

/** mulberry32: a small seeded PRNG, so every run (and every planner) draws the same world. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The daemon in this process, opened as `run` opens it (runtime from `config`, the lock, the
 * redacting JSON logger, here to `logFile`), for benchmarks that need to reach inside it. Returns
 * {runtime, logger, daemon: (options) => Daemon}; Daemon options (observer, ...) go to `daemon`,
 * so a caller can build what they need from the runtime first.
 */
export async function openInProcess(config, { level = 'info', logFile = '/dev/null' } = {}) {
  const { openRuntime } = await dist('runtime.js');
  const { Daemon } = await dist('daemon.js');
  const { createLogger } = await dist('log/logger.js');
  const { Redactor } = await dist('log/redact.js');
  const { systemClock } = await dist('domain.js');
  const { default: pino } = await import('pino');
  const redactor = new Redactor();
  const logger = createLogger({ level, redactor, destination: pino.destination({ dest: logFile, sync: true }) });
  const common = { configPath: config, env: { AUTOCLAIM_API_KEY: API_KEY }, cwd: REPO, clock: systemClock, logger, redactor };
  const runtime = await openRuntime({ ...common, lock: true });
  return { runtime, logger, daemon: (options = {}) => new Daemon({ ...common, runtime, dry: false, failpoint: () => {}, ...options }) };
}

/**
 * N wallets with real key files, generated once and cached under bench/out/keys-N (key material
 * for a loopback sandbox only). Returns [{name, address, keyFile}]; keyFile is relative to the
 * fixture folder, where the run configs are written too.
 */
export async function walletFixtures(n) {
  const dir = join(OUT, `keys-${n}`);
  const index = join(dir, 'wallets.json');
  if (existsSync(index)) {
    const wallets = JSON.parse(readFileSync(index, 'utf8'));
    if (wallets.length === n) return wallets;
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'k'), { recursive: true, mode: 0o700 });
  const { generateKeypair } = await dist('keys/signer.js');
  const { writeKeyFile } = await dist('keys/keys.js');
  const wallets = [];
  for (let i = 0; i < n; i++) {
    const name = `w${i}`;
    const { secretKey64, address } = generateKeypair();
    const keyFile = `k/${name}.json`;
    writeKeyFile(join(dir, keyFile), secretKey64);
    secretKey64.fill(0);
    wallets.push({ name, address, keyFile });
  }
  writeFileSync(index, JSON.stringify(wallets));
  return wallets;
}

export const walletsFile = (n) => join(OUT, `keys-${n}`, 'wallets.json');

/**
 * Writes a config for `wallets` (all from one fixture of `fixtureSize`) and returns {dir, config}.
 * The config sits in the fixture folder so key paths stay short: the loader refuses a config above
 * 1 MiB, and 10,000 wallets in flow style come to ~1.0 MB (a wallets_file has no such limit). The state file lives in a fresh run
 * folder, so every run starts from an empty database.
 */
export function writeRunConfig(name, { fixtureSize, baseUrl, wallets, rules, perMinute, burst, poll = '*/1 * * * *', jitter = '0s', connections, readAttempts = 1, sideFile = false }) {
  const dir = join(OUT, 'runs', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // sideFile: the wallets go to a JSON Lines `wallets_file` beside the config (the form for large
  // fleets) instead of the YAML list.
  const sidePath = join(OUT, `keys-${fixtureSize}`, `${name}.jsonl`);
  if (sideFile) {
    const lines = wallets.map((w) => JSON.stringify({ name: w.name, address: w.address, key: { file: w.keyFile }, ...(w.rules ? { rules: w.rules } : {}) }));
    writeFileSync(sidePath, `${lines.join('\n')}\n`);
  }
  const walletYaml = sideFile
    ? `wallets_file: ${name}.jsonl\n`
    : `wallets:\n${wallets.map((w) => `- {name: ${w.name}, address: ${w.address}, key: {file: ${w.keyFile}}${w.rules ? `, rules: [${w.rules.join(', ')}]` : ''}}\n`).join('')}`;
  const yaml = `api:
  base_url: ${baseUrl}
  timeout_ms: 30000
  read_attempts: ${readAttempts}
${connections === undefined ? '' : `  connections: ${connections}\n`}  rate_limit: { per_minute: ${perMinute}, burst: ${burst} }
state:
  path: ${join(dir, 'state.db')}
schedule:
  poll: "${poll}"
  jitter: ${jitter}
rules:
${rules}safety:
  max_sol_per_action: 1000000
${walletYaml}`;
  const config = join(OUT, `keys-${fixtureSize}`, `${name}.yaml`);
  writeFileSync(config, yaml);
  return { dir, config };
}

/** A rule that never fires: pure poll cycles. */
export const NEVER_RULE = `  - name: never
    when:
      pending_sol: { gte: 1000000 }
    do:
      - claim
`;

export const claimRule = (thresholdSol) => `  - name: claim
    when:
      pending_sol: { gte: ${thresholdSol} }
    do:
      - claim
    limits:
      once_per_epoch: false
`;

const TIME = '/usr/bin/time';

/**
 * Runs a command to completion. Measures wall time (ms) and, when /usr/bin/time exists, peak RSS
 * (kB) and CPU seconds; otherwise samples VmHWM from /proc while it runs. stdout (the daemon's JSON
 * log) goes to a file, as it would to journald or a container log: a pipe drained by this busy
 * process would make the daemon's log writes wait on the benchmark instead.
 */
export function runProcess(argv, { env = {}, cwd = REPO, nodeArgs = [], stdoutFile = join(OUT, `stdout-${process.pid}.log`) } = {}) {
  const useTime = existsSync(TIME);
  const timeFile = join(OUT, `time-${process.pid}.txt`);
  const cmd = useTime ? TIME : process.execPath;
  const args = useTime ? ['-f', '%M %U %S', '-o', timeFile, process.execPath, ...nodeArgs, ...argv] : [...nodeArgs, ...argv];
  mkdirSync(OUT, { recursive: true });
  const outFd = openSync(stdoutFile, 'w');
  return new Promise((resolveRun, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { cwd, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', outFd, 'pipe'] });
    closeSync(outFd);
    let err = '';
    let hwm = 0;
    child.stderr.on('data', (d) => (err += d.toString()));
    const sampler = useTime
      ? undefined
      : setInterval(() => {
          try {
            const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
            if (m) hwm = Math.max(hwm, Number(m[1]));
          } catch {
            // exited between samples
          }
        }, 20);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const wallMs = performance.now() - started;
      if (sampler) clearInterval(sampler);
      let peakRssKb = hwm;
      let cpuSec = NaN;
      if (useTime) {
        try {
          const m = /(\d+) ([\d.]+) ([\d.]+)\s*$/.exec(readFileSync(timeFile, 'utf8').trim());
          peakRssKb = Number(m?.[1] ?? 0);
          cpuSec = Number(m?.[2] ?? NaN) + Number(m?.[3] ?? NaN);
          rmSync(timeFile, { force: true });
        } catch {
          peakRssKb = 0;
        }
      }
      const stdout = readFileSync(stdoutFile, 'utf8');
      rmSync(stdoutFile, { force: true });
      resolveRun({ code, signal, wallMs, peakRssKb, cpuSec, stdout, stderr: err, lines: stdout.split('\n').length - 1 });
    });
  });
}

/** Starts a long-running process (the daemon's `run`); stop() sends SIGTERM and resolves with its output. */
export function startProcess(argv, { env = {}, cwd = REPO, stdoutFile = join(OUT, `stdout-run-${process.pid}.log`) } = {}) {
  mkdirSync(OUT, { recursive: true });
  const outFd = openSync(stdoutFile, 'w');
  const child = spawn(process.execPath, argv, { cwd, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', outFd, 'pipe'] });
  closeSync(outFd);
  let err = '';
  child.stderr.on('data', (d) => (err += d.toString()));
  const closed = new Promise((resolveClose) => child.on('close', (code, signal) => resolveClose({ code, signal })));
  return {
    pid: child.pid,
    stdout: () => readFileSync(stdoutFile, 'utf8'),
    async stop() {
      child.kill('SIGTERM');
      const { code, signal } = await closed;
      const stdout = readFileSync(stdoutFile, 'utf8');
      rmSync(stdoutFile, { force: true });
      return { code, signal, stdout, stderr: err };
    },
  };
}

/** JSON log events from a captured stdout. */
export function events(stdout) {
  const out = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // not a log line
    }
  }
  return out;
}

// ---- statistics -----------------------------------------------------------------------------

export function median(xs) {
  return quantile(xs, 0.5);
}

/** Linear-interpolated quantile (q in [0,1]) of a sample. */
export function quantile(xs, q) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

export function mean(xs) {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

export const fmt = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
export const fmtMs = (ms) => (ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 0)} ms`);

export function machine() {
  const cpu = cpus();
  let kernel = '';
  try {
    kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  } catch {
    kernel = process.platform;
  }
  return {
    cpu: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    ramGb: totalmem() / 1024 ** 3,
    node: process.version,
    kernel,
    date: new Date().toISOString(),
  };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function log(msg) {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}
