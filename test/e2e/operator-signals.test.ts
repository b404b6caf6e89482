// Issue 13, "How it is shown": a daemon run against the sandbox and scraped as Prometheus would.
// Every series the shipped alert rules and dashboard name is in its /metrics (the label sets they
// name, from the start); the API killed, /readyz goes 503 and says why while those series stay;
// restarted with the API still down, the last success comes back from the state file, so neither
// readiness nor the stale-poll alert is fooled. A refused reload leaves it ready (the previous
// config runs); a request refused as invalid pauses signing, which /readyz and
// autoclaim_signing_paused both say.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { closedPort } from '../support/net.js';
import { dashboardExpressions, missingFrom, parseExposition, ruleExpressions, sampleValue, type Sample } from '../deploy/signals.js';
import { buildOnce } from './build.js';
import { CANARY_API_KEY, makeWallets, spawnCli, tempDir, writeConfig, type Child, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

beforeAll(() => buildOnce(), 120_000);

interface ReadyBody {
  ready: boolean;
  reasons: string[];
  checks: Record<string, { ok: boolean; detail: string }>;
}

async function readyz(base: string): Promise<{ status: number; body: ReadyBody }> {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, body: (await res.json()) as ReadyBody };
}

async function scrape(base: string): Promise<Sample[]> {
  return parseExposition(await (await fetch(`${base}/metrics`)).text());
}

