// The database may fail; the daemon does not (issue 25, findings 3 and 4). Real `autoclaim run`
// processes on real PostgreSQL:
// - `pg_ctl stop -m immediate` (SIGQUIT to the server) and a start again: every daemon is still
//   alive, says not ready (db) while the database is gone, and polls and claims again afterwards by
//   itself; the sandbox's ledger shows no (wallet, epoch) claimed twice and no claim applied that
//   no step recorded;
// - a TCP proxy between a daemon and PostgreSQL that black-holes (stops passing bytes, closes
//   nothing): queries fail by their deadline, the daemon says not ready and raises the
//   state_unreachable alert; once the proxy passes bytes again every wallet is polled again; and
//   SIGTERM while it black-holes still ends the daemon, exit 0.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, configYaml, makeWallets, spawnCli, tempDir, type Child, type TestWallet } from '../e2e/helpers.js';
import { closedPort } from '../support/net.js';
import { createDatabase, startPostgres, type PostgresCluster } from '../support/postgres.js';
import { tcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { recordedSteps, until } from './journal.js';
import { checkLedger } from './ledger-check.js';

const SOL = 1_000_000_000n;
const RULE = `  - name: harvest
    when:
      pending_sol: { gte: 0.5 }
    do:
      - claim
`;

interface Ready {
  ready: boolean;
  reasons: string[];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function readyz(base: string): Promise<{ status: number; body: Ready } | undefined> {
  try {
    const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: (await res.json()) as Ready };
  } catch {
    return undefined;
  }
}

describe('the database fails; the daemons do not', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  const children: Child[] = [];

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-dbfaults-'));
    wallets = makeWallets(dir, ['w0', 'w1', 'w2', 'w3']);
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      epochMs: 3_000,
      tsWindowSec: 10,
      defaultAccrualLamportsPerSec: 0n,
      wallets: wallets.map((w) => ({ address: w.address, pendingLamports: 0n, accrualLamportsPerSec: SOL, balanceLamports: 0n })),
    });
  });

  afterEach(async () => {
    for (const c of children.splice(0)) await c.stop();
    await sandbox.close();
    cleanup();
  });

  /** A daemon with its own config (its own metrics port), a 3 s lease and a short query deadline. */
  const daemon = async (name: string, stateUrl: string, queryTimeout: string): Promise<{ child: Child; base: string }> => {
    const port = await closedPort();
    const yaml = configYaml({
      baseUrl: sandbox.url,
      wallets,
      rules: RULE,
      maxSolPerAction: '1000',
      // The sandbox's window (10 s): a claim lost in an outage is judged after 20 s, not 6 min.
      apiExtra: '  ts_window: 10s\n',
      extra: `metrics:\n  listen: 127.0.0.1:${port}\nalerts:\n  stale_after_intervals: 2\n`,
    }).replace('state:\n  path: ./state/autoclaim.db\n', `state:\n  path: ./state/autoclaim.db\n  lease: 3s\n  query_timeout: ${queryTimeout}\n`);
    const config = join(dir, `${name}.yaml`);
    writeFileSync(config, yaml);
    // 3 s epochs are a calendar day each: the loopback sandbox's fast epochs, exempt from SPEC §2's calendar check.
    const child = spawnCli(['run', '--config', config], { cwd: dir, env: { AUTOCLAIM_STATE_URL: stateUrl, AUTOCLAIM_SANDBOX_EPOCHS: 'fast' } });
    children.push(child);
    await child.waitFor((e) => e.event === 'daemon.started', 30_000);
    return { child, base: `http://127.0.0.1:${port}` };
  };

  const alive = (c: Child) => c.proc.exitCode === null && c.proc.signalCode === null;
  /** Index of the next event a daemon prints (to wait for events after a moment). */
  const mark = (c: Child) => c.events().length;
  const eventsSince = (c: Child, from: number) => c.events().slice(from);

  /**
   * Judged as the failover test judges (ledger-check.ts): no step applied twice, no (wallet, plan
   * epoch) claimed twice (a plan recorded just before the outage may be sent after it, in a later
   * epoch beside that epoch's own: two plans, not a double), no claim applied that no step recorded.
   */
  const judgeLedger = async (stateUrl: string): Promise<void> => {
    const steps = await recordedSteps(stateUrl);
    const verdict = checkLedger({
      ledger: sandbox.ledger(),
      steps,
      geometry: { origin: sandbox.world.epochOrigin, epochMs: sandbox.world.epochMs },
      qualifying: [],
      addresses: wallets.map((w) => w.address),
      ops: ['claim'],
    });
    expect({ unexplained: verdict.unexplained.map((e) => `${e.wallet} ${e.op} ${e.epoch}`), doubles: verdict.doubles }).toEqual({ unexplained: [], doubles: [] });
    expect(sandbox.ledger().filter((e) => e.op === 'claim').length).toBeGreaterThan(0);
  };

  describe('PostgreSQL stopped -m immediate, then started again', () => {
    let pgc: PostgresCluster;
    beforeEach(async () => {
      pgc = await startPostgres();
    });
    afterEach(async () => {
      await pgc.stop();
    });

    it('leaves every daemon alive, not ready while it is down, working again after', { timeout: 150_000 }, async () => {
      const stateUrl = await pgc.createDatabase();
      const a = await daemon('a', stateUrl, '2s');
      const b = await daemon('b', stateUrl, '2s');
      await until('claims before the crash', () => Promise.resolve(sandbox.ledger().filter((e) => e.op === 'claim').length), (n) => n >= 4);

      await pgc.crash();
      const crashedAt = Date.now();
      for (const d of [a, b]) {
        const down = await until('not ready while the database is down', () => readyz(d.base), (r) => r?.status === 503 && r.body.reasons.some((x) => x.startsWith('db:')));
        expect(down?.body.ready).toBe(false);
        await d.child.waitFor((e) => e.event === 'state.unreachable');
      }
      await sleep(1_500);
      expect([alive(a.child), alive(b.child)]).toEqual([true, true]);

      const from = [mark(a.child), mark(b.child)];
      await pgc.restart();
      const restartedAt = Date.now();
      for (const [i, d] of [a, b].entries()) {
        await d.child.waitFor((e, n) => n >= (from[i] ?? 0) && e.event === 'state.reachable', 30_000);
        await until('ready again', () => readyz(d.base), (r) => r?.status === 200, 45_000);
        // Polling again: a successful poll logged after the database came back.
        await d.child.waitFor((e, n) => n >= (from[i] ?? 0) && e.event === 'poll.ok', 30_000);
      }
      // Acting again: claims applied after the restart.
      await until('claims after the restart', () => Promise.resolve(sandbox.ledger().filter((e) => e.op === 'claim' && e.ts > restartedAt).length), (n) => n >= 2, 45_000);
      expect(restartedAt).toBeGreaterThan(crashedAt);
      expect([alive(a.child), alive(b.child)]).toEqual([true, true]);

      for (const d of [a, b]) d.child.proc.kill('SIGTERM');
      expect((await Promise.all([a.child.exited, b.child.exited])).map((x) => x.code)).toEqual([0, 0]);
      await judgeLedger(stateUrl);
    });
  });

  describe('a black-holed connection', () => {
    let proxy: TcpProxy;
    let stateUrl: string;
    beforeEach(async () => {
      stateUrl = await createDatabase();
      const target = new URL(stateUrl);
      proxy = await tcpProxy({ host: target.hostname, port: Number(target.port) });
    });
    afterEach(async () => {
      await proxy.close();
    });

    it('fails by its deadlines, says not ready, polls every wallet again after, and stops on SIGTERM meanwhile', { timeout: 150_000 }, async () => {
      const via = new URL(stateUrl);
      via.port = String(proxy.port);
      const a = await daemon('a', via.toString(), '1s');
      await until('every wallet polled', () => Promise.resolve(new Set(a.child.events().filter((e) => e.event === 'poll.ok').map((e) => e.wallet)).size), (n) => n === wallets.length);

      const silentFrom = mark(a.child);
      proxy.blackhole(true);
      const down = await until('not ready while black-holed', () => readyz(a.base), (r) => r?.status === 503 && r.body.reasons.some((x) => x.startsWith('db:')), 45_000);
      expect(down?.body.ready).toBe(false);
      await a.child.waitFor((e, n) => n >= silentFrom && e.event === 'alert.opened' && e.alert === 'state_unreachable', 30_000);
      expect(alive(a.child)).toBe(true);

      const healedFrom = mark(a.child);
      proxy.blackhole(false);
      await a.child.waitFor((e, n) => n >= healedFrom && e.event === 'state.reachable', 30_000);
      await until('ready again', () => readyz(a.base), (r) => r?.status === 200, 45_000);
      // No wallet stuck: each one polled successfully after the heal.
      await until(
        'every wallet polled after the heal',
        () => Promise.resolve(new Set(eventsSince(a.child, healedFrom).filter((e) => e.event === 'poll.ok').map((e) => e.wallet)).size),
        (n) => n === wallets.length,
        45_000,
      );
      await a.child.waitFor((e, n) => n >= healedFrom && e.event === 'alert.closed' && e.alert === 'state_unreachable', 30_000);

      // SIGTERM while the connection black-holes again: the stop is bounded whatever the database does.
      proxy.blackhole(true);
      await until('not ready again', () => readyz(a.base), (r) => r?.status === 503, 45_000);
      a.child.proc.kill('SIGTERM');
      expect((await a.child.exited).code).toBe(0);
      proxy.blackhole(false);
      await judgeLedger(stateUrl);
    });
  });
});
