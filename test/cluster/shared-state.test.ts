// The daemon on shared PostgreSQL state (issue 15): `once` with state.url does what it does on
// SQLite — claims and compounds, then sends nothing more in the same epoch — and two `once` runs at
// the same time split the wallets by lease, so no wallet is acted on twice.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../e2e/helpers.js';
import { SOL, sharedWorld, type SharedWorld } from './shared-world.js';

describe('once on shared PostgreSQL state', () => {
  let w: SharedWorld;
  beforeEach(async () => {
    w = await sharedWorld(['w0', 'w1', 'w2', 'w3', 'w4', 'w5']);
  });
  afterEach(async () => {
    await w.close();
  });

  const ops = () => w.sandbox.ledger().map((e) => `${e.wallet}:${e.op}:${e.epoch}`);

  it('claims and compounds every wallet once, and sends nothing more in the same epoch', async () => {
    const first = await runCli(['once', '--config', w.config], { cwd: w.dir, env: w.env });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.events.find((e) => e.event === 'cluster.joined')).toBeDefined();
    expect(w.sandbox.ledger()).toHaveLength(12);
    expect(new Set(ops()).size).toBe(12);

    for (const wallet of w.wallets) w.sandbox.world.setWallet(wallet.address, { pendingLamports: 2n * SOL });
    const second = await runCli(['once', '--config', w.config], { cwd: w.dir, env: w.env });
    expect(second.code).toBe(0);
    expect(w.sandbox.ledger()).toHaveLength(12);
    expect(second.events.filter((e) => e.event === 'action.sent')).toEqual([]);
    // The state is in PostgreSQL, not in a file beside the config.
    expect(first.events.some((e) => e.event === 'state.migrated')).toBe(true);
  });

  it('two at once split the wallets: each wallet is claimed once, and both exit 0', async () => {
    const [a, b] = await Promise.all([runCli(['once', '--config', w.config], { cwd: w.dir, env: w.env }), runCli(['once', '--config', w.config], { cwd: w.dir, env: w.env })]);
    expect([a.code, b.code], a.stderr + b.stderr + JSON.stringify([...a.events, ...b.events].filter((e) => e.level === "error" || e.level === "warn"))).toEqual([0, 0]);
    const claims = w.sandbox.ledger().filter((e) => e.op === 'claim').map((e) => e.wallet);
    expect(claims.sort()).toEqual(w.wallets.map((x) => x.address).sort());
    expect(w.sandbox.ledger().filter((e) => e.op === 'deposit')).toHaveLength(w.wallets.length);
  });
});
