// Issue "the daemon", done-when: against the sandbox, a `once` with a claim-and-compound rule claims
// exactly the wallets above the threshold, deposits the right lamports, a second `once` in the same
// epoch sends nothing, a new epoch claims again, and --dry-run sends nothing signed.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, epochTurningFarAway, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

describe('once against the sandbox', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  let config: string;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    wallets = makeWallets(dir, ['alpha', 'beta', 'gamma']);
    const pending = [1n * SOL, (3n * SOL) / 10n, (6n * SOL) / 10n];
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      // The epoch turns only where the test says (advanceEpoch), not at midnight UTC during it.
      epochOrigin: epochTurningFarAway(),
      defaultAccrualLamportsPerSec: 0n,
      wallets: wallets.map((w, i) => ({ address: w.address, pendingLamports: pending[i], accrualLamportsPerSec: 0n, balanceLamports: 0n })),
    });
    config = writeConfig(dir, { baseUrl: sandbox.url, wallets });
  });

  afterEach(async () => {
    await sandbox.close();
    cleanup();
  });

  const byWallet = (address: string) => sandbox.ledger().filter((e) => e.wallet === address);

  it('claims exactly the wallets above the threshold and deposits 50% of each claim, to the lamport', async () => {
    const r = await runCli(['once', '--config', config], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [alpha, beta, gamma] = wallets as [TestWallet, TestWallet, TestWallet];
    expect(byWallet(alpha.address).map((e) => [e.op, e.symbol, e.amountLamports])).toEqual([
      ['claim', null, 1n * SOL],
      ['deposit', 'SOL2X', SOL / 2n],
    ]);
    expect(byWallet(gamma.address).map((e) => [e.op, e.symbol, e.amountLamports])).toEqual([
      ['claim', null, (6n * SOL) / 10n],
      ['deposit', 'SOL2X', (3n * SOL) / 10n],
    ]);
    expect(byWallet(beta.address)).toEqual([]);

    const fired = r.events.filter((e) => e.event === 'rule.fired').map((e) => e.wallet);
    expect(fired.sort()).toEqual(['alpha', 'gamma']);
    expect(r.events.filter((e) => e.event === 'action.acknowledged')).toHaveLength(4);
  });

  it('sends nothing on a second once in the same epoch, and claims again in a new epoch', async () => {
    expect((await runCli(['once', '--config', config], { cwd: dir })).code).toBe(0);
    const afterFirst = sandbox.ledger().length;
    expect(afterFirst).toBe(4);

    // Pending is back over the threshold, but this epoch's plan already exists.
    const alpha = wallets[0]!;
    sandbox.world.setWallet(alpha.address, { pendingLamports: 2n * SOL });
    const second = await runCli(['once', '--config', config], { cwd: dir });
    expect(second.code).toBe(0);
    expect(sandbox.ledger()).toHaveLength(afterFirst);
    expect(second.events.filter((e) => e.event === 'action.sent')).toEqual([]);

    sandbox.advanceEpoch();
    const third = await runCli(['once', '--config', config], { cwd: dir });
    expect(third.code).toBe(0);
    const fresh = sandbox.ledger().slice(afterFirst);
    expect(fresh.map((e) => [e.wallet, e.op, e.amountLamports])).toEqual([
      [alpha.address, 'claim', 2n * SOL],
      [alpha.address, 'deposit', 1n * SOL],
    ]);
  });

  it('does not judge the schedule it does not follow: no jitter warning, where check gives one', async () => {
    writeFileSync(config, readFileSync(config, 'utf8').replace('jitter: 0s', 'jitter: 1s'));
    const jitterWarnings = (events: Array<Record<string, unknown>>) => events.filter((e) => e.event === 'config.warning' && e.path === 'schedule.jitter');
    const checked = await runCli(['check', '--config', config], { cwd: dir });
    expect(`${checked.stdout}${checked.stderr}`).toContain('1s of jitter is not less than the 1s between polls');
    const once = await runCli(['once', '--config', config], { cwd: dir });
    expect(once.code).toBe(0);
    expect(jitterWarnings(once.events)).toEqual([]);
    expect(once.events.filter((e) => e.event === 'config.warning')).toEqual([]);
  });

  it('--dry-run records dry plans, logs what it would do and sends nothing signed', async () => {
    const r = await runCli(['once', '--dry-run', '--config', config], { cwd: dir });
    expect(r.code).toBe(0);
    expect(sandbox.ledger()).toEqual([]);
    expect(sandbox.stats().byOp.claim).toBeUndefined();
    const dry = r.events.filter((e) => e.event === 'plan.dry');
    expect(dry.map((e) => e.wallet).sort()).toEqual(['alpha', 'gamma']);
    expect(String(dry[0]?.msg)).toMatch(/would claim, then deposit 50% of the claim into SOL2X/);

    const actions = await runCli(['actions', '--json', '--config', config], { cwd: dir });
    expect(actions.code).toBe(0);
    const plans = (JSON.parse(actions.stdout) as { plans: Array<{ dry: boolean; status: string }> }).plans;
    expect(plans).toHaveLength(2);
    expect(plans.every((p) => p.dry && p.status === 'dry')).toBe(true);

    // A real run afterwards is not blocked by the dry plans.
    expect((await runCli(['once', '--config', config], { cwd: dir })).code).toBe(0);
    expect(sandbox.ledger()).toHaveLength(4);
  });

  it('status and actions report what happened; no secret reaches any output or the database', async () => {
    const once = await runCli(['once', '--config', config], { cwd: dir });
    const status = await runCli(['status', '--json', '--config', config], { cwd: dir });
    expect(status.code).toBe(0);
    const rows = (JSON.parse(status.stdout) as { wallets: Array<{ wallet: string; pendingSol: string; lastActions: unknown[] }> }).wallets;
    expect(rows.map((w) => [w.wallet, w.pendingSol, w.lastActions.length])).toEqual([
      ['alpha', '1', 1],
      ['beta', '0.3', 0],
      ['gamma', '0.6', 1],
    ]);
    const human = await runCli(['actions', '--config', config], { cwd: dir });
    expect(human.stdout).toMatch(/deposit SOL2X\s+0\.5\s+acknowledged/);

    const secrets = [CANARY_API_KEY, ...wallets.map((w) => bs58.encode(w.secretKey64)), ...wallets.map((w) => Buffer.from(w.secretKey64).toString('hex'))];
    const outputs = [once, status, human].flatMap((r) => [r.stdout, r.stderr]).join('\n');
    const stateDir = join(dir, 'state');
    const files = readdirSync(stateDir).map((f) => readFileSync(join(stateDir, f)).toString('latin1'));
    for (const s of secrets) {
      expect(outputs).not.toContain(s);
      for (const f of files) expect(f).not.toContain(s);
    }
  });
});
