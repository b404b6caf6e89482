// A `sending` step under a live owner (issue 25, finding 6), as a real `autoclaim run` on one
// PostgreSQL state: while the daemon holds both wallets (stopped for a moment, so no turn sees the
// plans half made), a process that is gone — a killed `send`, a daemon that lost and won back the
// lease — is mimicked by writing through the store itself: a one-off claim plan per wallet,
// committed `sending` with a request signed by the wallet's key, and one of the two delivered to
// the sandbox (applied), the other never sent. The daemon resumes and, at its next turn of each
// wallet, turns both into `unknown` (`action.unknown`, `recovered: turn`) and reconciles them:
// the delivered one as applied from the summary (no second claim), the other as not applied only
// after its signed timestamp is beyond ts_window + margin by the database's clock, then signs it
// afresh. Meanwhile its wallet's rule is held as "claim in doubt", and past
// alerts.unknown_step_after the `claim_in_doubt` alert opens. The ledger: one claim per wallet, no
// claim without a recorded attempt, and no step left `sending`.
//
// Seeded (STUCK_SEED replays; the seed is in every failure message): which wallet's request was
// delivered.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ApiClient, createDispatcher } from '../../src/api/client.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { systemClock } from '../../src/domain.js';
import { signerFromSeed } from '../../src/keys/signer.js';
import { silentLogger } from '../../src/log/logger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { apiConfig } from '../api/helpers.js';
import { CANARY_API_KEY, configYaml, makeWallets, spawnCli, tempDir, type Child } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';
import { prng, seedFrom } from '../support/prng.js';
import { recordedSteps, sendingSteps, until } from './journal.js';
import { checkLedger } from './ledger-check.js';

const SEED = seedFrom('STUCK_SEED');
const SOL = 1_000_000_000n;

const children: Child[] = [];
const closers: Array<() => Promise<void> | void> = [];
let sandbox: Sandbox | undefined;
afterEach(async () => {
  for (const c of children.splice(0)) {
    c.proc.kill('SIGCONT');
    c.proc.kill('SIGKILL');
    await c.exited;
  }
  for (const c of closers.splice(0).reverse()) await c();
  await sandbox?.close();
});

