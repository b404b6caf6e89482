// The daemon at the scale users live at: `run` with N wallets in a `wallets_file` against the
// sandbox (its own process) enforcing the service's rate limit — 2,500 requests a minute, bursts of
// 100 — for a few minutes. Measured from outside the daemon, as an operator would see it:
//   budget used   requests ÷ (burst + rate × span), span from the first request to the end;
//   429s          the sandbox limiter's (a 429 there means the client went over);
//   first poll    seconds from spawning the process to the first request reaching the sandbox;
//   peak RSS      VmHWM from /proc/PID/status, read just before SIGTERM;
//   CPU           CPU time the daemon process used (utime + stime from /proc/PID/stat) from its
//                 first poll to the end, ÷ that wall time: % of one core. CPU time, not wall time,
//                 so other load on a shared machine disturbs it less (it still does: caches, turbo).
//   settled CPU   the same from `settleSeconds` after the first poll to the end: what the months
//                 after the first minutes cost. V8 compiles the poll path while it warms up, ~40
//                 polls a second: 10-minute runs at 10,000 wallets measured ~6% in the first two
//                 minutes and ~4% after three (bench/RESULTS.md).
// Fleets larger than a minute's budget are polled every minute (the planner picks who); 1,000
// wallets are polled every 20 s, so that they too are bound by the budget and a poll costs the same.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, CLI, NEVER_RULE, OUT, REPO, log, sleep, walletFixtures, writeRunConfig } from './lib/common.mjs';
import { forkSandbox } from './lib/sandbox-client.mjs';

/**
 * What `npm start` carried until issue 26, measured here with and without: V8's young generation
 * held at 1 MiB semi-spaces, and glibc held to two malloc arenas. Where they earn their place they
 * are set in the systemd unit and the Docker image, each with its reason.
 */
export const UNIT_FLAGS = { nodeArgs: ['--max-semi-space-size=1'], env: { MALLOC_ARENA_MAX: '2' } };

const TICK = 100; // USER_HZ on Linux: /proc/PID/stat counts CPU time in 1/100 s
const procCpuSec = (pid) => {
  // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]) / TICK, system: Number(f[12]) / TICK };
};
const procHwmMb = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

/**
 * One `run` of `wallets` wallets for `seconds` (counted from its first poll), its settled CPU from
 * `settleSeconds` on. nodeArgs/env: how the daemon is started (e.g. the unit's flags); cpuProf: a
 * directory for `node --cpu-prof`; tls: the sandbox behind HTTPS, as the real API is (tls-front.mjs).
 */