/** Asks until the answer is the one wanted; gives up (and says what it last saw) after timeoutMs. */
async function until<T>(ask: () => Promise<T>, ok: (t: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await ask();
    if (ok(got)) return got;
    if (Date.now() > deadline) throw new Error(`gave up waiting; last answer: ${JSON.stringify(got)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const SIGNALS = () => [...ruleExpressions(), ...dashboardExpressions()];

describe('operator signals against a live daemon', () => {
  let sandbox: Sandbox | undefined;
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  let child: Child | undefined;

  const startApi = async (over: Partial<SandboxOptions> = {}) => {
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallets[0]!.address, pendingLamports: 1n * SOL, accrualLamportsPerSec: 0n }],
      ...over,
    });
    return sandbox;
  };

  const runDaemon = async (baseUrl: string, port: number) => {
    const config = writeConfig(dir, {
      baseUrl,
      wallets,
      extra: `metrics:\n  listen: 127.0.0.1:${port}\nalerts:\n  stale_after_intervals: 2\n`,
    });
    child = spawnCli(['run', '--config', config], { cwd: dir });
    await child.waitFor((e) => e.event === 'health.listening');
    return child;
  };

  const stopDaemon = async () => {
    child?.proc.kill('SIGTERM');
    expect((await child?.exited)?.code).toBe(0);
  };

  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
    wallets = makeWallets(dir, ['alpha']);
  });

  afterEach(async () => {
    await child?.stop();
    await sandbox?.close();
    sandbox = undefined;
    cleanup();
  });

  it('exports what the rules and the dashboard name; with the API killed /readyz goes 503, and a restart with the API down hides nothing', async () => {
    const api = await startApi();
    const port = await closedPort();
    const base = `http://127.0.0.1:${port}`;
    const daemon = await runDaemon(api.url, port);
    await daemon.waitFor((e) => e.event === 'action.acknowledged' && e.kind === 'deposit');
    const afterDeposit = daemon.events().length;
    await daemon.waitFor((e, i) => e.event === 'poll.ok' && i >= afterDeposit);

    // Working: ready, and every series (and label set) the rules and the dashboard use is there.
    const ready = await readyz(base);
    expect(ready).toMatchObject({ status: 200, body: { ready: true, reasons: [] } });
    const healthy = await scrape(base);
    expect(missingFrom(healthy, SIGNALS())).toEqual([]);
    expect(sampleValue(healthy, 'autoclaim_build_info', { version: '0.1.0' })).toBe(1);
    expect(sampleValue(healthy, 'autoclaim_action_sol_total', { action: 'claim' })).toBe(1);
    expect(sampleValue(healthy, 'autoclaim_action_sol_total', { action: 'deposit' })).toBe(0.5);
    expect(sampleValue(healthy, 'autoclaim_plans_created_total', { rule: 'compound' })).toBe(1);
    expect(sampleValue(healthy, 'autoclaim_plan_outcomes_total', { rule: 'compound', outcome: 'done' })).toBe(1);
    expect(sampleValue(healthy, 'autoclaim_wallet_polls_total', { wallet: 'alpha', outcome: 'ok' })).toBeGreaterThan(0);
    const lastSuccess = sampleValue(healthy, 'autoclaim_last_successful_poll_timestamp_seconds') ?? 0;
    expect(lastSuccess).toBeGreaterThan(0);

    // The API killed: polls fail, and once none has succeeded for 2 intervals /readyz says so.
    await api.close();
    sandbox = undefined;
    const down = await until(() => readyz(base), (r) => r.status === 503);
    expect(down.body.ready).toBe(false);
    expect(down.body.reasons).toEqual([expect.stringMatching(/^poll: no wallet poll has succeeded for \d+s \(more than 2 poll interval\(s\) of 1s\)$/)]);
    const failing = await until(() => scrape(base), (s) => (sampleValue(s, 'autoclaim_wallets_stale') ?? 0) === 1);
    expect(missingFrom(failing, SIGNALS())).toEqual([]);
    expect(sampleValue(failing, 'autoclaim_polls_total', { outcome: 'failed' })).toBeGreaterThan(0);
    expect(sampleValue(failing, 'autoclaim_last_successful_poll_timestamp_seconds')).toBe(lastSuccess);
    await stopDaemon();

    // Restarted with the API still down: the state file's last success is back at once, every
    // series the rules use exists from the start, and readiness is not fooled by the fresh start.
    const again = await runDaemon(api.url, port);
    const restarted = await scrape(base);
    expect(missingFrom(restarted, SIGNALS())).toEqual([]);
    expect(sampleValue(restarted, 'autoclaim_last_successful_poll_timestamp_seconds')).toBe(lastSuccess);
    expect(sampleValue(restarted, 'autoclaim_wallet_last_successful_poll_timestamp_seconds', { wallet: 'alpha' })).toBe(lastSuccess);
    expect(sampleValue(restarted, 'autoclaim_polls_total', { outcome: 'ok' })).toBe(0);
    expect(sampleValue(restarted, 'autoclaim_stale_after_seconds')).toBe(2);
    expect(await readyz(base)).toMatchObject({ status: 503, body: { reasons: [expect.stringMatching(/^poll: /)] } });
    await again.waitFor((e) => e.event === 'poll.failed');
    await stopDaemon();
  });

  it('stays ready through a refused reload (the previous config runs) and says so', async () => {
    const api = await startApi();
    const port = await closedPort();
    const base = `http://127.0.0.1:${port}`;
    const daemon = await runDaemon(api.url, port);
    await daemon.waitFor((e) => e.event === 'poll.ok');
    writeFileSync(join(dir, 'autoclaim.yaml'), 'api: [this is not a config\n');
    daemon.proc.kill('SIGHUP');
    await daemon.waitFor((e) => e.event === 'config.invalid');
    const seen = daemon.events().length;
    await daemon.waitFor((e, i) => e.event === 'poll.ok' && i >= seen);
    const r = await readyz(base);
    expect(r).toMatchObject({ status: 200, body: { ready: true, reasons: [] } });
    expect(r.body.checks.config?.detail).toMatch(/last reload was refused.*previous config is running/);
    const samples = await scrape(base);
    expect(sampleValue(samples, 'autoclaim_config_last_reload_successful')).toBe(0);
    expect(sampleValue(samples, 'autoclaim_config_reloads_total', { outcome: 'invalid' })).toBe(1);
    await stopDaemon();
  });

  it('says signing is paused when the server refuses a signed request as invalid', async () => {
    // The server expects other header names than the config sends: every signed request is invalid.
    const api = await startApi({ headerPrefix: 'x-other' });
    const port = await closedPort();
    const base = `http://127.0.0.1:${port}`;
    const daemon = await runDaemon(api.url, port);
    await daemon.waitFor((e) => e.event === 'action.failed' || e.event === 'signing.paused');
    const paused = await until(() => readyz(base), (r) => r.status === 503);
    expect(paused.body.reasons).toEqual([expect.stringMatching(/^signing: paused for 1 wallet\(s\): \w+: HTTP 400/)]);
    const samples = await scrape(base);
    expect(sampleValue(samples, 'autoclaim_signing_paused', { scope: 'wallet' })).toBe(1);
    expect(sampleValue(samples, 'autoclaim_signing_paused', { scope: 'all' })).toBe(0);
    expect(sampleValue(samples, 'autoclaim_plan_outcomes_total', { rule: 'compound', outcome: 'failed' })).toBe(1);
    expect(sampleValue(samples, 'autoclaim_steps_total', { kind: 'claim', outcome: 'failed' })).toBe(1);
    await stopDaemon();
  });
});
