// A start that migrates the SQLite state (an upgrade over a large file) may outlast the unit's
// TimeoutStartSec=90s: systemd would kill it half-way, the migration's step would roll back, and
// every restart would begin it again until the start limit stopped them. The migration holds the
// event loop, so `run` tells systemd before it begins (EXTEND_TIMEOUT_USEC, an hour), and only then.
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { listenNotify, type NotifyListener } from '../service/notify-listener.js';
import { writeV1State } from '../store/v1-state.js';
import { buildOnce } from './build.js';
import { makeWallets, spawnCli, tempDir, writeConfig, type Child, type TestWallet } from './helpers.js';

beforeAll(() => buildOnce(), 120_000);

describe('a start that migrates the state', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  let notify: NotifyListener;
  let child: Child | undefined;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    wallets = makeWallets(dir, ['alpha']);
    sandbox = await startSandbox({ apiKey: 'canary-apikey-7Qk2ZxW9pLmN4vR8sT1u', defaultAccrualLamportsPerSec: 0n, wallets: [{ address: wallets[0]!.address, pendingLamports: 0n, accrualLamportsPerSec: 0n }] });
    notify = listenNotify();
  });

  afterEach(async () => {
    await child?.stop();
    notify.close();
    await sandbox.close();
    cleanup();
  });

  const start = async (): Promise<string[]> => {
    const config = writeConfig(dir, { baseUrl: sandbox.url, wallets });
    child = spawnCli(['run', '--config', config], { cwd: dir, env: { NOTIFY_SOCKET: notify.path } });
    await notify.waitFor('READY=1');
    return notify.assignments();
  };

  it('tells systemd the start takes longer, before it migrates and before READY=1', async () => {
    writeV1State(join(dir, 'state', 'autoclaim.db'));
    const said = await start();
    const extend = said.indexOf('EXTEND_TIMEOUT_USEC=3600000000');
    expect(extend).toBeGreaterThanOrEqual(0);
    expect(extend).toBeLessThan(said.indexOf('READY=1'));
    const events = child!.events().map((e) => e.event);
    expect(events.indexOf('state.migrating')).toBeGreaterThanOrEqual(0);
    expect(events.indexOf('state.migrating')).toBeLessThan(events.indexOf('state.migrated'));
  });

  it('does not when there is nothing to migrate (a new state file)', async () => {
    const said = await start();
    expect(said.some((a) => a.startsWith('EXTEND_TIMEOUT_USEC='))).toBe(false);
  });
});
