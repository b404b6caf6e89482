// The daemon as a real process: signals, the single-instance lock, and a SIGKILL between `sending`
// and the answer. Runs the built CLI (dist/), the same entry the Docker image and systemd unit run.
import { writeFileSync } from 'node:fs';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { buildOnce } from './build.js';
import { configYaml, makeWallets, runCli, spawnCli, tempDir, writeConfig, type Child, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

beforeAll(() => buildOnce(), 120_000);

describe('the daemon process', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  let config: string;
  const children: Child[] = [];

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    wallets = makeWallets(dir, ['alpha']);
    sandbox = await startSandbox({
      apiKey: 'canary-apikey-7Qk2ZxW9pLmN4vR8sT1u',
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallets[0]!.address, pendingLamports: 1n * SOL, accrualLamportsPerSec: 0n, balanceLamports: 0n }],
    });
    config = writeConfig(dir, { baseUrl: sandbox.url, wallets });
  });

  afterEach(async () => {
    for (const c of children.splice(0)) await c.stop();
    await sandbox.close();
    cleanup();
  });

  const start = (argv: string[], env?: NodeJS.ProcessEnv) => {
    const c = spawnCli(argv, { cwd: dir, env });
    children.push(c);
    return c;
  };

  it('SIGHUP with a bad file keeps the old rules; a good file is taken; SIGTERM exits 0', async () => {
    const d = start(['run', '--config', config]);
    await d.waitFor((e) => e.event === 'poll.ok');

    writeFileSync(config, configYaml({ baseUrl: sandbox.url, wallets }).replace('max_sol_per_action: 100', 'max_sol_per_action: lots'));
    d.proc.kill('SIGHUP');
    const invalid = await d.waitFor((e) => e.event === 'config.invalid');
    expect(JSON.stringify(invalid.issues)).toMatch(/autoclaim\.yaml:\d+:\d+ safety\.max_sol_per_action/);
    // Still polling with the old config after the failed reload.
    const before = d.events().length;
    await d.waitFor((e, i) => e.event === 'poll.ok' && i >= before);

    writeFileSync(config, configYaml({ baseUrl: sandbox.url, wallets, maxSolPerAction: '50' }));
    d.proc.kill('SIGHUP');
    await d.waitFor((e) => e.event === 'config.reloaded');

    d.proc.kill('SIGTERM');
    const exit = await d.exited;
    expect(exit.code).toBe(0);
    expect(d.events().some((e) => e.event === 'daemon.stopping')).toBe(true);
  });

  it('a second instance on the same state exits 75 naming the holder', async () => {
    const d = start(['run', '--config', config]);
    await d.waitFor((e) => e.event === 'daemon.started');
    const second = await runCli(['once', '--config', config], { cwd: dir });
    expect(second.code).toBe(75);
    expect(second.stderr).toMatch(new RegExp(`pid ${d.proc.pid}`));
    d.proc.kill('SIGTERM');
    expect((await d.exited).code).toBe(0);
  });

  it('a deposit whose process was killed after the request went out is unknown at restart and never re-sent', async () => {
    // The deposit is applied, then the server never answers; we SIGKILL the daemon while it waits.
    sandbox.addFault({ match: { op: 'deposit' }, kind: 'apply_then_hang' });
    const d = start(['once', '--config', config]);
    await d.waitFor((e) => e.event === 'action.sent' && e.kind === 'deposit');
    await waitUntil(() => sandbox.ledger().some((e) => e.op === 'deposit'));
    d.proc.kill('SIGKILL');
    expect((await d.exited).signal).toBe('SIGKILL');

    const restart = await runCli(['once', '--config', config], { cwd: dir });
    expect(restart.code).toBe(1); // a step is unknown
    const unknown = restart.events.find((e) => e.event === 'action.unknown');
    expect(unknown?.kind).toBe('deposit');
    expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);

    // Even after pending is back over the threshold in a new epoch, deposits stay held.
    sandbox.advanceEpoch();
    sandbox.world.setWallet(wallets[0]!.address, { pendingLamports: 2n * SOL });
    const later = await runCli(['once', '--config', config], { cwd: dir });
    expect(later.events.some((e) => e.event === 'rule.skipped' && e.reason === 'blocked_unknown_step')).toBe(true);
    expect(sandbox.ledger().filter((e) => e.op === 'deposit')).toHaveLength(1);

    const listed = await runCli(['actions', '--state', 'unknown', '--json', '--config', config], { cwd: dir });
    const step = (JSON.parse(listed.stdout) as { plans: Array<{ steps: Array<{ id: number; kind: string; state: string }> }> }).plans
      .flatMap((p) => p.steps)
      .find((s) => s.state === 'unknown');
    expect(step?.kind).toBe('deposit');

    const resolved = await runCli(['actions', 'resolve', String(step!.id), '--applied', '--config', config], { cwd: dir });
    expect(resolved.code).toBe(0);
    expect(resolved.stdout).toMatch(/is now acknowledged/);
    const after = await runCli(['once', '--config', config], { cwd: dir });
    if (after.code !== 0) console.log(after.stdout, after.stderr);
    expect(after.code).toBe(0);
    // The new epoch's plan now runs: one more claim and deposit, never a second copy of the old deposit.
    expect(sandbox.ledger().map((e) => [e.op, e.epoch])).toEqual([
      ['claim', sandbox.ledger()[0]!.epoch],
      ['deposit', sandbox.ledger()[0]!.epoch],
      ['claim', sandbox.world.epoch()],
      ['deposit', sandbox.world.epoch()],
    ]);
  });

  it('a crash right after `sending` is committed leaves the deposit unknown, not sent and not re-sent', async () => {
    // The second `sending` commit of this run is the deposit's (the claim is the first).
    const d = start(['once', '--config', config], { AUTOCLAIM_FAILPOINT: 'after_sending_committed:2' });
    expect((await d.exited).signal).toBe('SIGKILL');
    expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim']);

    const restart = await runCli(['once', '--config', config], { cwd: dir });
    expect(restart.code).toBe(1);
    expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim']);
    const listed = await runCli(['actions', '--state', 'unknown', '--json', '--config', config], { cwd: dir });
    const step = (JSON.parse(listed.stdout) as { plans: Array<{ steps: Array<{ id: number; state: string }> }> }).plans
      .flatMap((p) => p.steps)
      .find((s) => s.state === 'unknown');
    // Within its request's window a verdict of "not applied" needs --force (the test knows it never left).
    const early = await runCli(['actions', 'resolve', String(step!.id), '--not-applied', '--config', config], { cwd: dir });
    expect(early.code).toBe(1);
    const resolved = await runCli(['actions', 'resolve', String(step!.id), '--not-applied', '--force', '--config', config], { cwd: dir });
    expect(resolved.stdout).toMatch(/is now rejected/);
    expect((await runCli(['once', '--config', config], { cwd: dir })).code).toBe(0);
    expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim']);
  });
});

