// `status` before the daemon has polled (issue 13): no state file yet, or one with no poll in it,
// is a fresh install, not a failure: exit 0 with "no polls yet", in text and in JSON.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain.js';
import { silentLogger } from '../../src/log/logger.js';
import { openStore } from '../../src/store/index.js';
import { makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

describe('status on a fresh state', () => {
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  let config: string;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
    wallets = makeWallets(dir, ['alpha', 'beta']);
    config = writeConfig(dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets });
  });
  afterEach(() => cleanup());

  it('without a state file: exit 0, every wallet listed, "no polls yet", and no file created', async () => {
    const r = await runCli(['status', '--config', config], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^alpha\s+-\s+-/m);
    expect(r.stdout).toMatch(/^beta\s+-\s+-/m);
    expect(r.stdout).toContain(`no polls yet: no state file at ${join(dir, 'state', 'autoclaim.db')}`);
    const json = await runCli(['status', '--json', '--config', config], { cwd: dir });
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout) as { wallets: Array<{ wallet: string; lastPollAt: null }>; note: string };
    expect(body.wallets.map((w) => [w.wallet, w.lastPollAt])).toEqual([
      ['alpha', null],
      ['beta', null],
    ]);
    expect(body.note).toMatch(/^no polls yet/);
    // status only reads: it must not leave a state file behind for the daemon to find.
    const again = await runCli(['status', '--config', config], { cwd: dir });
    expect(again.stdout).toContain('no state file');
  });

  it('with a state file and no poll in it: exit 0, "no polls yet"', async () => {
    const store = openStore(join(dir, 'state', 'autoclaim.db'), { logger: silentLogger(), clock: systemClock });
    store.close();
    const r = await runCli(['status', '--config', config], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('no polls yet: the daemon has not polled any of these wallets');
  });

  it('actions agrees with status (issue 27): no state file is an empty journal, exit 0; resolve has nothing to resolve, exit 1', async () => {
    const r = await runCli(['actions', '--config', config], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`no actions yet: no state file at ${join(dir, 'state', 'autoclaim.db')}`);
    const json = await runCli(['actions', '--json', '--config', config], { cwd: dir });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ plans: [] });
    const resolve = await runCli(['actions', 'resolve', '1', '--applied', '--config', config], { cwd: dir });
    expect(resolve.code).toBe(1);
    expect(resolve.stderr).toMatch(/no state file/);
    // Neither created one.
    expect((await runCli(['actions', '--config', config], { cwd: dir })).stdout).toContain('no state file');
  });
});
