// The kill switch holds `once` and `send` as it holds `run` (issue 27): with `autoclaim pause`
// recorded beside the state and no daemon running, `once` polls, decides dry and reports, signing
// nothing; `send` refuses before recording anything (exit 1, SPEC §3's "1 otherwise": a pause is
// lifted by a person, so it is not the 75 a script retries on), and its --dry-run says a real one
// would be refused. After `resume` both sign again. In-process CLI, a real sandbox on loopback
// (its ledger is the judge) and a real state file.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

describe('autoclaim pause holds once and send', () => {
  let dir: string;
  let cleanup: () => void;
  let sandbox: Sandbox;
  let config: string;
  const cli = (...argv: string[]) => runCli([...argv, '--config', config], { cwd: dir, env: { USER: 'ops' } });
  const manualPlans = async (): Promise<string[]> => {
    const listed = await cli('actions', '--json');
    return (JSON.parse(listed.stdout) as { plans: Array<{ manualId: string | null }> }).plans.flatMap((p) => (p.manualId === null ? [] : [p.manualId]));
  };

  beforeAll(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-pause-commands-'));
    const [wallet] = makeWallets(dir, ['treasury']) as [TestWallet];
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallet.address, pendingLamports: 2n * SOL, accrualLamportsPerSec: 0n, balanceLamports: 10n * SOL }],
    });
    // A rule that claims whatever is pending: `once` would sign a claim if nothing held it.
    config = writeConfig(dir, {
      baseUrl: sandbox.url,
      wallets: [wallet],
      rules: '  - name: sweep\n    when: { pending_sol: { gte: 0.5 } }\n    do: [claim]\n',
      maxSolPerAction: '5',
    });
  });
  afterAll(async () => {
    await sandbox.close();
    cleanup();
  });

  it('paused: once polls and decides dry, send refuses and records nothing; resumed: both sign', async () => {
    const paused = await cli('pause', '--reason', 'drill');
    expect(paused.code, paused.stderr + paused.stdout).toBe(0);
    expect(paused.stdout).toMatch(/no daemon is running on this state here/);

    const once = await cli('once');
    expect(once.code).toBe(0);
    expect(sandbox.ledger()).toEqual([]);
    expect(once.events.filter((e) => e['event'] === 'poll.ok')).toHaveLength(1);
    expect(once.events.find((e) => e['event'] === 'signing.kill_switch_on')?.['reason']).toMatch(/^paused by ops@.* \(autoclaim pause\): drill$/);
    expect(once.events.find((e) => e['event'] === 'plan.dry')?.['held']).toMatch(/^kill switch \(paused by ops@/);
    expect(once.events.find((e) => e['event'] === 'once.done')).toMatchObject({ polled: 1, kill_switch: expect.stringMatching(/drill/) as unknown });

    const send = await cli('send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--id', 'during-pause', '--yes');
    expect(send.code).toBe(1);
    expect(send.stderr).toMatch(/^signing is paused: paused by ops@.* \(autoclaim pause\): drill\. Refused: deposit 1 SOL of SOL2X for wallet treasury \(.*\), id during-pause; nothing recorded, nothing sent\. To lift it: autoclaim resume/);
    expect(await manualPlans()).toEqual([]);
    const dry = await cli('send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--id', 'during-pause', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/dry run: would deposit 1 SOL .*nothing recorded, nothing sent \(signing is paused — paused by ops@.* — so a real send is refused now\)/);
    expect(sandbox.ledger()).toEqual([]);

    expect((await cli('resume')).code).toBe(0);
    // The same id was never recorded, so it is free: sent now, once.
    const after = await cli('send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--id', 'during-pause', '--yes');
    expect(after.code).toBe(0);
    expect((await cli('once')).code).toBe(0);
    expect(sandbox.ledger().map((e) => e.op).sort()).toEqual(['claim', 'deposit']);
  });

  it('safety.paused in the config refuses send the same way', async () => {
    const yaml = readFileSync(config, 'utf8');
    writeFileSync(config, yaml.replace(/^safety:\n/m, 'safety:\n  paused: true\n'));
    try {
      const before = sandbox.ledger().length;
      const send = await cli('send', 'claim', '--wallet', 'treasury', '--id', 'config-paused', '--yes');
      expect(send.code).toBe(1);
      expect(send.stderr).toMatch(/^signing is paused: safety\.paused: true in the config\. Refused: claim what is pending .*To lift it: set safety\.paused: false/);
      expect(await manualPlans()).not.toContain('config-paused');
      expect(sandbox.ledger()).toHaveLength(before);
    } finally {
      writeFileSync(config, yaml);
    }
  });
});
