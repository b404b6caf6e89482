// `autoclaim prune --older-than D [--dry-run]` through the CLI, on a real state file: what it says
// and deletes, --dry-run deleting nothing, refused (75) while a daemon holds the state lock, and
// refused (2) inside the rules' history or on shared state. What it keeps is test/store/prune.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { acquireLock, openStore, type Lock } from '../../src/store/index.js';
import { CANARY_API_KEY, epochTurningFarAway, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2025, 5, 1, 12);
const at = (n: number) => T0 + n * DAY;
const epoch = (n: number) => new Date(Date.UTC(2025, 5, 1 + n)).toISOString().slice(0, 10);

describe('autoclaim prune', () => {
  let dir: string;
  let cleanup: () => void;
  let config: string;
  let wallet: TestWallet;
  let held: Lock | undefined;
  const statePath = () => join(dir, 'state', 'autoclaim.db');
  const clock = { now: () => at(10), monotonic: () => 0 };
  const cli = (args: string[]) => runCli([...args, '--config', config], { cwd: dir, clock });

  /** Ten days of a daily claim for the wallet, as a daemon (under the lock) leaves them. */
  function history(): void {
    const lock = acquireLock(statePath());
    const store = openStore(statePath(), { logger: silentLogger(), lock });
    try {
      for (let d = 0; d < 10; d++) {
        const summary = { address: wallet.address, epoch: epoch(d), pendingLamports: 1n, lifetimeLamports: 1n, rank: null, tier: null, breakdown: [], raw: {} };
        store.recordPoll(wallet.name, wallet.address, at(d), { ok: true, summary });
        const plan = store.insertPlan(
          { wallet: wallet.name, address: wallet.address, rule: 'compound', epoch: epoch(d), seq: 0, steps: [{ kind: 'claim' }], estimateLamports: 1n },
          { dry: false, reason: 'test', now: at(d) },
        )!;
        const step = plan.steps[0]!.id;
        store.markSending(step, { method: 'POST', url: 'http://127.0.0.1:9/v1/rewards/claim', ts: at(d) / 1000, message: 'm', body: '{}', headers: {} }, at(d));
        store.markAcknowledged(step, { status: 200, responseRaw: '{}', claimedLamports: 1n }, at(d));
        store.finishPlan(plan.id, at(d));
      }
    } finally {
      store.close();
      lock.release();
    }
  }

  const plans = () => {
    const store = openStore(statePath(), { logger: silentLogger(), readonly: true });
    try {
      return store.listPlans({ limit: 100 }).length;
    } finally {
      store.close();
    }
  };

  beforeEach(() => {
    ({ dir, cleanup } = tempDir('autoclaim-prune-'));
    [wallet] = makeWallets(dir, ['treasury']) as [TestWallet];
    config = writeConfig(dir, { baseUrl: 'http://127.0.0.1:9', wallets: [wallet] });
    history();
  });
  afterEach(() => {
    held?.release();
    held = undefined;
    cleanup();
  });

  it('deletes the settled history before the cutoff and says how much, and what it kept', async () => {
    const r = await cli(['prune', '--older-than', '2d']);
    expect(r.code).toBe(0);
    // Cutoff day 8: days 0..7 go; epochs 8 and 9 (the previous and the current) stay.
    expect(r.stdout).toContain(`deleted 8 plans (8 steps, 8 attempts) and 8 epochs seen, recorded before ${new Date(at(8)).toISOString()}`);
    expect(r.stdout).toMatch(/kept: open, blocked and unknown plans, the current and previous epoch/);
    expect(plans()).toBe(2);
    const again = await cli(['prune', '--older-than', '2d']);
    expect(again.stdout).toContain('deleted 0 plans (0 steps, 0 attempts) and 0 epochs seen');
  });

  it('--dry-run says the same and deletes nothing', async () => {
    const r = await cli(['prune', '--older-than', '2d', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('would delete 8 plans (8 steps, 8 attempts) and 8 epochs seen');
    expect(plans()).toBe(10);
  });

  it('is refused with 75 while a daemon holds the state lock, and deletes nothing', async () => {
    held = acquireLock(statePath());
    const r = await cli(['prune', '--older-than', '2d']);
    expect(r.code).toBe(75);
    expect(r.stderr).toMatch(/is in use by another autoclaim \(pid \d+/);
    held.release();
    held = undefined;
    expect(plans()).toBe(10);
  });

  it('refuses (2) a cutoff inside the rules\' history, a wrong duration, and shared state', async () => {
    const inside = await cli(['prune', '--older-than', '12h']);
    expect(inside.code).toBe(2);
    expect(inside.stderr).toContain("--older-than 12h is inside the rules' history (1d");
    const cooldown = writeConfig(dir, {
      baseUrl: 'http://127.0.0.1:9',
      wallets: [wallet],
      rules: '  - name: compound\n    when: { pending_sol: { gte: 0.5 } }\n    do: [claim]\n    limits: { cooldown: 30d }\n',
    });
    const longer = await runCli(['prune', '--older-than', '7d', '--config', cooldown], { cwd: dir, clock });
    expect(longer.code).toBe(2);
    expect(longer.stderr).toContain('(30d: the day caps, or the longest cooldown)');
    expect((await cli(['prune', '--older-than', 'half a year'])).code).toBe(2);
    expect((await cli(['prune'])).code).toBe(2);

    writeFileSync(config, readFileSync(config, 'utf8').replace('  path: ./state/autoclaim.db', '  url: postgres://autoclaim@127.0.0.1:9/autoclaim'));
    const shared = await cli(['prune', '--older-than', '180d']);
    expect(shared.code).toBe(2);
    expect(shared.stderr).toMatch(/prune works on a state file \(state.path\); this config shares state.url/);
    expect(plans()).toBe(10);
  });
});

describe('autoclaim prune, then the daemon again', () => {
  it("keeps the epoch's plan the rule's newest is not: the next cycle does not claim twice in the epoch", async () => {
    const { dir, cleanup } = tempDir('autoclaim-prune-once-');
    const [wallet, second] = makeWallets(dir, ['treasury', 'second']) as [TestWallet, TestWallet];
    const sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      // "The same epoch" below must be: no midnight UTC between the two onces.
      epochOrigin: epochTurningFarAway(),
      defaultAccrualLamportsPerSec: 0n,
      wallets: [wallet, second].map((w) => ({ address: w.address, pendingLamports: 2_000_000_000n, accrualLamportsPerSec: 1_000_000_000n, balanceLamports: 20_000_000_000n })),
    });
    try {
      const config = writeConfig(dir, { baseUrl: sandbox.url, wallets: [wallet, second] });
      const cli = (args: string[], clock?: { now: () => number; monotonic: () => number }) => runCli([...args, '--config', config], { cwd: dir, ...(clock ? { clock } : {}) });
      const claims = () => sandbox.ledger().filter((e) => e.op === 'claim' && e.wallet === wallet.address).length;
      // The rule's newest plan is the second wallet's, the newest attempt a one-off send's: only
      // the epoch keeps treasury's plan.
      expect((await cli(['once'])).code).toBe(0);
      expect(claims()).toBe(1);
      expect((await cli(['send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '0.1', '--id', 'pay-1', '--yes'])).code).toBe(0);
      // Two days on, everything older than a day goes: the plans are all older than the cutoff.
      const later = { now: () => Date.now() + 2 * DAY, monotonic: () => 0 };
      const pruned = await cli(['prune', '--older-than', '1d'], later);
      expect(pruned.code).toBe(0);
      expect(pruned.stdout).toContain('deleted 0 plans');
      // The same epoch on the server: once_per_epoch still holds, with the pending there to claim
      // (set, not left to accrue: a fast run reached here with 0.2 SOL, and the rule's condition,
      // not once_per_epoch, held it).
      sandbox.world.setWallet(wallet.address, { pendingLamports: 2_000_000_000n });
      expect((await cli(['once'])).code).toBe(0);
      expect(claims()).toBe(1);
    } finally {
      await sandbox.close();
      cleanup();
    }
  });
});
