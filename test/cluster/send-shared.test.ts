// `send` on shared PostgreSQL state (issue 15): it takes no lease. It records the one-off plan
// (exactly once per --id, the id a UNIQUE column), and the daemon holding the wallet's lease sends
// it at its next poll, fenced as any of its writes; send waits for the outcome and reports it. With
// no daemon holding the wallet it says so after --wait, and the plan is sent once, later.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, spawnCli, type Child } from '../e2e/helpers.js';
import { sharedWorld, type SharedWorld } from './shared-world.js';

// A rule that never fires here: every claim in the ledger is the one-off's.
const NEVER = `  - name: never
    when:
      pending_sol: { gte: 1000000 }
    do:
      - claim
`;

describe('send on shared state', () => {
  let w: SharedWorld;
  const children: Child[] = [];
  beforeEach(async () => {
    w = await sharedWorld(['w0', 'w1'], { rules: NEVER, apiExtra: '  claim_settle: 10m\n' });
  });
  afterEach(async () => {
    for (const c of children.splice(0)) {
      c.proc.kill('SIGKILL');
      await c.exited;
    }
    await w.close();
  });

  const claims = () => w.sandbox.ledger().filter((e) => e.op === 'claim').map((e) => e.wallet);
  const send = (id: string, extra: string[] = []) => runCli(['send', 'claim', '--wallet', 'w0', '--id', id, '--yes', '--config', w.config, ...extra], { cwd: w.dir, env: w.env });

  it('records the plan; the daemon holding the wallet sends it once; the same id again sends nothing', async () => {
    const daemon = spawnCli(['run', '--config', w.config], { cwd: w.dir, env: w.env });
    children.push(daemon);
    await daemon.waitFor((e) => e.event === 'daemon.started');

    const first = await send('top-up-1');
    expect(first.stderr).toBe('');
    expect(first.stdout).toContain('recorded; the daemon holding wallet w0 sends it at its next poll');
    expect(first.stdout).toMatch(/claim for wallet \w+ is acknowledged: applied/);
    expect(first.code).toBe(0);
    expect(claims()).toEqual([w.wallets[0]!.address]);
    // The daemon sent it, under its lease.
    expect(daemon.events().some((e) => e.event === 'action.acknowledged' && e.kind === 'claim' && e.wallet === 'w0')).toBe(true);

    const again = await send('top-up-1');
    expect(again.stdout).toContain('id top-up-1 was already used');
    expect(again.code).toBe(0);
    expect(claims()).toHaveLength(1);

    daemon.proc.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });

  it('with no daemon holding the wallet: says so after --wait, and the plan is sent once by the next that does', async () => {
    const waited = await send('top-up-2', ['--wait', '1s']);
    expect(waited.code).toBe(1);
    expect(waited.stdout).toMatch(/not sent within the wait \(1s\):\nplan \d+: claim for wallet w0 is QUEUED, not sent\.\n/);
    expect(waited.stdout).toMatch(/the daemon holding wallet w0 WILL send it, once, at its next poll.*\n.*To stop it: autoclaim send --cancel --id top-up-2/);
    expect(claims()).toEqual([]);

    const once = await runCli(['once', '--config', w.config], { cwd: w.dir, env: w.env });
    expect(once.code).toBe(0);
    expect(claims()).toEqual([w.wallets[0]!.address]);
    const twice = await runCli(['once', '--config', w.config], { cwd: w.dir, env: w.env });
    expect(twice.code).toBe(0);
    expect(claims()).toHaveLength(1);

    const report = await send('top-up-2');
    expect(report.stdout).toMatch(/id top-up-2 was already used \(plan \d+\); nothing was sent now\. claim for wallet \w+ is acknowledged/);
  });
});
