// The operator's view of a live cluster (issue 15): two `run` daemons on one PostgreSQL state and
// one wallet. The one holding it is ready and reports it; the other is standby — /readyz 503 with
// `standby: true` and a reason naming it, its metrics saying it holds nothing and nothing is stale
// for it — and still exports every series the shipped rules and dashboard name. Stopped cleanly,
// the first hands the wallet over: the standby takes it, polls it and turns ready.
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { closedPort } from '../support/net.js';
import { createDatabase } from '../support/postgres.js';
import { dashboardExpressions, missingFrom, parseExposition, ruleExpressions, sampleValue, type Sample } from '../deploy/signals.js';
import { buildOnce } from '../e2e/build.js';
import { CANARY_API_KEY, configYaml, makeWallets, runCli, spawnCli, tempDir, type Child, type TestWallet } from '../e2e/helpers.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

beforeAll(() => buildOnce(), 120_000);

interface ReadyBody {
  ready: boolean;
  standby: boolean;
  reasons: string[];
  checks: Record<string, { ok: boolean; detail: string; held?: number; live?: number }>;
}

async function readyz(base: string): Promise<{ status: number; body: ReadyBody }> {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, body: (await res.json()) as ReadyBody };
}

async function scrape(base: string): Promise<Sample[]> {
  return parseExposition(await (await fetch(`${base}/metrics`)).text());
}

/** Asks until the answer is the one wanted; a generous bound, and what it last saw when it gives up. */
async function until<T>(ask: () => Promise<T>, ok: (t: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await ask();
    if (ok(got)) return got;
    if (Date.now() > deadline) throw new Error(`gave up waiting; last answer: ${JSON.stringify(got)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a live cluster seen by its operator', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  let stateUrl: string;
  const children: Child[] = [];

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    wallets = makeWallets(dir, ['solo']);
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: wallets.map((w) => ({ address: w.address, pendingLamports: 0n, accrualLamportsPerSec: 0n })),
    });
    stateUrl = await createDatabase();
  });

  afterEach(async () => {
    for (const c of children.splice(0)) await c.stop();
    await sandbox.close();
    cleanup();
  });

  /** A daemon with its own config (its own metrics port), the shortest lease allowed. */
  const daemon = async (name: string): Promise<{ child: Child; base: string }> => {
    const port = await closedPort();
    const yaml = configYaml({ baseUrl: sandbox.url, wallets, extra: `metrics:\n  listen: 127.0.0.1:${port}\nalerts:\n  stale_after_intervals: 2\n` }).replace(
      'state:\n  path: ./state/autoclaim.db\n',
      'state:\n  path: ./state/autoclaim.db\n  lease: 3s\n',
    );
    const config = join(dir, `${name}.yaml`);
    writeFileSync(config, yaml);
    const child = spawnCli(['run', '--config', config], { cwd: dir, env: { AUTOCLAIM_STATE_URL: stateUrl } });
    children.push(child);
    await child.waitFor((e) => e.event === 'health.listening', 30_000);
    await child.waitFor((e) => e.event === 'daemon.started', 30_000);
    return { child, base: `http://127.0.0.1:${port}` };
  };

  it('has one daemon working and the other standby, not paged on; a clean stop hands the wallet over', async () => {
    const a = await daemon('a');
    await a.child.waitFor((e) => e.event === 'poll.ok');
    const b = await daemon('b');

    // b: the wallet is a's; once b's lease round has seen a, it is standby.
    const standby = await until(() => readyz(b.base), (r) => r.body.standby);
    expect(standby.status).toBe(503);
    expect(standby.body.ready).toBe(false);
    expect(standby.body.reasons).toEqual([expect.stringMatching(/^cluster: standby: holds no lease while 1 other daemon\(s\) are live/)]);
    expect(standby.body.checks.poll).toMatchObject({ ok: true });
    expect(standby.body.checks.cluster).toMatchObject({ held: 0, live: 2 });
    const sb = await scrape(b.base);
    expect(sampleValue(sb, 'autoclaim_leases_held')).toBe(0);
    expect(sampleValue(sb, 'autoclaim_cluster_daemons_live')).toBe(2);
    // Nothing stale for it: the wallet is a's to poll (without the scope it would count, as b never polls it).
    expect(sampleValue(sb, 'autoclaim_wallets_stale')).toBe(0);
    expect(sampleValue(sb, 'autoclaim_wallets')).toBe(1);
    // Every series the rules and the dashboard name, but the top-k by wallet: a daemon holding no
    // wallet has none to rank (as any daemon before its first poll).
    expect(missingFrom(sb, [...ruleExpressions(), ...dashboardExpressions()]).filter((m) => !m.startsWith('autoclaim_top_pending_sol'))).toEqual([]);

    // a: working, ready, holding the one wallet.
    const ready = await until(() => readyz(a.base), (r) => r.body.checks.cluster?.live === 2);
    expect(ready).toMatchObject({ status: 200, body: { ready: true, standby: false, reasons: [] } });
    const sa = await scrape(a.base);
    expect([sampleValue(sa, 'autoclaim_leases_held'), sampleValue(sa, 'autoclaim_wallets_stale')]).toEqual([1, 0]);

    // status names a as the owner.
    const status = await runCli(['status', '--json', '--config', join(dir, 'a.yaml')], { cwd: dir, env: { AUTOCLAIM_STATE_URL: stateUrl } });
    expect(status.code).toBe(0);
    const body = JSON.parse(status.stdout) as { wallets: Array<{ lease: { pid: number; valid: boolean } | null }>; cluster: { daemons: unknown[] } };
    expect(body.wallets[0]?.lease).toMatchObject({ pid: a.child.proc.pid, valid: true });
    expect(body.cluster.daemons).toHaveLength(2);

    // a stops cleanly: it hands the lease back, b takes it, polls, and is ready.
    a.child.proc.kill('SIGTERM');
    expect((await a.child.exited).code).toBe(0);
    const took = await until(() => readyz(b.base), (r) => r.status === 200);
    expect(took.body).toMatchObject({ ready: true, standby: false, checks: { cluster: { held: 1, live: 1 } } });
    const after = await scrape(b.base);
    expect(sampleValue(after, 'autoclaim_leases_held')).toBe(1);
    // A clean hand-over is not a loss, for either.
    expect(after.filter((s) => s.name === 'autoclaim_lease_losses_total').every((s) => s.value === 0)).toBe(true);

    b.child.proc.kill('SIGTERM');
    expect((await b.child.exited).code).toBe(0);
  }, 90_000);
});
