// Prometheus metrics, in a registry of our own (never prom-client's global one, so two daemons in
// one test process, or a reload, never collide). The daemon calls the typed methods below and
// never sees a label name.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { lamportsToDisplayNumber, type Lamports } from '../api/amount.js';
import { SIGNED_OPS, type PlanStatus, type SignedOp, type StepState } from '../domain.js';

export type PollOutcome = 'ok' | 'failed';
/** A plan is counted when recorded ('created') and again when it settles. */
export type PlanOutcome = 'created' | PlanStatus;
export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'none';
export type NotificationOutcome = 'sent' | 'failed' | 'dropped';

export interface Metrics {
  readonly registry: Registry;
  /** The Content-Type of render()'s text. */
  readonly contentType: string;
  render(): Promise<string>;

  /** A successful poll: counts it, sets the wallet's gauges and last-success time. */
  pollOk(wallet: string, summary: { pendingLamports: Lamports; lifetimeLamports: Lamports | null }, atMs: number): void;
  pollFailed(wallet: string): void;
  plan(rule: string, outcome: PlanOutcome): void;
  /** A step that reached a state worth counting (acknowledged, rejected, unknown, skipped, ...). */
  step(kind: SignedOp, outcome: StepState | 'deferred'): void;
  /** An answer that claimed more than could be true (e.g. claimed_sol above the pending seen). */
  anomaly(kind: SignedOp): void;
  unknownStepsOpen(count: number): void;
  /** Time spent waiting on the rate limiter (token bucket or Retry-After). */
  rateLimitWait(ms: number): void;
  /** One HTTP request; status undefined when no response came back. */
  request(op: string, status: number | undefined, seconds: number): void;
  configReload(outcome: 'ok' | 'invalid'): void;
  notification(outcome: NotificationOutcome): void;
  /** Drops a wallet's series, e.g. after a reload removed it from the config. */
  forgetWallet(wallet: string): void;
}

export interface MetricsOptions {
  /** Collect prom-client's process_* and nodejs_* metrics (default true). */
  processMetrics?: boolean;
}

const PREFIX = 'autoclaim_';
// API latency: most answers come in well under a second; the client's timeout caps the tail.
const REQUEST_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(opts: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  if (opts.processMetrics ?? true) {
    // Left unprefixed (process_cpu_seconds_total, nodejs_heap_size_used_bytes, ...) so stock
    // Node.js dashboards work unchanged.
    collectDefaultMetrics({ register: registry });
  }

  const polls = new Counter({
    name: `${PREFIX}polls_total`,
    help: 'Wallet summary polls, by wallet and outcome (ok | failed).',
    labelNames: ['wallet', 'outcome'] as const,
    registers,
  });
  const plans = new Counter({
    name: `${PREFIX}plans_total`,
    help: 'Plans by rule and outcome: created when recorded, then done | failed | blocked | dry when settled.',
    labelNames: ['rule', 'outcome'] as const,
    registers,
  });
  const steps = new Counter({
    name: `${PREFIX}steps_total`,
    help: 'Plan steps by kind (claim | deposit | mint | withdraw | burn) and the state they reached.',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  const anomalies = new Counter({
    name: `${PREFIX}anomalies_total`,
    help: 'API answers that claimed more than could be true (a claim above the pending seen before it), by kind; the step was bounded.',
    labelNames: ['kind'] as const,
    registers,
  });
  for (const kind of SIGNED_OPS) anomalies.inc({ kind }, 0);
  const unknownOpen = new Gauge({
    name: `${PREFIX}unknown_steps_open`,
    help: 'Steps in state unknown awaiting reconciliation or an operator (autoclaim actions resolve).',
    registers,
  });
  const pending = new Gauge({
    name: `${PREFIX}pending_sol`,
    help: 'Pending rewards per wallet at the last successful poll, in SOL (display only).',
    labelNames: ['wallet'] as const,
    registers,
  });
  const lifetime = new Gauge({
    name: `${PREFIX}lifetime_sol`,
    help: 'Lifetime rewards per wallet at the last successful poll, in SOL (display only).',
    labelNames: ['wallet'] as const,
    registers,
  });
  const lastOk = new Gauge({
    name: `${PREFIX}last_successful_poll_timestamp_seconds`,
    help: 'Unix time of the last successful poll per wallet.',
    labelNames: ['wallet'] as const,
    registers,
  });
  const waits = new Counter({
    name: `${PREFIX}rate_limit_waits_total`,
    help: 'Times a request waited for the rate limiter or a Retry-After.',
    registers,
  });
  const waitSeconds = new Counter({
    name: `${PREFIX}rate_limit_wait_seconds_total`,
    help: 'Seconds spent waiting for the rate limiter or a Retry-After.',
    registers,
  });
  const requests = new Histogram({
    name: `${PREFIX}request_duration_seconds`,
    help: 'API request latency by operation and status class (none = no response).',
    labelNames: ['op', 'status_class'] as const,
    buckets: REQUEST_BUCKETS,
    registers,
  });
  const reloads = new Counter({
    name: `${PREFIX}config_reloads_total`,
    help: 'Config reloads (SIGHUP) by outcome; after an invalid one the previous config stays in force.',
    labelNames: ['outcome'] as const,
    registers,
  });
  const notifications = new Counter({
    name: `${PREFIX}notifications_total`,
    help: 'Webhook notifications by outcome (sent | failed | dropped by the queue bound).',
    labelNames: ['outcome'] as const,
    registers,
  });

  // Series that should exist at zero from the start, so rate() and alerts see them before the first event.
  unknownOpen.set(0);
  waits.inc(0);
  waitSeconds.inc(0);

  return {
    registry,
    contentType: registry.contentType,
    render: () => registry.metrics(),
    pollOk(wallet, summary, atMs) {
      polls.inc({ wallet, outcome: 'ok' });
      // failed starts at zero too, so `increase(...{outcome="failed"})` has a series to work on.
      polls.inc({ wallet, outcome: 'failed' }, 0);
      pending.set({ wallet }, lamportsToDisplayNumber(summary.pendingLamports));
      if (summary.lifetimeLamports !== null) lifetime.set({ wallet }, lamportsToDisplayNumber(summary.lifetimeLamports));
      lastOk.set({ wallet }, Math.floor(atMs / 1000));
    },
    pollFailed(wallet) {
      polls.inc({ wallet, outcome: 'failed' });
    },
    plan(rule, outcome) {
      plans.inc({ rule, outcome });
    },
    step(kind, outcome) {
      steps.inc({ kind, outcome });
    },
    anomaly(kind) {
      anomalies.inc({ kind });
    },
    unknownStepsOpen(count) {
      unknownOpen.set(count);
    },
    rateLimitWait(ms) {
      if (ms <= 0) return;
      waits.inc();
      waitSeconds.inc(ms / 1000);
    },
    request(op, status, seconds) {
      requests.observe({ op, status_class: statusClass(status) }, Math.max(0, seconds));
    },
    configReload(outcome) {
      reloads.inc({ outcome });
    },
    notification(outcome) {
      notifications.inc({ outcome });
    },
    forgetWallet(wallet) {
      for (const outcome of ['ok', 'failed'] as const) polls.remove({ wallet, outcome });
      pending.remove({ wallet });
      lifetime.remove({ wallet });
      lastOk.remove({ wallet });
    },
  };
}

export function statusClass(status: number | undefined): StatusClass {
  if (status === undefined || !Number.isInteger(status) || status < 100 || status > 599) return 'none';
  return `${Math.floor(status / 100)}xx` as StatusClass;
}
