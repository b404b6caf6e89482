// A daemon paused right after committing `sending` (before the request's first byte) whose lease is
// then taken: the new owner turns the step unknown and, once api.claim_settle has passed with no
// trace of the claim in the summary, reconciles it as not applied and claims again. When the paused
// daemon resumes it must not send its old signed claim (its ts would still be inside the service's
// window, so it would be applied too: two claims for one plan). The fence stops a lapsed daemon from
// *recording* `sending`; the lease is asked once more right before the send (WorkerDeps.stillHolds)
// so it does not send what it recorded before it lapsed. Found by the failover test's author as a
// reproduction (it failed with two claims before stillHolds).
// Issue 25 finding 1: the new owner judges the claim "not applied" only once A's signed timestamp is
// older than api.ts_window + margin by the database's clock, when the service can no longer accept
// A's request whatever A does on waking. ts_window is 5 s here (the sandbox's window too) to be
// quick: the claim settles after 10 s (a window under a minute is its own margin).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { CANARY_API_KEY, configYaml, makeWallets, spawnCli, tempDir, type Child } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';

const SOL = 1_000_000_000n;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const state = (pid: number | undefined): string => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] ?? '?';

describe('a daemon paused between `sending` and the send', () => {
  const children: Child[] = [];
  let sandbox: Sandbox | undefined;
  let cleanup = () => {};
  afterEach(async () => {
    for (const c of children) {
      c.proc.kill('SIGCONT');
      c.proc.kill('SIGKILL');
    }
    await Promise.all(children.map((c) => c.exited));
    await sandbox?.close();
    cleanup();
  });

  it('does not send its claim once another daemon has taken the wallet', { timeout: 60_000 }, async () => {
    const t = tempDir('autoclaim-zombie-');
    cleanup = t.cleanup;
    const wallets = makeWallets(t.dir, ['w0']);
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      tsWindowSec: 5,
      defaultAccrualLamportsPerSec: 0n,
      wallets: wallets.map((w) => ({ address: w.address, pendingLamports: SOL, accrualLamportsPerSec: SOL / 10n, balanceLamports: 0n })),
    });
    const sb = sandbox;
    const rule = `  - name: claim\n    when:\n      pending_sol: { gte: 0.5 }\n    do:\n      - claim\n`;
    const config = join(t.dir, 'autoclaim.yaml');
    writeFileSync(config, configYaml({ baseUrl: sb.url, wallets, rules: rule, apiExtra: '  ts_window: 5s\n' }).replace('state:\n', 'state:\n  lease: 3s\n'));
    const stateUrl = await createDatabase();
    const env = { AUTOCLAIM_STATE_URL: stateUrl };

    // A stops itself right after its claim's `sending` is committed.
    const preload = join(import.meta.dirname, 'stop-at-failpoint.mjs');
    const a = spawnCli(['run', '--config', config], { cwd: t.dir, env: { ...env, AUTOCLAIM_FAILPOINT: 'after_sending_committed', NODE_OPTIONS: `--import=${preload}` } });
    children.push(a);
    await until('A to stop at the failpoint', () => state(a.proc.pid) === 'T');
    expect(sb.ledger()).toEqual([]);

    // B takes the wallet once A's lease lapses, finds the claim unknown, reconciles it and claims.
    const b = spawnCli(['run', '--config', config], { cwd: t.dir, env });
    children.push(b);
    await until('B to claim', () => sb.ledger().length > 0).catch((err: unknown) => {
      throw new Error(`${String(err)}\nB:\n${b.events().filter((e) => e.event !== 'poll.ok').map((e) => JSON.stringify(e)).join('\n').slice(-6000)}`);
    });

    // B's claim went out only once A's signed timestamp was beyond ts_window + margin (10 s) by the
    // database's clock (the sandbox's ledger is stamped by this machine's, the database's host).
    const store = await openPostgresStore(stateUrl, { logger: silentLogger(), readonly: true });
    try {
      const claim = (await store.listPlans({})).flatMap((p) => p.steps).find((st) => st.kind === 'claim');
      const attempts = claim === undefined ? [] : await store.stepAttempts(claim.id);
      const aTs = attempts[0]?.request?.ts;
      expect(aTs, 'A recorded its signed claim').toBeTypeOf('number');
      const dbNow = await store.clockNow();
      expect(Math.abs(dbNow - Date.now())).toBeLessThan(2_000);
      const first = sb.ledger().find((e) => e.op === 'claim');
      expect(first?.ts ?? 0).toBeGreaterThanOrEqual((aTs ?? 0) * 1000 + 10_000 - 1_000);
      expect(attempts).toHaveLength(2); // A's, never sent, and B's, signed afresh
      expect(attempts[1]?.request?.ts).toBeGreaterThan(aTs ?? 0);
    } finally {
      await store.close();
    }

    a.proc.kill('SIGCONT');
    await sleep(3_000);
    // Expected one claim; with the gap open, A's claim lands beside B's (its ledger epoch is the same).
    const claims = sb.ledger().filter((e) => e.op === 'claim');
    expect(claims.map((c) => `${c.epoch} ${c.amountLamports}`), b.stdout().slice(-3000)).toHaveLength(1);
  });
});
