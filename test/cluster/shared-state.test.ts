// The daemon on shared PostgreSQL state (issue 15): `once` with state.url does what it does on
// SQLite — claims and compounds, then sends nothing more in the same epoch — and two `once` runs at
// the same time split the wallets by lease, so no wallet is acted on twice.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';

const SOL = 1_000_000_000n;

describe('once on shared PostgreSQL state', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  let config: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    wallets = makeWallets(dir, ['w0', 'w1', 'w2', 'w3', 'w4', 'w5']);
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: wallets.map((w) => ({ address: w.address, pendingLamports: SOL, accrualLamportsPerSec: 0n, balanceLamports: 0n })),
    });
    config = writeConfig(dir, { baseUrl: sandbox.url, wallets });
    env = { AUTOCLAIM_API_KEY: CANARY_API_KEY, AUTOCLAIM_STATE_URL: await createDatabase() };
  });

  afterEach(async () => {
    await sandbox.close();
    cleanup();
  });

  const ops = () => sandbox.ledger().map((e) => `${e.wallet}:${e.op}:${e.epoch}`);

  it('claims and compounds every wallet once, and sends nothing more in the same epoch', async () => {
    const first = await runCli(['once', '--config', config], { cwd: dir, env });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.events.find((e) => e.event === 'cluster.joined')).toBeDefined();
    expect(sandbox.ledger()).toHaveLength(12);
    expect(new Set(ops()).size).toBe(12);

    for (const w of wallets) sandbox.world.setWallet(w.address, { pendingLamports: 2n * SOL });
    const second = await runCli(['once', '--config', config], { cwd: dir, env });
    expect(second.code).toBe(0);
    expect(sandbox.ledger()).toHaveLength(12);
    expect(second.events.filter((e) => e.event === 'action.sent')).toEqual([]);
    // The state is in PostgreSQL, not in a file beside the config.
    expect(first.events.some((e) => e.event === 'state.migrated')).toBe(true);
  });

  it('two at once split the wallets: each wallet is claimed once, and both exit 0', async () => {
    const [a, b] = await Promise.all([runCli(['once', '--config', config], { cwd: dir, env }), runCli(['once', '--config', config], { cwd: dir, env })]);
    expect([a.code, b.code], a.stderr + b.stderr + JSON.stringify([...a.events, ...b.events].filter((e) => e.level === "error" || e.level === "warn"))).toEqual([0, 0]);
    const claims = sandbox.ledger().filter((e) => e.op === 'claim').map((e) => e.wallet);
    expect(claims.sort()).toEqual(wallets.map((w) => w.address).sort());
    expect(sandbox.ledger().filter((e) => e.op === 'deposit')).toHaveLength(wallets.length);
  });
});
