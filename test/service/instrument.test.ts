import { describe, expect, it } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import type { WalletConfig, WalletSummary } from '../../src/domain.js';
import { createEvents } from '../../src/events.js';
import { instrument, operationOf } from '../../src/service/instrument.js';
import { createMetrics } from '../../src/service/metrics.js';
import { parseExposition, sampleValue } from '../deploy/signals.js';

const T0 = 1_800_000_000_000;
const wallet = { name: 'treasury', address: 'TreasuryAddr' } as WalletConfig;

function setup() {
  const metrics = createMetrics({ processMetrics: false });
  metrics.configure({ wallets: [wallet], rules: ['compound'], perWallet: 'auto', staleAfterMs: 180_000 });
  const events = createEvents();
  const ins = instrument(metrics, events, { endpoints: () => DEFAULT_ENDPOINTS });
  return { ins, events, scrape: async () => parseExposition(await metrics.render()) };
}

describe('instrument', () => {
  it('counts a plan when recorded and again, apart, when it ends; open and blocked are not endings', async () => {
    const { events, scrape } = setup();
    const plan = { wallet: 'treasury', plan: 1, rule: 'compound' };
    events.emit('plan:recorded', { ...plan, epoch: 'e1', dry: false });
    events.emit('plan:settled', { ...plan, status: 'open' });
    events.emit('plan:settled', { ...plan, status: 'blocked' });
    events.emit('plan:settled', { ...plan, status: 'done' });
    events.emit('plan:recorded', { ...plan, epoch: 'e1', dry: false });
    events.emit('plan:settled', { ...plan, status: 'failed' });
    events.emit('plan:recorded', { ...plan, epoch: 'e1', dry: true });
    const s = await scrape();
    expect(sampleValue(s, 'autoclaim_plans_created_total', { rule: 'compound' })).toBe(3);
    const outcomes = Object.fromEntries(
      ['done', 'rejected', 'failed', 'dry'].map((o) => [o, sampleValue(s, 'autoclaim_plan_outcomes_total', { rule: 'compound', outcome: o })]),
    );
    expect(outcomes).toEqual({ done: 1, rejected: 0, failed: 1, dry: 1 });
  });

  it('adds the SOL of acknowledged steps by action, and shares and tokens apart; an anomaly is counted, its amount is not', async () => {
    const { events, scrape } = setup();
    const step = { wallet: 'treasury', plan: 1, step: 1 };
    events.emit('step:outcome', { ...step, kind: 'claim', state: 'acknowledged', amountLamports: 2_000_000_000n });
    events.emit('step:outcome', { ...step, kind: 'claim', state: 'anomaly', amountLamports: 9_000_000_000n });
    events.emit('step:outcome', { ...step, kind: 'withdraw', state: 'acknowledged', symbol: 'SOL2X', amountLamports: 500_000_000n });
    events.emit('step:outcome', { ...step, kind: 'deposit', state: 'rejected' });
    events.emit('step:outcome', { ...step, kind: 'deposit', state: 'sending' });
    const s = await scrape();
    expect(sampleValue(s, 'autoclaim_action_sol_total', { action: 'claim' })).toBe(2);
    // A withdraw gives up vault shares, not SOL (helper 34): counted by symbol, apart from SOL.
    expect(sampleValue(s, 'autoclaim_action_sol_total', { action: 'withdraw' })).toBeUndefined();
    expect(sampleValue(s, 'autoclaim_action_units_total', { action: 'withdraw', symbol: 'SOL2X' })).toBe(0.5);
    expect(sampleValue(s, 'autoclaim_anomalies_total', { kind: 'claim' })).toBe(1);
    expect(sampleValue(s, 'autoclaim_steps_total', { kind: 'claim', outcome: 'acknowledged' })).toBe(1);
    expect(sampleValue(s, 'autoclaim_steps_total', { kind: 'deposit', outcome: 'rejected' })).toBe(1);
    expect(s.some((x) => x.labels.outcome === 'sending')).toBe(false);
  });

  it('records polls at their time, and limiter waits as differences of the running total', async () => {
    const { ins, events, scrape } = setup();
    events.emit('poll:ok', { wallet, summary: { pendingLamports: 3_000_000_000n, lifetimeLamports: null } as WalletSummary, at: T0 });
    events.emit('poll:failed', { wallet, error: new Error('down'), at: T0 + 1 });
    ins.sampleLimiter(1500);
    ins.sampleLimiter(1500);
    ins.sampleLimiter(2000);
    const s = await scrape();
    expect(sampleValue(s, 'autoclaim_last_successful_poll_timestamp_seconds')).toBe(T0 / 1000);
    expect(sampleValue(s, 'autoclaim_pending_sol_total')).toBe(3);
    expect(sampleValue(s, 'autoclaim_polls_total', { outcome: 'failed' })).toBe(1);
    expect(sampleValue(s, 'autoclaim_rate_limit_waits_total')).toBe(2);
    expect(sampleValue(s, 'autoclaim_rate_limit_wait_seconds_total')).toBe(2);
  });

  it('labels each HTTP exchange by operation, and hears nothing once closed', async () => {
    const { ins, events, scrape } = setup();
    events.emit('request:done', { method: 'GET', url: 'https://api.example/v1/rewards/wallet/Addr111', status: 200, seconds: 0.05 });
    ins.close();
    events.emit('request:done', { method: 'GET', url: 'https://api.example/v1/rewards/wallet/Addr111', status: 200, seconds: 0.05 });
    events.emit('poll:failed', { wallet, error: new Error('down'), at: T0 });
    const s = await scrape();
    const counts = s.filter((x) => x.name === 'autoclaim_request_duration_seconds_count' && x.labels.op === 'summary' && x.labels.status_class === '2xx');
    expect(counts.map((x) => x.value)).toEqual([1]);
    expect(sampleValue(s, 'autoclaim_polls_total', { outcome: 'failed' })).toBe(0);
  });
});

describe('operationOf', () => {
  it.each([
    ['GET', 'https://api.example/v1/rewards/wallet/Addr111', 'summary'],
    ['GET', 'https://api.example/v1/rewards/leaderboard?limit=5', 'leaderboard'],
    ['GET', 'https://api.example/health', 'health'],
    ['POST', `https://api.example/v1${DEFAULT_ENDPOINTS.claim.path}`, 'claim'],
    ['POST', `https://api.example/v1${DEFAULT_ENDPOINTS.burn.path}`, 'burn'],
    ['DELETE', 'https://api.example/v1/other', 'other'],
  ])('%s %s → %s', (method, url, op) => {
    expect(operationOf(method, url, DEFAULT_ENDPOINTS)).toBe(op);
  });
});
