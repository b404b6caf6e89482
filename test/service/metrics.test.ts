import { describe, expect, it } from 'vitest';
import { createMetrics, statusClass } from '../../src/service/metrics.js';

/** The sample lines of one metric family, label sets as written. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

describe('createMetrics', () => {
  it('records a successful poll: counter, SOL gauges and last-success time', async () => {
    const m = createMetrics({ processMetrics: false });
    m.pollOk('treasury', { pendingLamports: 1_500_000_000n, lifetimeLamports: 12_000_000_001n }, 1_700_000_000_999);
    m.pollOk('treasury', { pendingLamports: 1n, lifetimeLamports: null }, 1_700_000_060_000);
    m.pollFailed('treasury');
    m.pollFailed('treasury');
    const text = await m.render();
    expect(samples(text, 'autoclaim_polls_total')).toEqual([
      'autoclaim_polls_total{wallet="treasury",outcome="ok"} 2',
      'autoclaim_polls_total{wallet="treasury",outcome="failed"} 2',
    ]);
    expect(samples(text, 'autoclaim_pending_sol')).toEqual(['autoclaim_pending_sol{wallet="treasury"} 1e-9']);
    // a null lifetime leaves the last known value in place
    expect(samples(text, 'autoclaim_lifetime_sol')).toEqual(['autoclaim_lifetime_sol{wallet="treasury"} 12.000000001']);
    expect(samples(text, 'autoclaim_last_successful_poll_timestamp_seconds')).toEqual([
      'autoclaim_last_successful_poll_timestamp_seconds{wallet="treasury"} 1700000060',
    ]);
  });

  it('exposes a failed-poll series at zero once a wallet has polled', async () => {
    const m = createMetrics({ processMetrics: false });
    m.pollOk('hot', { pendingLamports: 0n, lifetimeLamports: 0n }, 0);
    expect(samples(await m.render(), 'autoclaim_polls_total')).toContain('autoclaim_polls_total{wallet="hot",outcome="failed"} 0');
  });

  it('counts plans, steps, reloads and notifications by their labels', async () => {
    const m = createMetrics({ processMetrics: false });
    m.plan('compound', 'created');
    m.plan('compound', 'done');
    m.step('claim', 'acknowledged');
    m.step('deposit', 'unknown');
    m.step('deposit', 'unknown');
    m.unknownStepsOpen(1);
    m.configReload('invalid');
    m.notification('sent');
    const text = await m.render();
    expect(samples(text, 'autoclaim_plans_total')).toEqual([
      'autoclaim_plans_total{rule="compound",outcome="created"} 1',
      'autoclaim_plans_total{rule="compound",outcome="done"} 1',
    ]);
    expect(samples(text, 'autoclaim_steps_total')).toEqual([
      'autoclaim_steps_total{kind="claim",outcome="acknowledged"} 1',
      'autoclaim_steps_total{kind="deposit",outcome="unknown"} 2',
    ]);
    expect(samples(text, 'autoclaim_unknown_steps_open')).toEqual(['autoclaim_unknown_steps_open 1']);
    expect(samples(text, 'autoclaim_config_reloads_total')).toEqual(['autoclaim_config_reloads_total{outcome="invalid"} 1']);
    expect(samples(text, 'autoclaim_notifications_total')).toEqual(['autoclaim_notifications_total{outcome="sent"} 1']);
  });

  it('starts the unknown-steps gauge and rate-limit counters at zero', async () => {
    const text = await createMetrics({ processMetrics: false }).render();
    expect(samples(text, 'autoclaim_unknown_steps_open')).toEqual(['autoclaim_unknown_steps_open 0']);
    expect(samples(text, 'autoclaim_rate_limit_waits_total')).toEqual(['autoclaim_rate_limit_waits_total 0']);
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
      'autoclaim_request_duration_seconds_count{op="wallet",status_class="2xx"} 2',
      'autoclaim_request_duration_seconds_count{op="claim",status_class="5xx"} 1',
      'autoclaim_request_duration_seconds_count{op="claim",status_class="none"} 1',
    ]);
    expect(samples(text, 'autoclaim_request_duration_seconds_bucket')).toContain(
      'autoclaim_request_duration_seconds_bucket{le="0.05",op="wallet",status_class="2xx"} 1',
    );
  });

  it('forgets a wallet removed from the config', async () => {
    const m = createMetrics({ processMetrics: false });
    m.pollOk('gone', { pendingLamports: 1n, lifetimeLamports: 1n }, 0);
    m.pollOk('kept', { pendingLamports: 1n, lifetimeLamports: 1n }, 0);
    m.forgetWallet('gone');
    const text = await m.render();
    expect(text).not.toContain('wallet="gone"');
    expect(text).toContain('wallet="kept"');
  });

  it('keeps each instance in its own registry', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.pollFailed('w');
    expect(samples(await a.render(), 'autoclaim_polls_total')).toEqual(['autoclaim_polls_total{wallet="w",outcome="failed"} 1']);
    expect(samples(await b.render(), 'autoclaim_polls_total')).toEqual([]);
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
