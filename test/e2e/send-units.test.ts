// `autoclaim send` of a withdraw or a burn (helper 34): their amount is the vault's shares or the
// token's units, not SOL. The operator is asked and told in that unit, and the one-off plan does not
// count as SOL against the wallet's daily cap, where 4 tokens burned held a 2 SOL claim for a day.
// In-process against a real sandbox on loopback (its ledger is the judge) and a real state file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

describe('autoclaim send withdraw and burn: shares and tokens, not SOL', () => {
  let dir: string;
  let cleanup: () => void;
  let sandbox: Sandbox;
  let config: string;
  const send = (args: string[]) => runCli(['send', ...args, '--config', config], { cwd: dir });

  beforeAll(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-send-units-'));
    const [wallet] = makeWallets(dir, ['treasury']) as [TestWallet];
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallet.address, pendingLamports: 2n * SOL, accrualLamportsPerSec: 0n, balanceLamports: 10n * SOL, tokens: { SOL5X: 10n * SOL }, shares: { SOL2X: 10n * SOL } }],
    });
    config = writeConfig(dir, {
      baseUrl: sandbox.url,
      wallets: [wallet],
      rules: '  - name: take\n    when: { pending_sol: { gte: 1 } }\n    do: [claim]\n',
      maxSolPerAction: '5',
      extra: '  max_sol_per_wallet_per_day: 3\n',
    });
  });
  afterAll(async () => {
    await sandbox.close();
    cleanup();
  });

  it('says the unit it will sign: shares for a withdraw, tokens for a burn', async () => {
    const w = await send(['withdraw', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1.5', '--id', 'w-dry', '--dry-run']);
    expect(w.stdout).toMatch(/dry run: would withdraw 1\.5 SOL2X vault shares for wallet treasury/);
    const b = await send(['burn', '--wallet', 'treasury', '--symbol', 'SOL5X', '--amount', '4', '--id', 'b-dry', '--dry-run']);
    expect(b.stdout).toMatch(/dry run: would burn 4 SOL5X tokens for wallet treasury/);
    expect(sandbox.ledger()).toEqual([]);
  });

  it('a burn above safety.max_sol_per_action is refused, in its unit', async () => {
    const r = await send(['burn', '--wallet', 'treasury', '--symbol', 'SOL5X', '--amount', '6', '--id', 'too-many', '--yes']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/burn 6 SOL5X tokens for wallet treasury is rejected \(burn refused before signing: 6 SOL5X tokens exceeds max_sol_per_action 5\)/);
    expect(sandbox.ledger()).toEqual([]);
  });

  it("a burn of 4 tokens leaves the wallet's 3 SOL a day to the rule's 2 SOL claim", async () => {
    const burn = await send(['burn', '--wallet', 'treasury', '--symbol', 'SOL5X', '--amount', '4', '--id', 'unwind-1', '--yes']);
    expect(burn.code).toBe(0);
    expect(burn.stdout).toMatch(/burn 4 SOL5X tokens for wallet treasury is acknowledged: applied/);
    const once = await runCli(['once', '--config', config], { cwd: dir });
    expect(once.code).toBe(0);
    expect(sandbox.ledger().map((e) => [e.op, e.amountLamports])).toEqual([
      ['burn', 4n * SOL],
      ['claim', 2n * SOL],
    ]);
    // The actions table's SOL column names the unit of what is not SOL.
    const table = await runCli(['actions', '--config', config], { cwd: dir });
    expect(table.stdout).toMatch(/burn SOL5X\s+4 tokens\s+acknowledged/);
    expect(table.stdout).toMatch(/claim\s+2\s+acknowledged/);
    // status --json names each step's amount in its unit (helper 38): the claim's as amountSol, the
    // burn's tokens as amountUnits with their unit, never as amountSol, which a script would sum as SOL.
    const status = await runCli(['status', '--json', '--config', config], { cwd: dir });
    const [row] = (JSON.parse(status.stdout) as { wallets: Array<{ lastActions: Array<{ steps: Array<Record<string, unknown>> }> }> }).wallets;
    const steps = row?.lastActions.flatMap((a) => a.steps).map(({ kind, amountSol, amountUnits, unit }) => ({ kind, amountSol, amountUnits, unit }));
    expect(steps).toEqual([
      { kind: 'claim', amountSol: '2', amountUnits: undefined, unit: undefined },
      { kind: 'burn', amountSol: undefined, amountUnits: '4', unit: 'SOL5X tokens' },
      { kind: 'burn', amountSol: undefined, amountUnits: '6', unit: 'SOL5X tokens' },
    ]);
  });
});
