// `autoclaim send` (issue 12): a one-off action through the same journal and safety caps, exactly
// once per --id; confirmation on a terminal, refusal without --yes elsewhere. Run in-process against
// a real sandbox on loopback (its ledger is the judge) and a real state file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

describe('autoclaim send', () => {
  let dir: string;
  let cleanup: () => void;
  let sandbox: Sandbox;
  let wallet: TestWallet;
  let config: string;
  const send = (args: string[]) => runCli(['send', ...args, '--config', config], { cwd: dir });

  beforeAll(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-send-'));
    [wallet] = makeWallets(dir, ['treasury']) as [TestWallet];
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallet.address, pendingLamports: 2n * SOL, accrualLamportsPerSec: 0n, balanceLamports: 10n * SOL }],
    });
    // No rule fires on its own: what moves is what `send` asks for.
    config = writeConfig(dir, {
      baseUrl: sandbox.url,
      wallets: [wallet],
      rules: '  - name: never\n    when: { pending_sol: { gte: 1000000 } }\n    do: [claim]\n',
      maxSolPerAction: '5',
    });
  });
  afterAll(async () => {
    await sandbox.close();
    cleanup();
  });

  it('sends a deposit once; the same id again reports the outcome and sends nothing', async () => {
    const first = await send(['deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1.5', '--id', 'topup-1', '--yes']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/deposit 1.5 SOL of SOL2X for wallet treasury is acknowledged: applied/);
    expect(sandbox.ledger().map((e) => [e.op, e.symbol, e.amountLamports])).toEqual([['deposit', 'SOL2X', 1_500_000_000n]]);

    const again = await send(['deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1.5', '--id', 'topup-1', '--yes']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/id topup-1 was already used \(plan \d+\); nothing was sent now/);
    expect(sandbox.ledger()).toHaveLength(1);

    const listed = await runCli(['actions', '--json', '--config', config], { cwd: dir });
    const plans = (JSON.parse(listed.stdout) as { plans: Array<{ manualId: string | null; rule: string; status: string }> }).plans;
    expect(plans.filter((p) => p.manualId === 'topup-1').map((p) => [p.rule, p.status])).toEqual([['@send:topup-1', 'done']]);
  });

  it.each([
    [['deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '2.5'], /differs in --amount \(1\.5 SOL recorded, 2\.5 SOL now\)/],
    [['deposit', '--wallet', 'treasury', '--symbol', 'SOL5X', '--amount', '1.5'], /differs in --symbol \(SOL2X recorded, SOL5X now\)/],
    [['mint', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1.5'], /differs in OP \(deposit recorded, mint now\)/],
    [['claim', '--wallet', 'treasury'], /differs in OP \(deposit recorded, claim now\), --symbol \(SOL2X recorded, none now\), --amount \(1\.5 SOL recorded, none now\)/],
  ])('a reused --id with other parameters is a usage error naming the difference, and sends nothing: %j', async (args, message) => {
    // topup-1 was applied above: answering its outcome (exit 0) would say this other action was.
    const before = sandbox.ledger().length;
    const r = await send([...args, '--id', 'topup-1', '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--id topup-1 was already used for another action \(plan \d+: deposit 1\.5 SOL of SOL2X for wallet treasury\)/);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).not.toMatch(/acknowledged/);
    expect(sandbox.ledger()).toHaveLength(before);
  });

  it('claims what is pending', async () => {
    const r = await send(['claim', '--wallet', 'treasury', '--id', 'claim-1', '--yes']);
    expect(r.code).toBe(0);
    expect(sandbox.ledger().filter((e) => e.op === 'claim').map((e) => e.amountLamports)).toEqual([2n * SOL]);
  });

  it('refuses above safety.max_sol_per_action: recorded as rejected, nothing sent', async () => {
    const before = sandbox.ledger().length;
    const r = await send(['mint', '--wallet', 'treasury', '--symbol', 'SOL5X', '--amount', '6', '--id', 'too-much', '--yes']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/mint 6 SOL of SOL5X for wallet treasury is rejected \(mint refused before signing: 6 SOL exceeds max_sol_per_action 5\)/);
    expect(sandbox.ledger()).toHaveLength(before);
  });

  it('refuses without --yes when not on a terminal, and never records', async () => {
    const before = sandbox.ledger().length;
    const r = await send(['deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--id', 'unconfirmed']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/refusing to send without --yes/);
    const retry = await send(['deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--id', 'unconfirmed', '--yes']);
    expect(retry.code).toBe(0);
    expect(sandbox.ledger()).toHaveLength(before + 1);
  });

  it('--dry-run says what it would do and records and sends nothing', async () => {
    const before = sandbox.ledger().length;
    const r = await send(['deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--id', 'dry-1', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/dry run: would deposit 1 SOL of SOL2X for wallet treasury/);
    expect(sandbox.ledger()).toHaveLength(before);
    const real = await send(['deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--id', 'dry-1', '--yes']);
    expect(real.code).toBe(0);
    expect(sandbox.ledger()).toHaveLength(before + 1);
  });

  it.each([
    [['claim', '--wallet', 'treasury', '--id', 'x', '--symbol', 'SOL2X', '--yes'], /a claim takes no --symbol or --amount/],
    [['deposit', '--wallet', 'treasury', '--id', 'x', '--amount', '1', '--yes'], /deposit needs --symbol/],
    [['deposit', '--wallet', 'treasury', '--id', 'x', '--symbol', 'SOL2X', '--amount', '-1', '--yes'], /--amount/],
    [['deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--yes'], /--id ID is required/],
    [['teleport', '--wallet', 'treasury', '--id', 'x', '--yes'], /OP must be one of claim, deposit, mint, withdraw, burn/],
  ])('a usage error sends and records nothing: %j', async (args, message) => {
    const before = sandbox.ledger().length;
    const r = await send(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(sandbox.ledger()).toHaveLength(before);
  });

  it.each([
    ['2099-01-01', /epoch refused: epoch 2099-01-01 is \d+ days ahead of this machine's UTC date/],
    ['2000-01-01', /epoch refused: epoch 2000-01-01 is \d+ days behind this machine's UTC date/],
  ])('a summary whose epoch is not believed (%s, SPEC §2): refused, nothing recorded, nothing sent; believed, it goes', async (epoch, message) => {
    const before = sandbox.ledger().length;
    const body = JSON.stringify({ address: wallet.address, epoch, pending_sol: 2, lifetime_sol: 2, rank: 1, tier: 'Gold' });
    sandbox.addFault({ kind: 'malformed', match: { op: 'summary' }, body, times: 1 });
    const args = ['deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '0.1', '--id', `epoch-${epoch}`, '--yes'];
    const r = await send(args);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/Refused: deposit 0\.1 SOL of SOL2X for wallet treasury .*; nothing recorded, nothing sent/);
    expect(sandbox.ledger()).toHaveLength(before);
    // Nothing recorded: the same id is free, and with a believable epoch it goes once.
    const again = await send(args);
    expect(again.code).toBe(0);
    expect(sandbox.ledger().map((e) => e.op).slice(before)).toEqual(['deposit']);
  });

  it('an unknown wallet name is a usage error', async () => {
    const r = await send(['claim', '--wallet', 'nobody', '--id', 'w-1', '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no wallet named "nobody" in the config \(wallets: treasury\)/);
  });
});
