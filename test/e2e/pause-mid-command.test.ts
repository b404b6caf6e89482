// `autoclaim pause` while a `send` or a `once` is already under way on the state (helper h27h).
// Only `run` names its pid in the daemon file, so `pause` finds "no daemon running here", exits 0
// and says signing is paused; the command already running read the pause record (once) or the
// kill switch (send) when it started, and went on to sign. The sandbox holds the step's fresh
// summary read, so the pause lands after the command's start and before its signature, as a pause
// does while a read waits out a 429 or a slow server. In-process CLI, a real sandbox on loopback
// (its ledger is the judge) and a real state file.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

describe('autoclaim pause while a command signs', () => {
  let dir: string;
  let cleanup: () => void;
  let sandbox: Sandbox;
  let config: string;
  const cli = (...argv: string[]) => runCli([...argv, '--config', config], { cwd: dir, env: { USER: 'ops' } });
  /** Resolves once a plan is recorded in the state (read as `actions` reads it, beside the command). */
  const planRecorded = async (): Promise<void> => {
    for (;;) {
      const listed = await cli('actions', '--json');
      if (listed.code === 0 && (JSON.parse(listed.stdout) as { plans: unknown[] }).plans.length > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-pause-mid-'));
    const [wallet] = makeWallets(dir, ['treasury']) as [TestWallet];
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallet.address, pendingLamports: 2n * SOL, accrualLamportsPerSec: 0n, balanceLamports: 10n * SOL }],
    });
    config = writeConfig(dir, {
      baseUrl: sandbox.url,
      wallets: [wallet],
      rules: '  - name: sweep\n    when: { pending_sol: { gte: 0.5 } }\n    do: [claim]\n',
      maxSolPerAction: '5',
    });
  });
  afterEach(async () => {
    await sandbox.close();
    cleanup();
  });

  it('a send whose deposit waits for its fresh read is held by a pause recorded meanwhile', async () => {
    // The send's own read answers at once; the step's fresh read before the signature is held.
    sandbox.addFault({ kind: 'latency', match: { op: 'summary' }, times: 1, ms: 0 });
    sandbox.addFault({ kind: 'latency', match: { op: 'summary' }, times: 1, ms: 3000 });
    const send = cli('send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--id', 'mid-pause', '--yes');
    await planRecorded();
    const paused = await cli('pause', '--reason', 'incident');
    expect(paused.code, paused.stderr + paused.stdout).toBe(0);
    expect(paused.stdout).toMatch(/^signing paused by ops@/);
    const sent = await send;
    // The operator was told signing is paused: nothing goes out after that, and the send says why.
    expect(sandbox.ledger()).toEqual([]);
    expect(sent.code).toBe(1);
    expect(sent.stdout).toMatch(/deposit 1 SOL of SOL2X for wallet treasury is QUEUED, not sent \(signing is paused for this wallet: paused by ops@.* \(autoclaim pause\): incident\)/);
    // Held, not lost: recorded before the switch, it goes once the switch is lifted, once.
    expect((await cli('resume')).code).toBe(0);
    expect((await cli('once')).code).toBe(0);
    expect(sandbox.ledger().map((e) => e.op)).toEqual(['deposit', 'claim']);
  });

  it('a send whose own read is under way when the pause lands refuses, recording nothing', async () => {
    // Between the kill switch's check and the plan's record: the send's own summary read is held
    // (as the prompt holds it at a terminal, or a slow server); the fault is taken as it arrives.
    sandbox.addFault({ kind: 'latency', match: { op: 'summary' }, times: 1, ms: 3000 });
    const send = cli('send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--id', 'read-pause', '--yes');
    while (sandbox.faults.list().length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await cli('pause', '--reason', 'incident')).code).toBe(0);
    const sent = await send;
    expect(sent.code).toBe(1);
    expect(sent.stderr).toMatch(/^signing is paused: paused by ops@.* \(autoclaim pause\): incident\. Refused: deposit 1 SOL of SOL2X .*id read-pause; nothing recorded, nothing sent/);
    // Refused, not queued: nothing recorded that a daemon would send, unasked, once resumed.
    const listed = await cli('actions', '--json');
    expect((JSON.parse(listed.stdout) as { plans: unknown[] }).plans).toEqual([]);
    expect(sandbox.ledger()).toEqual([]);
  });

  it('a once whose claim waits for its fresh read is held by a pause recorded meanwhile', async () => {
    // The poll answers at once; the claim's fresh read before the signature is held.
    sandbox.addFault({ kind: 'latency', match: { op: 'summary' }, times: 1, ms: 0 });
    sandbox.addFault({ kind: 'latency', match: { op: 'summary' }, times: 1, ms: 3000 });
    const once = cli('once');
    await planRecorded();
    const paused = await cli('pause', '--reason', 'incident');
    expect(paused.code, paused.stderr + paused.stdout).toBe(0);
    const held = await once;
    expect(sandbox.ledger()).toEqual([]);
    expect(held.code).toBe(1);
    expect((await cli('resume')).code).toBe(0);
    expect((await cli('once')).code).toBe(0);
    expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim']);
  });
});
