// Issue 15's cluster figures: daemons (`run`, real processes) on one PostgreSQL state, against a
// forked sandbox on loopback. PostgreSQL is the test suite's throwaway cluster
// (test/support/postgres-node.mjs), a fresh database per run.
//
// - Failover time: daemon A holds every wallet; B joins (its first round finds them all held);
//   A is killed -9. Measured from the kill until the database shows every lease valid and held by
//   B, the one live daemon. Expected: what A's leases had left (a lease less the time since their
//   last renewal, ≤ a third of a lease) plus the wait for B's next lease round (≤ a third).
// - Throughput: one daemon, then two, then three, each with its own rate budget, a fleet of three
//   budgets per poll interval. Summary GETs counted at the sandbox; N budgets should poll N times
//   as many wallets a minute, up to what the fleet asks for (every wallet once an interval).
//
// Alone: `node bench/cluster.mjs [--quick]` (after `npm run build`) writes bench/out/cluster.json
// and replaces the cluster section of bench/RESULTS.md (report.mjs renders it); `npm run bench`
// runs it as its `cluster` part.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startPostgres } from '../test/support/postgres-node.mjs';
import { API_KEY, CLI, NEVER_RULE, OUT, REPO, events, log, median, prng, sleep, startProcess, walletFixtures, writeRunConfig } from './lib/common.mjs';
import { forkSandbox } from './lib/sandbox-client.mjs';

/** A daemon `run` on the shared state; its log in a file of its own. */
function daemon(config, stateUrl, name) {
  const p = startProcess([CLI, 'run', '--config', config], {
    env: { AUTOCLAIM_API_KEY: API_KEY, AUTOCLAIM_STATE_URL: stateUrl },
    stdoutFile: join(OUT, `stdout-cluster-${process.pid}-${name}.log`),
  });
  return {
    ...p,
    /** The first log event named `name`, once printed. */
    async waitEvent(event, timeoutMs = 60_000) {
      const until = performance.now() + timeoutMs;
      while (performance.now() < until) {
        const hit = events(p.stdout()).find((e) => e.event === event);
        if (hit) return hit;
        await sleep(25);
      }
      throw new Error(`daemon ${name}: no ${event} within ${timeoutMs} ms\n${p.stdout().slice(-2000)}`);
    },
  };
}

/** The run config (bench/lib writeRunConfig) with `state.lease` set. */
function clusterConfig(name, { wallets, baseUrl, leaseSec, perMinute, burst, poll, rules }) {
  const { config } = writeRunConfig(name, { fixtureSize: 10_000, baseUrl, wallets, rules, perMinute, burst, poll });
  writeFileSync(config, readFileSync(config, 'utf8').replace('state:\n', `state:\n  lease: ${leaseSec}s\n`));
  return config;
}

async function heldBy(sql, owner) {
  const r = await sql.query('SELECT count(*)::int AS n FROM leases WHERE owner = $1 AND expires_at > now()', [owner]);
  return r.rows[0].n;
}

async function waitHeld(sql, owner, n, timeoutMs) {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if ((await heldBy(sql, owner)) >= n) return;
    await sleep(20);
  }
  throw new Error(`${owner} did not come to hold ${n} leases within ${timeoutMs} ms`);
}

/** One failover: A alone takes every wallet, B joins, A is killed; ms from the kill until B holds them all. */
async function failoverOnce(cluster, sandbox, fleet, leaseSec, run, random) {
  const stateUrl = await cluster.createDatabase();
  const sql = new pg.Pool({ connectionString: stateUrl, max: 1 });
  const config = clusterConfig(`cluster-failover-${leaseSec}-${run}`, { wallets: fleet, baseUrl: sandbox.url, leaseSec, perMinute: 60_000, burst: 1000, poll: '*/1 * * * * *', rules: NEVER_RULE });
  const a = daemon(config, stateUrl, 'a');
  let b;
  try {
    const idA = (await a.waitEvent('cluster.joined')).daemon;
    await waitHeld(sql, idA, fleet.length, 30_000);
    b = daemon(config, stateUrl, 'b');
    // Started: registered, its first round done, finding every wallet held by A.
    await b.waitEvent('daemon.started');
    const idB = (await b.waitEvent('cluster.joined')).daemon;
    // At a random point of B's lease round (it ticks every third of a lease from its start): a
    // kill right at B's start would always land at the same phase and measure exactly one lease.
    // A may hand B part of its share meanwhile; it still holds most.
    await sleep(random() * (leaseSec * 1000) / 3);
    const heldAtKill = await heldBy(sql, idA);
    const killedAt = performance.now();
    process.kill(a.pid, 'SIGKILL');
    await waitHeld(sql, idB, fleet.length, leaseSec * 4000 + 10_000);
    const ms = performance.now() - killedAt;
    log(`failover, lease ${leaseSec} s, run ${run + 1}: ${(ms / 1000).toFixed(2)} s (A held ${heldAtKill}/${fleet.length})`);
    return { ms, heldAtKill };
  } finally {
    await b?.stop().catch(() => undefined);
    await a.stop().catch(() => undefined);
    await sql.end();
  }
}

