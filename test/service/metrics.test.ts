import { describe, expect, it } from 'vitest';
import { createMetrics, type Metrics } from '../../src/service/metrics.js';
import { statusClass } from '../../src/service/status-class.js';

/** The sample lines of one metric family, label sets as written. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

const MINUTE = 60_000;
const T0 = 1_700_000_000_000;
const treasury = { name: 'treasury', address: 'TreasuryAddr' };
const hot = { name: 'hot', address: 'HotAddr' };

function setup(m: Metrics, wallets = [treasury, hot], over: Partial<Parameters<Metrics['configure']>[0]> = {}) {
  m.configure({ wallets, rules: ['compound'], perWallet: 'auto', staleAfterMs: 3 * MINUTE, ...over });
}

describe('createMetrics', () => {
  it('records a successful poll: aggregate counter, per-wallet counter and gauges, last-success times', async () => {
    const m = createMetrics({ processMetrics: false });
    setup(m, [treasury]);
    m.pollOk(treasury, { pendingLamports: 1_500_000_000n, lifetimeLamports: 12_000_000_001n }, 1_700_000_000_999);
    m.pollOk(treasury, { pendingLamports: 1n, lifetimeLamports: null }, 1_700_000_060_000);
    m.pollFailed(treasury);
    m.pollFailed(treasury);
    const text = await m.render();
    expect(samples(text, 'autoclaim_polls_total')).toEqual(['autoclaim_polls_total{outcome="ok"} 2', 'autoclaim_polls_total{outcome="failed"} 2']);
    expect(samples(text, 'autoclaim_wallet_polls_total')).toEqual([
      'autoclaim_wallet_polls_total{wallet="treasury",outcome="ok"} 2',
      'autoclaim_wallet_polls_total{wallet="treasury",outcome="failed"} 2',
    ]);
    expect(samples(text, 'autoclaim_wallet_pending_sol')).toEqual(['autoclaim_wallet_pending_sol{wallet="treasury"} 1e-9']);
    // a null lifetime leaves the last known value in place
    expect(samples(text, 'autoclaim_wallet_lifetime_sol')).toEqual(['autoclaim_wallet_lifetime_sol{wallet="treasury"} 12.000000001']);
    expect(samples(text, 'autoclaim_wallet_last_successful_poll_timestamp_seconds')).toEqual([
      'autoclaim_wallet_last_successful_poll_timestamp_seconds{wallet="treasury"} 1700000060',
    ]);
    expect(samples(text, 'autoclaim_last_successful_poll_timestamp_seconds')).toEqual(['autoclaim_last_successful_poll_timestamp_seconds 1700000060']);
  });

  it('has every label set an alert or panel uses from the start, at zero', async () => {
    const m = createMetrics({ processMetrics: false, version: '9.9.9', node: 'v20.0.0' });
    setup(m);
    const text = await m.render();
    expect(samples(text, 'autoclaim_build_info')).toEqual(['autoclaim_build_info{version="9.9.9",node="v20.0.0"} 1']);
    expect(samples(text, 'autoclaim_polls_total')).toEqual(['autoclaim_polls_total{outcome="ok"} 0', 'autoclaim_polls_total{outcome="failed"} 0']);
    expect(samples(text, 'autoclaim_wallet_polls_total')).toHaveLength(4);
    expect(samples(text, 'autoclaim_plans_created_total')).toEqual(['autoclaim_plans_created_total{rule="compound"} 0']);
    expect(samples(text, 'autoclaim_plan_outcomes_total')).toEqual(
      ['done', 'rejected', 'failed', 'dry'].map((o) => `autoclaim_plan_outcomes_total{rule="compound",outcome="${o}"} 0`),
    );
    expect(samples(text, 'autoclaim_action_sol_total')).toEqual(
      ['claim', 'deposit', 'mint'].map((a) => `autoclaim_action_sol_total{action="${a}"} 0`),
    );
    expect(samples(text, 'autoclaim_anomalies_total')).toHaveLength(5);
    expect(samples(text, 'autoclaim_steps_total')).toContain('autoclaim_steps_total{kind="deposit",outcome="unknown"} 0');
    expect(samples(text, 'autoclaim_steps_total')).toHaveLength(5 * 6);
    expect(samples(text, 'autoclaim_signing_paused')).toEqual(['autoclaim_signing_paused{scope="all"} 0', 'autoclaim_signing_paused{scope="wallet"} 0']);
    expect(samples(text, 'autoclaim_unknown_steps_open')).toEqual(['autoclaim_unknown_steps_open 0']);
    expect(samples(text, 'autoclaim_rate_limit_waits_total')).toEqual(['autoclaim_rate_limit_waits_total 0']);
    expect(samples(text, 'autoclaim_config_reloads_total')).toHaveLength(2);
    expect(samples(text, 'autoclaim_config_last_reload_successful')).toEqual(['autoclaim_config_last_reload_successful 1']);
    expect(samples(text, 'autoclaim_notifications_total')).toHaveLength(4); // sent, failed, expired, dropped
    expect(samples(text, 'autoclaim_request_duration_seconds_count')).toEqual(['autoclaim_request_duration_seconds_count{op="summary",status_class="2xx"} 0']);
    expect(samples(text, 'autoclaim_wallets')).toEqual(['autoclaim_wallets 2']);
    expect(samples(text, 'autoclaim_stale_after_seconds')).toEqual(['autoclaim_stale_after_seconds 180']);
    // No success recorded anywhere yet: 0, which alerting reads as "long ago".
    expect(samples(text, 'autoclaim_last_successful_poll_timestamp_seconds')).toEqual(['autoclaim_last_successful_poll_timestamp_seconds 0']);
  });

  it("exports each of the daemon's alerts with its severity, 0 while closed and the open count while open", async () => {
    let open = new Map<string, number>();
    const m = createMetrics({ processMetrics: false, alertsOpen: () => open });
    setup(m);
    const text = await m.render();
    expect(samples(text, 'autoclaim_alerts_open')).toContain('autoclaim_alerts_open{alert="wallet_stale",severity="error"} 0');
    expect(samples(text, 'autoclaim_alerts_open')).toContain('autoclaim_alerts_open{alert="claim_undetermined",severity="critical"} 0');
    open = new Map([['wallet_stale', 2], ['claims_stalled', 1]]);
    const later = await m.render();
    expect(samples(later, 'autoclaim_alerts_open')).toContain('autoclaim_alerts_open{alert="wallet_stale",severity="error"} 2');
    expect(samples(later, 'autoclaim_alerts_open')).toContain('autoclaim_alerts_open{alert="claims_stalled",severity="warning"} 1');
    expect(samples(later, 'autoclaim_alerts_open')).toContain('autoclaim_alerts_open{alert="unknown_step",severity="error"} 0');
  });

  it('counts plans created apart from how they ended, steps, SOL moved, reloads and notifications', async () => {
    const m = createMetrics({ processMetrics: false });
    m.planCreated('compound');
    m.planCreated('compound');
    m.planOutcome('compound', 'done');
    m.step('claim', 'acknowledged');
    m.actionSol('claim', 2_500_000_000n);
    m.actionSol('deposit', 1_250_000_000n);
    m.actionSol('deposit', 0n);
    m.step('deposit', 'unknown');
    m.step('deposit', 'unknown');
    m.unknownStepsOpen(1);
    m.configReload('invalid');
    m.notification('sent');
    const text = await m.render();
    expect(samples(text, 'autoclaim_plans_created_total')).toEqual(['autoclaim_plans_created_total{rule="compound"} 2']);
    expect(samples(text, 'autoclaim_plan_outcomes_total')).toEqual(['autoclaim_plan_outcomes_total{rule="compound",outcome="done"} 1']);
    expect(samples(text, 'autoclaim_steps_total')).toContain('autoclaim_steps_total{kind="claim",outcome="acknowledged"} 1');
    expect(samples(text, 'autoclaim_steps_total')).toContain('autoclaim_steps_total{kind="deposit",outcome="unknown"} 2');
    expect(samples(text, 'autoclaim_action_sol_total')).toContain('autoclaim_action_sol_total{action="claim"} 2.5');
    expect(samples(text, 'autoclaim_action_sol_total')).toContain('autoclaim_action_sol_total{action="deposit"} 1.25');
    expect(samples(text, 'autoclaim_unknown_steps_open')).toEqual(['autoclaim_unknown_steps_open 1']);
    expect(samples(text, 'autoclaim_config_reloads_total')).toContain('autoclaim_config_reloads_total{outcome="invalid"} 1');
    expect(samples(text, 'autoclaim_config_last_reload_successful')).toEqual(['autoclaim_config_last_reload_successful 0']);
    expect(samples(text, 'autoclaim_notifications_total')).toContain('autoclaim_notifications_total{outcome="sent"} 1');
  });

  it('sums rate-limit waits and ignores zero waits', async () => {
    const m = createMetrics({ processMetrics: false });
    m.rateLimitWait(1500);
    m.rateLimitWait(0);
    m.rateLimitWait(500);
    const text = await m.render();
    expect(samples(text, 'autoclaim_rate_limit_waits_total')).toEqual(['autoclaim_rate_limit_waits_total 2']);
    expect(samples(text, 'autoclaim_rate_limit_wait_seconds_total')).toEqual(['autoclaim_rate_limit_wait_seconds_total 2']);
  });

  it('observes request latency by op and status class', async () => {
    const m = createMetrics({ processMetrics: false });
    m.request('wallet', 200, 0.04);
    m.request('wallet', 204, 0.2);
    m.request('claim', 503, 1.2);
    m.request('claim', undefined, 10);
    const text = await m.render();
    expect(samples(text, 'autoclaim_request_duration_seconds_count')).toEqual([
      'autoclaim_request_duration_seconds_count{op="summary",status_class="2xx"} 0',
      'autoclaim_request_duration_seconds_count{op="wallet",status_class="2xx"} 2',
      'autoclaim_request_duration_seconds_count{op="claim",status_class="5xx"} 1',
      'autoclaim_request_duration_seconds_count{op="claim",status_class="none"} 1',
    ]);
    expect(samples(text, 'autoclaim_request_duration_seconds_bucket')).toContain(
      'autoclaim_request_duration_seconds_bucket{le="0.05",op="wallet",status_class="2xx"} 1',
    );
  });

  it('drops a wallet removed from the config at the next configure', async () => {
    const m = createMetrics({ processMetrics: false });
    const gone = { name: 'gone', address: 'GoneAddr' };
    setup(m, [gone, treasury]);
    m.pollOk(gone, { pendingLamports: 1n, lifetimeLamports: 1n }, 0);
    m.pollOk(treasury, { pendingLamports: 1n, lifetimeLamports: 1n }, 0);
    setup(m, [treasury]);
    const text = await m.render();
    expect(text).not.toContain('wallet="gone"');
    expect(text).toContain('wallet="treasury"');
    expect(samples(text, 'autoclaim_wallets')).toEqual(['autoclaim_wallets 1']);
  });

  it('auto: per-wallet series up to 100 wallets, aggregates and the top 10 by pending beyond; true and false force it', async () => {
    const fleet = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `w${i}`, address: `A${i}` }));
    const m = createMetrics({ processMetrics: false });
    setup(m, fleet(100));
    expect(m.perWalletEnabled()).toBe(true);
    expect(samples(await m.render(), 'autoclaim_wallet_polls_total')).toHaveLength(200);

    const big = fleet(101);
    setup(m, big);
    expect(m.perWalletEnabled()).toBe(false);
    big.forEach((w, i) => m.pollOk(w, { pendingLamports: BigInt(i) * 1_000_000_000n, lifetimeLamports: null }, T0));
    const text = await m.render();
    expect(text).not.toMatch(/^autoclaim_wallet_/m);
    expect(samples(text, 'autoclaim_pending_sol_total')).toEqual([`autoclaim_pending_sol_total ${(100 * 101) / 2}`]);
    expect(samples(text, 'autoclaim_top_pending_sol')).toEqual(Array.from({ length: 10 }, (_, i) => `autoclaim_top_pending_sol{wallet="w${100 - i}"} ${100 - i}`));
    expect(samples(text, 'autoclaim_polls_total')).toEqual(['autoclaim_polls_total{outcome="ok"} 101', 'autoclaim_polls_total{outcome="failed"} 0']);

    setup(m, big, { perWallet: true });
    expect(samples(await m.render(), 'autoclaim_wallet_pending_sol')).toHaveLength(101);
    setup(m, fleet(2), { perWallet: false });
    expect(await m.render()).not.toMatch(/^autoclaim_wallet_/m);
  });

  it('counts stale wallets at scrape time: a wallet never polled well counts from the start', async () => {
    let now = T0;
    const m = createMetrics({ processMetrics: false, clock: { now: () => now, monotonic: () => now }, startedAt: T0 });
    setup(m);
    m.pollOk(treasury, { pendingLamports: 1n, lifetimeLamports: 1n }, T0);
    const stale = async () => samples(await m.render(), 'autoclaim_wallets_stale');
    expect(await stale()).toEqual(['autoclaim_wallets_stale 0']);
    now = T0 + 3 * MINUTE + 1;
    expect(await stale()).toEqual(['autoclaim_wallets_stale 2']);
    m.pollOk(hot, { pendingLamports: 1n, lifetimeLamports: 1n }, now);
    expect(await stale()).toEqual(['autoclaim_wallets_stale 1']);
  });

  it("judges a wallet stale by its own time between polls, and the fleet's last poll by the interval", async () => {
    let now = T0;
    // A fleet over the rate budget: each wallet's turn comes every 4 intervals, read at each scrape.
    let gapMs = 4 * MINUTE;
    const m = createMetrics({ processMetrics: false, clock: { now: () => now, monotonic: () => now }, startedAt: T0 });
    setup(m, [treasury, hot], { walletStaleAfterMs: () => 3 * gapMs });
    m.pollOk(treasury, { pendingLamports: 1n, lifetimeLamports: 1n }, T0);
    m.pollOk(hot, { pendingLamports: 1n, lifetimeLamports: 1n }, T0);
    const text = async () => await m.render();
    now = T0 + 3 * MINUTE + 1;
    // Waiting its turn is not stale; /readyz's and AutoclaimNoSuccessfulPoll's bound stays 3 intervals.
    expect(samples(await text(), 'autoclaim_wallets_stale')).toEqual(['autoclaim_wallets_stale 0']);
    expect(samples(await text(), 'autoclaim_stale_after_seconds')).toEqual(['autoclaim_stale_after_seconds 180']);
    now = T0 + 12 * MINUTE + 1;
    expect(samples(await text(), 'autoclaim_wallets_stale')).toEqual(['autoclaim_wallets_stale 2']);
    gapMs = 5 * MINUTE; // the fleet held grew
    expect(samples(await text(), 'autoclaim_wallets_stale')).toEqual(['autoclaim_wallets_stale 0']);
  });

  it('restores last successes and amounts from the state file, never moving one backwards', async () => {
    const m = createMetrics({ processMetrics: false });
    setup(m);
    m.pollOk(hot, { pendingLamports: 7_000_000_000n, lifetimeLamports: 9_000_000_000n }, T0);
    m.fleet.restore([
      { address: treasury.address, lastOkAt: T0 - MINUTE, pendingLamports: 3_000_000_000n, lifetimeLamports: 4_000_000_000n },
      { address: hot.address, lastOkAt: T0 - MINUTE, pendingLamports: 1n, lifetimeLamports: 1n },
      { address: 'NotConfigured', lastOkAt: T0 + MINUTE, pendingLamports: 1n, lifetimeLamports: 1n },
    ]);
    const text = await m.render();
    expect(samples(text, 'autoclaim_wallet_last_successful_poll_timestamp_seconds')).toEqual([
      `autoclaim_wallet_last_successful_poll_timestamp_seconds{wallet="treasury"} ${(T0 - MINUTE) / 1000}`,
      `autoclaim_wallet_last_successful_poll_timestamp_seconds{wallet="hot"} ${T0 / 1000}`,
    ]);
    expect(samples(text, 'autoclaim_last_successful_poll_timestamp_seconds')).toEqual([`autoclaim_last_successful_poll_timestamp_seconds ${T0 / 1000}`]);
    expect(samples(text, 'autoclaim_pending_sol_total')).toEqual(['autoclaim_pending_sol_total 10']);
  });

  it('reads signing pauses at scrape time', async () => {
    let paused = { all: false, wallets: 0 };
    const m = createMetrics({ processMetrics: false, signing: () => paused });
    paused = { all: true, wallets: 3 };
    expect(samples(await m.render(), 'autoclaim_signing_paused')).toEqual(['autoclaim_signing_paused{scope="all"} 1', 'autoclaim_signing_paused{scope="wallet"} 3']);
  });

  it('keeps each instance in its own registry', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.pollFailed(treasury);
    expect(samples(await a.render(), 'autoclaim_polls_total')).toEqual(['autoclaim_polls_total{outcome="ok"} 0', 'autoclaim_polls_total{outcome="failed"} 1']);
    expect(samples(await b.render(), 'autoclaim_polls_total')).toEqual(['autoclaim_polls_total{outcome="ok"} 0', 'autoclaim_polls_total{outcome="failed"} 0']);
  });

  it('includes the process metrics unless told not to', async () => {
    expect(await createMetrics().render()).toContain('process_cpu_user_seconds_total');
    expect(await createMetrics({ processMetrics: false }).render()).not.toContain('process_cpu_user_seconds_total');
    expect(createMetrics().contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });
});

describe('statusClass', () => {
  it.each([
    [200, '2xx'],
    [299, '2xx'],
    [302, '3xx'],
    [429, '4xx'],
    [500, '5xx'],
    [undefined, 'none'],
    [42, 'none'],
    [600, 'none'],
  ] as const)('%s → %s', (status, expected) => {
    expect(statusClass(status)).toBe(expected);
  });
});