export async function benchScale({ wallets: n, fixture, seconds, settleSeconds = 0, perMinute = 2500, burst = 100, nodeArgs = [], env = {}, cpuProf, label = '', tls = false }) {
  const fleet = (await walletFixtures(fixture)).slice(0, n);
  const sandbox = await forkSandbox({
    tls,
    apiKey: API_KEY,
    rateLimit: { perMinute, burst },
    wallets: fleet.map((w) => ({ address: w.address, pendingLamports: '0', accrualLamportsPerSec: '1000' })),
  });
  const poll = n > perMinute ? '*/1 * * * *' : '*/20 * * * * *';
  try {
    const { config } = writeRunConfig(`scale-${n}${label}`, { fixtureSize: fixture, baseUrl: sandbox.url, wallets: fleet, rules: NEVER_RULE, perMinute, burst, poll, jitter: '10s', sideFile: true });
    await sandbox.resetStats();
    await sandbox.arrivals({ on: true, take: true });
    const stdoutFile = join(OUT, `stdout-scale-${process.pid}.log`);
    mkdirSync(OUT, { recursive: true });
    const outFd = openSync(stdoutFile, 'w');
    const profArgs = cpuProf === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`];
    const spawnedAt = Date.now();
    const child = spawn(process.execPath, [...nodeArgs, ...profArgs, CLI, 'run', '--config', config], {
      cwd: REPO,
      env: { PATH: process.env.PATH, AUTOCLAIM_API_KEY: API_KEY, ...(tls ? { NODE_EXTRA_CA_CERTS: sandbox.caFile } : {}), ...env },
      stdio: ['ignore', outFd, 'pipe'],
    });
    closeSync(outFd);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d.toString()));
    const closed = new Promise((resolve) => child.on('close', (code) => resolve(code)));
    let exited = false;
    void closed.then(() => (exited = true));
    // Wait for the first request at the sandbox (checked every 50 ms).
    let first;
    while (first === undefined && !exited && Date.now() - spawnedAt < 600_000) {
      await sleep(50);
      first = (await sandbox.arrivals({ take: false, peek: true })).first;
    }
    if (first === undefined) throw new Error(`scale ${n}: no poll reached the sandbox (exit ${exited ? await closed : 'none'}): ${stderr.slice(0, 2000)}`);
    const atFirst = procCpuSec(child.pid);
    const measuredFrom = Date.now();
    const settle = Math.min(settleSeconds, seconds);
    await sleep(settle * 1000);
    const atSettled = procCpuSec(child.pid);
    const settledFrom = Date.now();
    await sleep((seconds - settle) * 1000);
    const atEnd = procCpuSec(child.pid);
    const wallSec = (Date.now() - measuredFrom) / 1000;
    const settledWallSec = (Date.now() - settledFrom) / 1000;
    const peakRssMb = procHwmMb(child.pid);
    const { times } = await sandbox.arrivals({ on: false, take: true });
    const stats = await sandbox.stats();
    child.kill('SIGTERM');
    const code = await closed;
    rmSync(stdoutFile, { force: true });
    const span = (times.at(-1) - times[0]) / 1000;
    const capacity = burst + (perMinute * span) / 60;
    const cpuAtFirst = atFirst.user + atFirst.system;
    const windowCpu = atEnd.user + atEnd.system - cpuAtFirst;
    const settledCpu = atEnd.user + atEnd.system - (atSettled.user + atSettled.system);
    const settledRequests = times.filter((t) => t >= settledFrom).length;
    const result = {
      wallets: n,
      tls,
      poll,
      perMinute,
      burst,
      seconds: wallSec,
      nodeArgs,
      env,
      requests: times.length,
      limiter429: stats.limiter429,
      ...(tls ? { tlsConnections: stats.tlsConnections } : {}),
      served429: stats.served429,
      budgetUsed: times.length / capacity,
      firstPollSec: (first - spawnedAt) / 1000,
      peakRssMb,
      startupCpuSec: cpuAtFirst,
      cpuSec: windowCpu,
      cpuPct: (100 * windowCpu) / wallSec,
      cpuSystemShare: (atEnd.system - atFirst.system) / windowCpu,
      cpuMsPerPoll: (1000 * windowCpu) / times.length,
      ...(settle > 0 ? { settleSeconds: settle, settledCpuPct: (100 * settledCpu) / settledWallSec, settledCpuMsPerPoll: (1000 * settledCpu) / settledRequests } : {}),
      exitCode: code,
    };
    log(`scale ${n}${label}: ${result.requests} requests, budget ${(result.budgetUsed * 100).toFixed(1)}%, ${result.limiter429} 429s, first poll ${result.firstPollSec.toFixed(1)} s, RSS ${peakRssMb.toFixed(0)} MB, CPU ${result.cpuPct.toFixed(2)}% (${result.cpuMsPerPoll.toFixed(3)} ms a poll)${settle > 0 ? `, settled after ${settle} s ${result.settledCpuPct.toFixed(2)}% (${result.settledCpuMsPerPoll.toFixed(3)} ms a poll)` : ''}`);
    return result;
  } finally {
    await sandbox.close();
  }
}

/** `autoclaim --help`: peak RSS (as typed, no node flags), `runs` times; the highest is judged. */
export async function benchHelp({ runs = 5 } = {}) {
  const peaks = [];
  for (let i = 0; i < runs; i++) {
    const child = spawn('/usr/bin/time', ['-f', '%M', process.execPath, CLI, '--help'], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d.toString()));
    await new Promise((resolve) => child.on('close', resolve));
    peaks.push(Number(err.trim().split('\n').at(-1)) / 1024);
  }
  return { peakRssMb: Math.max(...peaks), peakRssRunsMb: peaks };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // node bench/scale.mjs N SECONDS [--prof=DIR] [-- node flags...]: one run, printed.
  const [n, seconds] = process.argv.slice(2, 4).map(Number);
  const label = process.argv.find((a) => a.startsWith('--label='))?.slice('--label='.length) ?? "";
  const prof = process.argv.find((a) => a.startsWith('--prof='))?.slice('--prof='.length);
  const dash = process.argv.indexOf('--');
  const nodeArgs = dash < 0 ? [] : process.argv.slice(dash + 1);
  console.log(await benchScale({ wallets: n, fixture: Math.max(n, 10_000), seconds, nodeArgs, cpuProf: prof, label }));
}