/** Polls a minute with `daemons` daemons, each with its own budget, measured at the sandbox. */
async function throughputOnce(cluster, sandbox, fleet, { daemons, perMinute, burst, poll, warmupSec, seconds }) {
  const stateUrl = await cluster.createDatabase();
  const sql = new pg.Pool({ connectionString: stateUrl, max: 1 });
  const config = clusterConfig(`cluster-throughput-${daemons}`, { wallets: fleet, baseUrl: sandbox.url, leaseSec: 15, perMinute, burst, poll, rules: NEVER_RULE });
  const procs = Array.from({ length: daemons }, (_, i) => daemon(config, stateUrl, `t${i}`));
  try {
    const ids = [];
    for (const p of procs) {
      await p.waitEvent('daemon.started');
      ids.push((await p.waitEvent('cluster.joined')).daemon);
    }
    // The split settled: each daemon holds its share (±1).
    const share = Math.floor(fleet.length / daemons);
    for (const id of ids) await waitHeld(sql, id, share, 60_000);
    await sleep(warmupSec * 1000);
    await sandbox.resetStats();
    const t0 = performance.now();
    await sleep(seconds * 1000);
    const stats = await sandbox.stats();
    const span = (performance.now() - t0) / 1000;
    const polls = Object.values(stats.byOp.summary ?? {}).reduce((a, b) => a + b, 0);
    const perMin = (polls / span) * 60;
    log(`throughput, ${daemons} daemon(s): ${perMin.toFixed(0)} polls a minute`);
    return { daemons, polls, seconds: span, pollsPerMinute: perMin, budgetPerMinute: perMinute * daemons };
  } finally {
    for (const p of procs) await p.stop().catch(() => undefined);
    await sql.end();
  }
}

export async function benchCluster({ quick = false } = {}) {
  const loadStart = os.loadavg();
  const cluster = await startPostgres();
  const failoverFleet = (await walletFixtures(10_000)).slice(0, 50);
  // A poll every 10 s; 600 a minute is 100 polls an interval, a third of this fleet.
  const tp = { wallets: 300, perMinute: 600, burst: 10, poll: '*/10 * * * * *', warmupSec: quick ? 5 : 10, seconds: quick ? 20 : 60 };
  const tpFleet = (await walletFixtures(10_000)).slice(0, tp.wallets);
  const sandbox = await forkSandbox({
    apiKey: API_KEY,
    wallets: tpFleet.map((w) => ({ address: w.address, pendingLamports: '0', accrualLamportsPerSec: '0' })),
  });
  try {
    const failover = [];
    const random = prng(15);
    for (const [leaseSec, runs] of quick ? [[15, 1], [3, 2]] : [[15, 3], [3, 5]]) {
      const samples = [];
      for (let run = 0; run < runs; run++) samples.push(await failoverOnce(cluster, sandbox, failoverFleet, leaseSec, run, random));
      failover.push({ leaseSec, wallets: failoverFleet.length, runsMs: samples.map((s) => s.ms), medianMs: median(samples.map((s) => s.ms)), heldAtKill: samples.map((s) => s.heldAtKill) });
    }
    const one = await throughputOnce(cluster, sandbox, tpFleet, { daemons: 1, ...tp });
    const two = await throughputOnce(cluster, sandbox, tpFleet, { daemons: 2, ...tp });
    const three = await throughputOnce(cluster, sandbox, tpFleet, { daemons: 3, ...tp });
    // What the fleet asks for at most: every wallet once per poll interval (10 s).
    const demandPerMinute = tp.wallets * 6;
    return {
      failover,
      throughput: { ...tp, demandPerMinute, runs: [one, two, three], ratio: two.pollsPerMinute / one.pollsPerMinute, ratio3: three.pollsPerMinute / one.pollsPerMinute },
      // The machine is shared (other builds and tests may run beside the bench): its load, said with the figures.
      loadavg: { start: loadStart, end: os.loadavg() },
    };
  } finally {
    await sandbox.close();
    await cluster.stop();
  }
}

/** Replaces (or adds, before the closing "what changed" section) the cluster section of RESULTS.md. */
async function writeSection(result) {
  const { renderClusterSection } = await import('./report.mjs');
  const file = join(REPO, 'bench/RESULTS.md');
  const section = renderClusterSection(result);
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const start = text.indexOf('\n## 8. Cluster');
  const next = start < 0 ? -1 : text.indexOf('\n## ', start + 1);
  const tail = text.indexOf('\n## What the profiles found');
  const out =
    start >= 0
      ? `${text.slice(0, start + 1)}${section}${next < 0 ? '' : text.slice(next + 1)}`
      : tail >= 0
        ? `${text.slice(0, tail + 1)}${section}${text.slice(tail + 1)}`
        : `${text}\n${section}`;
  writeFileSync(file, out);
  log(`wrote the cluster section of ${file}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  const result = await benchCluster({ quick });
  writeFileSync(join(OUT, 'cluster.json'), JSON.stringify(result, null, 1));
  console.log(JSON.stringify(result, null, 1));
  if (!quick) await writeSection(result);
}