describe('a claim settled by hand', () => {
  it('skips a percent deposit whose claim amount is unknown, instead of failing every poll', async () => {
    const { dir, cleanup } = tempDir();
    const wallets = makeWallets(dir, ['alpha']);
    const sandbox = await startSandbox({
      apiKey: 'canary-apikey-7Qk2ZxW9pLmN4vR8sT1u',
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallets[0]!.address, pendingLamports: 1n * SOL, accrualLamportsPerSec: 0n }],
    });
    try {
      const config = writeConfig(dir, { baseUrl: sandbox.url, wallets });
      // Killed after `sending` was committed for the claim: the claim never left.
      const d = spawnCli(['once', '--config', config], { cwd: dir, env: { AUTOCLAIM_FAILPOINT: 'after_sending_committed:1' } });
      expect((await d.exited).signal).toBe('SIGKILL');
      // The restart recovers it as unknown; within api.claim_settle it is not yet judged "not applied".
      const restart = await runCli(['once', '--config', config], { cwd: dir });
      expect(restart.code).toBe(1);
      expect(restart.events.some((e) => e.event === 'action.reconcile_deferred')).toBe(true);
      const listed = await runCli(['actions', '--state', 'unknown', '--json', '--config', config], { cwd: dir });
      const claim = (JSON.parse(listed.stdout) as { plans: Array<{ steps: Array<{ id: number; kind: string; state: string }> }> }).plans
        .flatMap((p) => p.steps)
        .find((s) => s.kind === 'claim');
      expect(claim?.state).toBe('unknown');
      // The operator (wrongly, here) says it was applied; nothing tells us how much it received.
      expect((await runCli(['actions', 'resolve', String(claim!.id), '--applied', '--config', config], { cwd: dir })).code).toBe(0);
      const after = await runCli(['once', '--config', config], { cwd: dir });
      expect(after.code).toBe(0);
      expect(after.events.some((e) => e.event === 'wallet.failed')).toBe(false);
      const skipped = after.events.find((e) => e.event === 'plan.skipped');
      expect(String(skipped?.reason)).toMatch(/^claim_unproved: deposit is a share of the claim, and what the claim brought is not proved \(it was resolved by an operator\)$/);
      expect(skipped?.code).toBe('claim_unproved');
      expect(sandbox.ledger()).toEqual([]);
    } finally {
      await sandbox.close();
      cleanup();
    }
  });
});

async function waitUntil(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
