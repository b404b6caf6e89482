// `send` says what will happen (issue 24, finding 4). A send held back by 429s, or behind an unknown
// deposit, stays queued: the report says the next daemon WILL send it and gives the one command
// that stops it; `send --cancel --id ID` stops it exactly once, recorded; the next daemon sends
// nothing of it. The sandbox's ledger on loopback is the judge; a real state file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

describe('autoclaim send: a queued action, and --cancel', () => {
  let dir: string;
  let cleanup: () => void;
  let sandbox: Sandbox;
  let wallet: TestWallet;
  let config: string;
  const cli = (args: string[]) => runCli([...args, '--config', config], { cwd: dir });
  const deposits = () => sandbox.ledger().filter((e) => e.op === 'deposit').map((e) => e.amountLamports);

  beforeAll(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-send-cancel-'));
    [wallet] = makeWallets(dir, ['treasury']) as [TestWallet];
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallet.address, pendingLamports: 2n * SOL, accrualLamportsPerSec: 0n, balanceLamports: 20n * SOL }],
    });
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

  it('held back by 429s: reported as queued, with who will send it and the command that cancels it', async () => {
    sandbox.addFault({ kind: 'rate_limit', match: { op: 'deposit' }, times: 1000, retryAfterSec: 0 });
    const r = await cli(['send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '3', '--id', 'held-429', '--yes']);
    sandbox.clearFaults();
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/deposit 3 SOL of SOL2X for wallet treasury is QUEUED, not sent \(.*429.*\)/);
    expect(r.stdout).toMatch(/the daemon running on this state file \(or the next one started\) WILL send it, once/);
    expect(r.stdout).toMatch(/Do not retry it under a new --id: that would be a second deposit\. To stop it: autoclaim send --cancel --id held-429/);
    expect(deposits()).toEqual([]);

    // The same id again says the same, and still sends nothing.
    const again = await cli(['send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '3', '--id', 'held-429', '--yes']);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/id held-429 was already used \(plan \d+\); nothing was sent now\. deposit 3 SOL of SOL2X for wallet treasury is QUEUED/);
    expect(deposits()).toEqual([]);
  });

  it('--cancel stops it exactly once, recorded with who and when; the next daemon sends nothing of it', async () => {
    const cancel = await cli(['send', '--cancel', '--id', 'held-429']);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toMatch(/id held-429 \(plan \d+\): deposit 3 SOL of SOL2X for wallet treasury is cancelled; no daemon will send it/);
    expect(cancel.stdout).toMatch(/Recorded: cancelled by autoclaim send --cancel \(user .+ on .+, pid \d+\) at \d{4}-\d\d-\d\dT/);

    const twice = await cli(['send', '--cancel', '--id', 'held-429']);
    expect(twice.code).toBe(0);
    expect(twice.stdout).toMatch(/id held-429: plan \d+ was already cancelled by autoclaim send --cancel .* at .*; nothing changed/);

    // The next daemon: one cycle over the wallet, nothing of the cancelled plan goes out.
    const once = await cli(['once']);
    expect(once.code).toBe(0);
    expect(deposits()).toEqual([]);

    const shown = await cli(['send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '3', '--id', 'held-429', '--yes']);
    expect(shown.code).toBe(1);
    expect(shown.stdout).toMatch(/was cancelled by autoclaim send --cancel .* it was not sent and never will be/);
    expect(deposits()).toEqual([]);
  });

  it('refuses to cancel what was applied, or an id never used; --cancel takes only --id', async () => {
    const sent = await cli(['send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--id', 'done-1', '--yes']);
    expect(sent.code).toBe(0);
    const late = await cli(['send', '--cancel', '--id', 'done-1']);
    expect(late.code).toBe(1);
    expect(late.stdout).toMatch(/id done-1 cannot be cancelled: nothing of plan \d+ is left to send: step \d+ \(deposit\) is acknowledged/);

    const never = await cli(['send', '--cancel', '--id', 'never-used']);
    expect(never.code).toBe(1);
    expect(never.stdout).toMatch(/no action was ever recorded with --id never-used: nothing to cancel/);

    const usage = await cli(['send', '--cancel', '--id', 'done-1', '--wallet', 'treasury']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--cancel takes only --id ID/);
    const noOp = await cli(['send', '--wallet', 'treasury', '--id', 'x', '--yes']);
    expect(noOp.code).toBe(2);
    expect(noOp.stderr).toMatch(/OP is required/);
  });

  it('held behind an unknown deposit: queued, and --cancel refuses the unknown one but stops the held one', async () => {
    sandbox.addFault({ kind: 'apply_then_5xx', match: { op: 'deposit' } });
    const first = await cli(['send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '2', '--id', 'lost-1', '--yes']);
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/is unknown.*it may have been applied/);
    const applied = deposits().length;

    const held = await cli(['send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '2', '--id', 'held-unknown', '--yes']);
    expect(held.code).toBe(1);
    expect(held.stdout).toMatch(/QUEUED, not sent \(held back: an earlier deposit, mint, withdraw or burn of this wallet is unknown/);
    expect(held.stdout).toMatch(/To stop it: autoclaim send --cancel --id held-unknown/);

    const refuse = await cli(['send', '--cancel', '--id', 'lost-1']);
    expect(refuse.code).toBe(1);
    expect(refuse.stdout).toMatch(/cannot be cancelled: step \d+ \(deposit\) of plan \d+ is unknown: it may have been applied/);

    const cancel = await cli(['send', '--cancel', '--id', 'held-unknown']);
    expect(cancel.code).toBe(0);
    expect(deposits()).toHaveLength(applied);
  });
});
