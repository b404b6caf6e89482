// The cluster's metrics without a database (issue 15): a daemon on its own SQLite state exports the
// lease series at 0 (so the shipped rules and dashboard find every series they name on any daemon,
// and autoclaim_cluster_daemons_live = 0 tells the rules it is not in a cluster); in a cluster the
// fleet's scope (the wallets held) bounds every aggregate, so summing over daemons counts each
// wallet once.
import { describe, expect, it } from 'vitest';
import type { Lamports } from '../../src/amount.js';
import { createFleet } from '../../src/service/fleet.js';
import { createMetrics, LEASE_LOSS_REASONS } from '../../src/service/metrics.js';
import { parseExposition, sampleValue } from '../deploy/signals.js';

const T = 1_800_000_000_000;
const MINUTE = 60_000;
const clock = { now: () => T, monotonic: () => 0 };
const wallets = ['x', 'y', 'z'].map((name) => ({ name, address: `Addr${name}` }));
const SOL = 1_000_000_000n as Lamports;

describe('lease metrics', () => {
  it('exist at 0 on a daemon outside a cluster, every loss reason included', async () => {
    const m = createMetrics({ processMetrics: false, clock });
    const s = parseExposition(await m.render());
    expect(sampleValue(s, 'autoclaim_leases_held')).toBe(0);
    expect(sampleValue(s, 'autoclaim_cluster_daemons_live')).toBe(0);
    expect(LEASE_LOSS_REASONS).toEqual(['expired', 'taken', 'deadline', 'recovery_failed', 'schema_newer']);
    for (const reason of LEASE_LOSS_REASONS) expect(sampleValue(s, 'autoclaim_lease_losses_total', { reason }), reason).toBe(0);
  });

  it('count losses by reason and read the manager at scrape time', async () => {
    let counts = { held: 3, live: 2 };
    const m = createMetrics({ processMetrics: false, clock, cluster: () => counts });
    m.leaseLost('taken');
    m.leaseLost('taken');
    m.leaseLost('deadline');
    let s = parseExposition(await m.render());
    expect([sampleValue(s, 'autoclaim_leases_held'), sampleValue(s, 'autoclaim_cluster_daemons_live')]).toEqual([3, 2]);
    expect(sampleValue(s, 'autoclaim_lease_losses_total', { reason: 'taken' })).toBe(2);
    expect(sampleValue(s, 'autoclaim_lease_losses_total', { reason: 'deadline' })).toBe(1);
    expect(sampleValue(s, 'autoclaim_lease_losses_total', { reason: 'expired' })).toBe(0);
    counts = { held: 0, live: 3 };
    s = parseExposition(await m.render());
    expect([sampleValue(s, 'autoclaim_leases_held'), sampleValue(s, 'autoclaim_cluster_daemons_live')]).toEqual([0, 3]);
  });
});

describe('the fleet scoped to the wallets held', () => {
  it('bounds staleness, last success, totals, top-k and per-wallet series by the scope; remembers every wallet', async () => {
    let held: ReadonlySet<string> | undefined = new Set(['Addrx']);
    const fleet = createFleet({ scope: () => held });
    const m = createMetrics({ processMetrics: false, clock, startedAt: T - 60 * MINUTE, fleet });
    m.configure({ wallets, rules: [], perWallet: true, staleAfterMs: 3 * MINUTE });
    m.pollOk(wallets[0]!, { pendingLamports: SOL, lifetimeLamports: SOL }, T - MINUTE);
    // Polled by this daemon before it lost y: remembered, not reported while another daemon has it.
    m.pollOk(wallets[1]!, { pendingLamports: 2n * SOL, lifetimeLamports: 2n * SOL }, T - 2 * MINUTE);

    let s = parseExposition(await m.render());
    expect(sampleValue(s, 'autoclaim_wallets_stale')).toBe(0);
    expect(sampleValue(s, 'autoclaim_pending_sol_total')).toBe(1);
    expect(s.filter((x) => x.name === 'autoclaim_top_pending_sol').map((x) => x.labels.wallet)).toEqual(['x']);
    expect(s.filter((x) => x.name === 'autoclaim_wallet_pending_sol').map((x) => x.labels.wallet)).toEqual(['x']);
    // The count of configured wallets is the config's, in scope or not (the rules compare with it).
    expect(sampleValue(s, 'autoclaim_wallets')).toBe(3);
    expect(fleet.size()).toBe(3);

    // z taken too, never polled well: stale (counted from the start an hour ago).
    held = new Set(['Addrx', 'Addrz']);
    s = parseExposition(await m.render());
    expect(sampleValue(s, 'autoclaim_wallets_stale')).toBe(1);
    expect(fleet.lastSuccessAt()).toBe(T - MINUTE);

    // Nothing held: nothing to report, nothing stale.
    held = new Set();
    s = parseExposition(await m.render());
    expect(sampleValue(s, 'autoclaim_wallets_stale')).toBe(0);
    expect(sampleValue(s, 'autoclaim_last_successful_poll_timestamp_seconds')).toBe(0);
    expect(sampleValue(s, 'autoclaim_pending_sol_total')).toBe(0);

    // No scope (a daemon alone on its state): every wallet, as before.
    held = undefined;
    s = parseExposition(await m.render());
    expect(sampleValue(s, 'autoclaim_wallets_stale')).toBe(1);
    expect(sampleValue(s, 'autoclaim_pending_sol_total')).toBe(3);
  });
});
