// Issue "run it like a service", done-when: the daemon under a (test) systemd notify socket says
// READY=1, pings WATCHDOG=1 and says STOPPING=1; /readyz and /metrics answer while it runs.
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { closedPort } from '../support/net.js';
import { listenNotify, type NotifyListener } from '../service/notify-listener.js';
import { buildOnce } from './build.js';
import { makeWallets, spawnCli, tempDir, writeConfig, type Child, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

beforeAll(() => buildOnce(), 120_000);

describe('the daemon as a service', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  let notify: NotifyListener;
  let child: Child | undefined;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    wallets = makeWallets(dir, ['alpha']);
    sandbox = await startSandbox({
      apiKey: 'canary-apikey-7Qk2ZxW9pLmN4vR8sT1u',
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallets[0]!.address, pendingLamports: 1n * SOL, accrualLamportsPerSec: 0n }],
    });
    notify = listenNotify();
  });

  afterEach(async () => {
    await child?.stop();
    notify.close();
    await sandbox.close();
    cleanup();
  });

  it('says READY=1, pings the watchdog, serves /readyz and /metrics, and says STOPPING=1 on SIGTERM', async () => {
    const port = await closedPort();
    const config = writeConfig(dir, { baseUrl: sandbox.url, wallets, extra: `metrics:\n  listen: 127.0.0.1:${port}\n` });
    child = spawnCli(['run', '--config', config], {
      cwd: dir,
      // 200 ms watchdog: the daemon pings every 100 ms.
      env: { NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: '200000' },
    });
    await notify.waitFor('READY=1');
    await notify.waitFor('WATCHDOG=1');
    await child.waitFor((e) => e.event === 'action.acknowledged' && e.kind === 'deposit');
    const afterDeposit = child.events().length;
    await child.waitFor((e, i) => e.event === 'poll.ok' && i >= afterDeposit);

    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    const readyBody = (await ready.json()) as { ready: boolean };
    expect(ready.status).toBe(200);
    expect(readyBody.ready).toBe(true);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/autoclaim_wallet_polls_total\{wallet="alpha",outcome="ok"\} [1-9]/);
    expect(metrics).toMatch(/autoclaim_polls_total\{outcome="ok"\} [1-9]/);
    expect(metrics).toMatch(/autoclaim_steps_total\{kind="claim",outcome="acknowledged"\} 1/);
    expect(metrics).toMatch(/autoclaim_steps_total\{kind="deposit",outcome="acknowledged"\} 1/);
    expect(metrics).toMatch(/autoclaim_plans_created_total\{rule="compound"\} 1/);
    expect(metrics).toMatch(/autoclaim_plan_outcomes_total\{rule="compound",outcome="done"\} 1/);
    expect(metrics).toMatch(/autoclaim_request_duration_seconds_count\{op="summary",status_class="2xx"\} [1-9]/);
    expect(metrics).toMatch(/autoclaim_wallet_pending_sol\{wallet="alpha"\} 0/);
    expect(metrics).not.toContain('canary-apikey');

    child.proc.kill('SIGTERM');
    expect((await child.exited).code).toBe(0);
    expect(notify.messages.join('\n')).toMatch(/STOPPING=1/);
  });

  it('while the API is down: failed polls are counted and staleness is alerted once per episode', async () => {
    const port = await closedPort();
    await sandbox.close();
    const config = writeConfig(dir, {
      baseUrl: sandbox.url,
      wallets,
      extra: `metrics:\n  listen: 127.0.0.1:${port}\nalerts:\n  stale_after_intervals: 1\n`,
    });
    child = spawnCli(['run', '--config', config], { cwd: dir });
    await child.waitFor((e) => e.event === 'health.listening');
    await child.waitFor((e) => e.event === 'poll.failed');
    // The failures show in autoclaim_polls_total{outcome="failed"} (and per wallet) and the
    // staleness alert; /readyz going 503 is shown in operator-signals.test.ts.
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/autoclaim_wallet_polls_total\{wallet="alpha",outcome="failed"\} [1-9]/);
    const opened = await child.waitFor((e) => e.event === 'alert.opened');
    expect(opened).toMatchObject({ level: 'error', alert: 'wallet_stale', wallet: 'alpha' });
    // Three more failing cycles: still the one alert, not one per tick.
    const seen = child.events().length;
    await child.waitFor((e, i) => e.event === 'poll.failed' && i > seen);
    await child.waitFor((e, i) => e.event === 'poll.failed' && i > seen + 2);
    expect(child.events().filter((e) => e.event === 'alert.opened')).toHaveLength(1);
    child.proc.kill('SIGTERM');
    expect((await child.exited).code).toBe(0);
  });
});