it('a step left sending under a live owner is recovered at its next turn and reconciled; a long doubt raises claim_in_doubt', { timeout: 120_000 }, async () => {
  const rnd = prng(SEED);
  const seed = `STUCK_SEED=${SEED}`;
  const t = tempDir('autoclaim-stuck-');
  closers.push(t.cleanup);
  const wallets = makeWallets(t.dir, ['w0', 'w1']);
  sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    tsWindowSec: 10,
    defaultAccrualLamportsPerSec: 0n,
    // Nothing to claim until the test says so: the rule does not fire on its own first.
    wallets: wallets.map((w) => ({ address: w.address, pendingLamports: 0n, accrualLamportsPerSec: 0n, balanceLamports: 0n })),
  });
  const sb = sandbox;
  const claims = (address?: string) => sb.ledger().filter((e) => e.op === 'claim' && (address === undefined || e.wallet === address));
  const rule = `  - name: harvest\n    when:\n      pending_sol: { gte: 0.5 }\n    do:\n      - claim\n`;
  const config = join(t.dir, 'autoclaim.yaml');
  writeFileSync(
    config,
    configYaml({ baseUrl: sb.url, wallets, rules: rule, apiExtra: '  ts_window: 10s\n', extra: 'alerts:\n  unknown_step_after: 2s\n' }).replace('state:\n', 'state:\n  lease: 15s\n'),
  );
  const stateUrl = await createDatabase();
  const d = spawnCli(['run', '--config', config], { cwd: t.dir, env: { AUTOCLAIM_STATE_URL: stateUrl } });
  children.push(d);
  await d.waitFor((e) => e.event === 'daemon.started', 30_000);
  await until('both wallets polled', () => new Set(d.events().filter((e) => e.event === 'poll.ok').map((e) => e.wallet)).size, (n) => n === 2, 30_000, seed);
  const log = () => d.events().filter((e) => e.event !== 'poll.ok').map((e) => JSON.stringify(e)).join('\n').slice(-8000);

  // A signer of the wallets' own keys, through the client the daemon uses.
  // A deadline long enough that the delivered claim's answer is read even on a busy machine.
  const api = apiConfig({ baseUrl: sb.url, tsWindowMs: 10_000, timeoutMs: 20_000 });
  const dispatcher = createDispatcher(api);
  closers.push(() => dispatcher.destroy());
  const client = new ApiClient({
    config: api,
    apiKey: CANARY_API_KEY,
    dispatcher,
    limiter: new RateLimiter({ perMinute: 0, burst: 1, clock: systemClock }),
    clock: systemClock,
    logger: silentLogger(),
    sleep: () => Promise.resolve(),
  });
  const store = await openPostgresStore(stateUrl, { logger: silentLogger() });
  // The daemon is stopped while the plans are written (a moment; the lease, 15 s, outlasts it on a
  // busy machine): the recovery seen must be its turn's, not a takeover's.
  closers.push(() => store.close());

  const deliveredIndex = rnd() < 0.5 ? 0 : 1;
  const delivered = wallets[deliveredIndex]!;
  const unsent = wallets[1 - deliveredIndex]!;
  const stuck = new Map<string, number>();
  d.proc.kill('SIGSTOP');
  try {
    for (const w of wallets) {
      sb.world.setWallet(w.address, { pendingLamports: SOL });
      const s = sb.world.summary(w.address);
      const plan = await store.insertPlan(
        { wallet: w.name, address: w.address, rule: `@send:stuck-${w.name}`, epoch: s.epoch, seq: 0, steps: [{ kind: 'claim' }], estimateLamports: SOL, manualId: `stuck-${w.name}` },
        { dry: false, reason: 'a process that is gone' },
      );
      const step = plan!.steps[0]!;
      const prepared = client.prepare({ op: 'claim', wallet: w.address, epoch: s.epoch }, signerFromSeed(w.secretKey64.slice(0, 32)), Date.now());
      await store.markSending(step.id, {
        method: prepared.method,
        url: prepared.url,
        ts: prepared.ts,
        message: prepared.message,
        body: prepared.body,
        before: { pendingLamports: s.pendingLamports.toString(), lifetimeLamports: s.lifetimeLamports.toString(), epoch: s.epoch },
      });
      stuck.set(w.address, step.id);
      if (w === delivered) await client.send(prepared);
    }
  } finally {
    d.proc.kill('SIGCONT');
  }
  expect(claims().map((c) => c.wallet), seed).toEqual([delivered.address]);

  // Both recovered at a turn of the live owner, not at a start or a takeover.
  for (const w of wallets) {
    const recovered = await d.waitFor((e) => e.event === 'action.unknown' && e.step === stuck.get(w.address), 30_000);
    expect(recovered, seed).toMatchObject({ level: 'error', recovered: 'turn', kind: 'claim' });
  }
  // The delivered one: applied, from the summary.
  await d.waitFor((e) => e.event === 'action.reconciled' && e.step === stuck.get(delivered.address), 30_000);
  expect(d.events().find((e) => e.event === 'action.reconciled' && e.step === stuck.get(delivered.address)), seed).toMatchObject({ applied: true });
  // The unsent one holds its wallet's rule in doubt; past unknown_step_after, the alert.
  await d.waitFor((e) => e.event === 'alert.opened' && e.alert === 'claim_in_doubt' && e.wallet === unsent.name, 30_000).catch((err: unknown) => {
    throw new Error(`${seed}: ${String(err).slice(0, 300)}\n${log()}`);
  });
  expect(claims(unsent.address), seed).toEqual([]);
  // Judged not applied only after the window, then signed afresh and applied once.
  await until('the unsent claim signed again and applied', () => claims(unsent.address).length, (n) => n > 0, 45_000, `${seed}\n${log()}`);
  const reconciled = d.events().find((e) => e.event === 'action.reconciled' && e.step === stuck.get(unsent.address));
  expect(reconciled, seed).toMatchObject({ applied: false });
  const attempts = await store.stepAttempts(stuck.get(unsent.address)!);
  expect(attempts, seed).toHaveLength(2);
  expect(claims(unsent.address)[0]!.ts, seed).toBeGreaterThanOrEqual((attempts[0]!.request!.ts + 20) * 1000 - 1_000);

  await until('no step left sending', () => sendingSteps(stateUrl), (ids) => ids.length === 0, 30_000, seed);
  d.proc.kill('SIGTERM');
  expect((await d.exited).code, seed).toBe(0);
  const verdict = checkLedger({
    ledger: sb.ledger(),
    steps: await recordedSteps(stateUrl),
    geometry: { origin: sb.world.epochOrigin, epochMs: sb.world.epochMs },
    qualifying: [],
    addresses: wallets.map((w) => w.address),
    ops: ['claim'],
  });
  expect({ unexplained: verdict.unexplained.length, doubles: verdict.doubles }, seed).toEqual({ unexplained: 0, doubles: [] });
  expect(wallets.map((w) => claims(w.address).length), `${seed}\n${log()}`).toEqual([1, 1]);
});
