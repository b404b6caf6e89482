// `actions resolve ID --not-applied` on a step whose signed request the service can still accept.
// An operator who checks the chain a minute after a deposit timed out finds nothing — the server
// may hold the request, or a proxy, and apply it later — resolves it as not applied, and sends it
// again by hand: both land. SPEC §2 lets a claim be judged not applied only once its request can no
// longer be accepted (api.claim_settle: ts_window + margin, by the state store's clock); the
// operator's verdict is now held to the same bound. `--applied` needs no wait: it sends nothing.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain.js';
import { silentLogger } from '../../src/log/logger.js';
import { openStore } from '../../src/store/index.js';
import { draft, request } from '../store/fixtures.js';
import { makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

describe('actions resolve --not-applied within the timestamp window', () => {
  let dir: string;
  let cleanup: () => void;
  let config: string;
  let wallet: TestWallet;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir('autoclaim-resolve-window-'));
    [wallet] = makeWallets(dir, ['alpha']) as [TestWallet];
    config = writeConfig(dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets: [wallet] });
  });
  afterEach(() => cleanup());

  /** An unknown deposit whose request was signed `ageSec` ago (default ts_window is 5 min). */
  function unknownDeposit(epoch: string, ageSec: number): number {
    const store = openStore(join(dir, 'state', 'autoclaim.db'), { logger: silentLogger(), clock: systemClock });
    try {
      const plan = store.insertPlan(
        draft({ wallet: 'alpha', address: wallet.address, epoch, steps: [{ kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'fixed', lamports: 1_000_000_000n } }] }),
        { dry: false, reason: 'test' },
      );
      const step = plan!.steps[0]!;
      store.markSending(step.id, request({ ts: Math.floor(Date.now() / 1000) - ageSec }));
      store.markUnknown(step.id, { error: 'timeout after the request was written' });
      return step.id;
    } finally {
      store.close();
    }
  }
  const stateOf = async (id: number): Promise<string | undefined> => {
    const r = await runCli(['actions', '--json', '--config', config], { cwd: dir });
    const plans = (JSON.parse(r.stdout) as { plans: Array<{ steps: Array<{ id: number; state: string }> }> }).plans;
    return plans.flatMap((p) => p.steps).find((s) => s.id === id)?.state;
  };

  it('is refused while the request can still land, and changes nothing; --applied is not', async () => {
    const id = unknownDeposit('2026-11-26', 60);
    const r = await runCli(['actions', 'resolve', String(id), '--not-applied', '--config', config], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/can still be accepted by the service until .*api\.claim_settle/);
    expect(await stateOf(id)).toBe('unknown');
    expect(r.stderr).toMatch(/--force if you know the service refused it/);

    const applied = await runCli(['actions', 'resolve', String(id), '--applied', '--config', config], { cwd: dir });
    expect(applied.code).toBe(0);
    expect(await stateOf(id)).toBe('acknowledged');
  });

  it('is taken with --force within the window (the operator knows it never left)', async () => {
    const id = unknownDeposit('2026-11-26', 60);
    const r = await runCli(['actions', 'resolve', String(id), '--not-applied', '--force', '--config', config], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(await stateOf(id)).toBe('rejected');
  });

  it('is taken once the request is past the window', async () => {
    const id = unknownDeposit('2026-11-25', 3600);
    const r = await runCli(['actions', 'resolve', String(id), '--not-applied', '--config', config], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(await stateOf(id)).toBe('rejected');
  });
});
