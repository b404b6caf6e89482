// Time and restarts review (helper 30): an operator puts back an older copy of the state file (a
// backup from before the last deposit). Without a guard the next `once` found no plan for the epoch
// and deposited again, once_per_epoch notwithstanding: the journal that limits are judged by was
// the restored one. The lock file beside the state keeps the newest request sent, and a state file
// that does not reach it is refused (STATE_ROLLED_BACK), naming what to do.
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

const TOPUP = `  - name: topup
    when:
      pending_sol: { gte: 0.5 }
    do:
      - deposit: { symbol: SOL2X, amount: 1 }
    limits:
      once_per_epoch: true
`;

describe('an older state file put back at its path', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let wallet: TestWallet;
  let config: string;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    [wallet] = makeWallets(dir, ['alpha']) as [TestWallet];
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallet.address, pendingLamports: 0n, accrualLamportsPerSec: 0n, balanceLamports: 10n * SOL }],
    });
    config = writeConfig(dir, { baseUrl: sandbox.url, wallets: [wallet], rules: TOPUP });
  });

  afterEach(async () => {
    await sandbox.close();
    cleanup();
  });

  it('a backup from before the deposit, restored: `once` refuses the state (exit 1, naming it), and the epoch\'s deposit is not made again', async () => {
    const state = join(dir, 'state', 'autoclaim.db');
    expect((await runCli(['once', '--config', config], { cwd: dir })).code).toBe(0); // nothing fires yet
    copyFileSync(state, `${state}.bak`);

    sandbox.world.setWallet(wallet.address, { pendingLamports: SOL });
    expect((await runCli(['once', '--config', config], { cwd: dir })).code).toBe(0);
    expect(sandbox.ledger().map((e) => `${e.op} ${e.amountLamports}`)).toEqual([`deposit ${SOL}`]);

    for (const suffix of ['-wal', '-shm']) rmSync(`${state}${suffix}`, { force: true });
    copyFileSync(`${state}.bak`, state);
    const again = await runCli(['once', '--config', config], { cwd: dir });
    expect(sandbox.ledger().map((e) => `${e.op} ${e.amountLamports}`)).toEqual([`deposit ${SOL}`]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/STATE_ROLLED_BACK|older than the state this host last sent from/);
    expect(again.stderr).toContain('autoclaim.db');
  });
});
