// Prometheus metrics, in a registry of our own (never prom-client's global one, so two daemons in
// one test process, or a reload, never collide). The daemon calls the typed methods below and
// never sees a label name.
//
// Two kinds of families: aggregates, which never carry a wallet label and exist for any fleet
// size, and `autoclaim_wallet_*`, one series per wallet, exported only when `metrics.per_wallet`
// says so (`auto`: up to PER_WALLET_AUTO_LIMIT wallets). Every label set a shipped alert or
// dashboard panel uses exists from the start, at zero, so rate() and `unless` have a series to
// work on before the first event.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { lamportsToDisplayNumber, type Lamports } from '../amount.js';
import { inSol } from '../rules/amounts.js';
import type { LossReason } from '../cluster/leases.js';
import { registerClusterMetrics, type ClusterCounts } from './cluster-metrics.js';
import { registerAlertMetrics } from './alert-metrics.js';
import { SIGNED_OPS, systemClock, type Clock, type SignedOp } from '../domain.js';
export { LEASE_LOSS_REASONS, type ClusterCounts } from './cluster-metrics.js';
import { createFleet, type Fleet, type FleetWallet, type WalletView } from './fleet.js';
import { statusClass } from './status-class.js';
import { LOOP_SAMPLE_MS } from './loop-lag.js';

/** How a plan ended, counted once when the daemon finishes it (open and blocked are not endings). */
export const PLAN_OUTCOMES = ['done', 'rejected', 'failed', 'dry'] as const;
export type PlanOutcome = (typeof PLAN_OUTCOMES)[number];
/** The states a step is counted in (anomalies have their own family). */
export const STEP_OUTCOMES = ['acknowledged', 'rejected', 'failed', 'unknown', 'skipped', 'deferred'] as const;
export type StepOutcome = (typeof STEP_OUTCOMES)[number];
const NOTIFICATION_OUTCOMES = ['sent', 'failed', 'expired', 'dropped'] as const;
export type NotificationOutcome = (typeof NOTIFICATION_OUTCOMES)[number];
/** `metrics.per_wallet`. */
type PerWalletSetting = 'auto' | boolean;

/** `auto` exports per-wallet series up to this many wallets, aggregates only beyond. */
const PER_WALLET_AUTO_LIMIT = 100;
/** autoclaim_top_pending_sol names this many wallets, whatever the fleet size. */
const TOP_PENDING_K = 10;

interface MetricsSetup {
  wallets: readonly FleetWallet[];
  /** Rule names, so each rule's plan series exist before its first plan. */
  rules: readonly string[];
  perWallet: PerWalletSetting;
  /** alerts.stale_after_intervals × the poll interval: no poll of any wallet for longer is news. */
  staleAfterMs: number;
  /** alerts.stale_after_intervals × a wallet's time between polls (it follows the fleet held); default staleAfterMs. */
  walletStaleAfterMs?: () => number;
}

export interface SigningPauseCounts {
  /** Signing paused for every wallet (the API key was refused). */
  all: boolean;
  /** Wallets paused one by one (their request was refused as invalid). */
  wallets: number;
}

export interface Metrics {
  readonly registry: Registry;
  /** The Content-Type of render()'s text. */
  readonly contentType: string;
  /** What the metrics know of every configured wallet (restored from the state file at start). */
  readonly fleet: Fleet;
  render(): Promise<string>;
  /** Whether the autoclaim_wallet_* families are exported under the current setup. */
  perWalletEnabled(): boolean;

  /** At start and after each reload: wallets, rules, per-wallet series or not, staleness. */
  configure(setup: MetricsSetup): void;
  /** A successful poll: counts it and records the wallet's amounts and last-success time. */
  pollOk(wallet: FleetWallet, summary: { pendingLamports: Lamports; lifetimeLamports: Lamports | null }, atMs: number): void;
  pollFailed(wallet: FleetWallet): void;
  planCreated(rule: string): void;
  planOutcome(rule: string, outcome: PlanOutcome): void;
  /** A step that reached a state worth counting. */
  step(kind: SignedOp, outcome: StepOutcome): void;
  /** A wallet's signer answered (SPEC §7): signed, refused or unanswered (with its code). */
  signature(backend: string, outcome: 'signed' | 'refused' | 'unanswered', code: string): void;
  /** SOL moved by an acknowledged claim, deposit or mint. */
  actionSol(kind: SignedOp, lamports: Lamports): void;
  /** Vault shares an acknowledged withdraw gave up, or tokens a burn did (10^-9 units): not SOL. */
  actionUnits(kind: SignedOp, symbol: string, units: Lamports): void;
  /** An answer that claimed more than could be true (e.g. claimed_sol above the pending seen). */
  anomaly(kind: SignedOp): void;
  unknownStepsOpen(count: number): void;
  /** Time spent waiting on the rate limiter (token bucket or Retry-After). */
  rateLimitWait(ms: number): void;
  /** One HTTP request; status undefined when no response came back. */
  request(op: string, status: number | undefined, seconds: number): void;
  configReload(outcome: 'ok' | 'invalid'): void;
  notification(outcome: NotificationOutcome): void;
  /** A lease stopped being this daemon's without it handing it back. */
  leaseLost(reason: LossReason): void;
}

interface MetricsOptions {
  /** Collect prom-client's process_* and nodejs_* metrics (default true). */
  processMetrics?: boolean;
  /** For autoclaim_build_info. */
  version?: string;
  /** The Node.js version for autoclaim_build_info; default this process's. */
  node?: string;
  /** Read at scrape time, for autoclaim_wallets_stale. */
  clock?: Clock;
  /** A wallet never polled successfully is stale counted from here; default the clock at creation. */
  startedAt?: number;
  /** Read at scrape time, for autoclaim_alerts_open. */
  alertsOpen?: () => ReadonlyMap<string, number>;
  /** Read at scrape time, for autoclaim_signing_paused. */
  signing?: () => SigningPauseCounts;
  /** Read at scrape time, for autoclaim_leases_held and autoclaim_cluster_daemons_live; undefined when the state is not shared. */
  cluster?: () => ClusterCounts | undefined;
  fleet?: Fleet;
}

const PREFIX = 'autoclaim_';
// API latency: most answers come in well under a second; the client's timeout caps the tail.
const REQUEST_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(opts: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  if (opts.processMetrics ?? true) {
    // Left unprefixed (process_cpu_seconds_total, nodejs_heap_size_used_bytes, ...) so stock
    // Node.js dashboards work unchanged. The loop's lag is sampled as /healthz samples it: at
    // prom-client's default (10 ms), those wake-ups were most of what an idle daemon spent.
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: LOOP_SAMPLE_MS });
  }
  const clock = opts.clock ?? systemClock;
  const startedAt = opts.startedAt ?? clock.now();
  const fleet = opts.fleet ?? createFleet();
  let staleAfterMs = 0;
  let walletStaleAfterMs = (): number => staleAfterMs;
  let perWallet = false;
  let walletNames = new Set<string>();

  new Gauge({
    name: `${PREFIX}build_info`,
    help: 'Always 1; the labels say which autoclaim and which Node.js are running.',
    labelNames: ['version', 'node'] as const,
    registers,
  }).set({ version: opts.version ?? 'unknown', node: opts.node ?? process.version }, 1);

  // ---- the fleet, aggregated: no wallet label, whatever the number of wallets
  const polls = new Counter({
    name: `${PREFIX}polls_total`,
    help: 'Wallet summary polls of all wallets, by outcome (ok | failed).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const walletsGauge = new Gauge({ name: `${PREFIX}wallets`, help: 'Wallets in the running config.', registers });
  const staleAfter = new Gauge({
    name: `${PREFIX}stale_after_seconds`,
    help: 'alerts.stale_after_intervals × the poll interval: a wallet without a successful poll for longer is stale.',
    registers,
  });
  new Gauge({
    name: `${PREFIX}wallets_stale`,
    help: "Wallets without a successful poll for more than alerts.stale_after_intervals × the wallet's time between polls: the poll interval, or longer when the fleet outgrows the rate budget (a wallet never polled well counts from the start).",
    registers,
    collect() {
      this.set(fleet.staleCount(clock.now(), walletStaleAfterMs(), startedAt));
    },
  });
  new Gauge({
    name: `${PREFIX}last_successful_poll_timestamp_seconds`,
    help: 'Unix time of the newest successful poll of any wallet, restored from the state file at start; 0 when none was ever recorded.',
    registers,
    collect() {
      const t = fleet.lastSuccessAt();
      this.set(t === undefined ? 0 : Math.floor(t / 1000));
    },
  });
  new Gauge({
    name: `${PREFIX}pending_sol_total`,
    help: 'Pending rewards of all wallets at their last successful poll, in SOL (display only).',
    registers,
    collect() {
      this.set(lamportsToDisplayNumber(fleet.pendingTotal()));
    },
  });
  new Gauge({
    name: `${PREFIX}lifetime_sol_total`,
    help: 'Lifetime rewards of all wallets at their last successful poll, in SOL (display only).',
    registers,
    collect() {
      this.set(lamportsToDisplayNumber(fleet.lifetimeTotal()));
    },
  });
  new Gauge({
    name: `${PREFIX}top_pending_sol`,
    help: `Pending rewards of the ${TOP_PENDING_K} wallets with the most, in SOL (bounded whatever the fleet size).`,
    labelNames: ['wallet'] as const,
    registers,
    collect() {
      this.reset();
      for (const w of fleet.topPending(TOP_PENDING_K)) this.set({ wallet: w.name }, lamportsToDisplayNumber(w.pendingLamports ?? 0n));
    },
  });

  // ---- one series per wallet, when per-wallet series are on
  const walletPolls = new Counter({
    name: `${PREFIX}wallet_polls_total`,
    help: 'Wallet summary polls by wallet and outcome (only with per-wallet metrics).',
    labelNames: ['wallet', 'outcome'] as const,
    registers,
  });
  const perWalletGauge = (name: string, help: string, value: (w: WalletView) => number | undefined) =>
    new Gauge({
      name: `${PREFIX}wallet_${name}`,
      help: `${help} (only with per-wallet metrics).`,
      labelNames: ['wallet'] as const,
      registers,
      collect() {
        this.reset();
        if (!perWallet) return;
        for (const w of fleet.wallets()) {
          const v = value(w);
          if (v !== undefined) this.set({ wallet: w.name }, v);
        }
      },
    });
  const sol = (l: Lamports | undefined) => (l === undefined ? undefined : lamportsToDisplayNumber(l));
  perWalletGauge('pending_sol', 'Pending rewards per wallet at its last successful poll, in SOL (display only)', (w) => sol(w.pendingLamports));
  perWalletGauge('lifetime_sol', 'Lifetime rewards per wallet at its last successful poll, in SOL (display only)', (w) => sol(w.lifetimeLamports));
  perWalletGauge('last_successful_poll_timestamp_seconds', 'Unix time of the last successful poll per wallet, restored from the state file at start', (w) =>
    w.lastOkAt === undefined ? undefined : Math.floor(w.lastOkAt / 1000),
  );

  // ---- plans, steps, money
  const plansCreated = new Counter({
    name: `${PREFIX}plans_created_total`,
    help: 'Plans recorded, by rule (dry-run plans included).',
    labelNames: ['rule'] as const,
    registers,
  });
  const planOutcomes = new Counter({
    name: `${PREFIX}plan_outcomes_total`,
    help: 'Plans finished, by rule and outcome: done | rejected (the action refused) | failed (the request refused as invalid) | dry.',
    labelNames: ['rule', 'outcome'] as const,
    registers,
  });
  const steps = new Counter({
    name: `${PREFIX}steps_total`,
    help: 'Plan steps by kind (claim | deposit | mint | withdraw | burn) and the state they reached.',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  const signatures = new Counter({ name: `${PREFIX}signatures_total`, help: "Answers of the wallets' signers, by backend, outcome (signed | refused | unanswered) and code (empty when signed).", labelNames: ['backend', 'outcome', 'code'] as const, registers });
  const actionSol = new Counter({ name: `${PREFIX}action_sol_total`, help: 'SOL in acknowledged actions, by action (claim | deposit | mint); display only.', labelNames: ['action'] as const, registers });
  // A withdraw gives up a vault's shares and a burn a token's units: added to the SOL counter they
  // read as SOL on every dashboard that sums it. By symbol: one unit per series.
  const actionUnits = new Counter({ name: `${PREFIX}action_units_total`, help: "Units given up by acknowledged withdraws (the vault's shares) and burns (the token's units), by action and symbol; not SOL; display only.", labelNames: ['action', 'symbol'] as const, registers });
  const anomalies = new Counter({ name: `${PREFIX}anomalies_total`, help: 'API answers that claimed more than could be true (a claim above the pending seen before it), by kind; the step was bounded.', labelNames: ['kind'] as const, registers });
  const unknownOpen = new Gauge({
    name: `${PREFIX}unknown_steps_open`,
    help: 'Steps in state unknown awaiting reconciliation or an operator (autoclaim actions resolve).',
    registers,
  });
  new Gauge({
    name: `${PREFIX}signing_paused`,
    help: 'Signing paused because the server refused a request as invalid: scope="all" 1 when every wallet is paused (API key refused), scope="wallet" the number of wallets paused.',
    labelNames: ['scope'] as const,
    registers,
    collect() {
      const p = opts.signing?.() ?? { all: false, wallets: 0 };
      this.set({ scope: 'all' }, p.all ? 1 : 0);
      this.set({ scope: 'wallet' }, p.wallets);
    },
  });

  // ---- the API, the limiter, the service around it
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
  const lastReloadOk = new Gauge({
    name: `${PREFIX}config_last_reload_successful`,
    help: '1 unless the last reload (SIGHUP) was refused; the previous config is running then.',
    registers,
  });
  const notifications = new Counter({
    name: `${PREFIX}notifications_total`,
    help: 'Webhook notifications by outcome: sent (delivered), failed (an attempt failed; retried), expired (undelivered at alerts.webhook.expire_after), dropped (a memory queue bound, or unsent at shutdown).',
    labelNames: ['outcome'] as const,
    registers,
  });

  const cluster = registerClusterMetrics(registers, opts.cluster);
  registerAlertMetrics(registers, opts.alertsOpen);
  for (const outcome of ['ok', 'failed'] as const) polls.inc({ outcome }, 0);
  for (const kind of SIGNED_OPS) {
    anomalies.inc({ kind }, 0);
    if (inSol(kind)) actionSol.inc({ action: kind }, 0);
    for (const outcome of STEP_OUTCOMES) steps.inc({ kind, outcome }, 0);
  }
  unknownOpen.set(0);
  waits.inc(0);
  waitSeconds.inc(0);
  // The poll-latency panel's series; other operations appear with their first request.
  requests.zero({ op: 'summary', status_class: '2xx' });
  for (const outcome of ['ok', 'invalid'] as const) reloads.inc({ outcome }, 0);
  lastReloadOk.set(1);
  for (const outcome of NOTIFICATION_OUTCOMES) notifications.inc({ outcome }, 0);

  return {
    registry,
    contentType: registry.contentType,
    fleet,
    render: () => registry.metrics(),
    perWalletEnabled: () => perWallet,
    configure(setup) {
      fleet.configure(setup.wallets);
      walletsGauge.set(setup.wallets.length);
      staleAfterMs = setup.staleAfterMs;
      walletStaleAfterMs = setup.walletStaleAfterMs ?? ((): number => staleAfterMs);
      staleAfter.set(Math.round(setup.staleAfterMs / 1000));
      for (const rule of setup.rules) {
        plansCreated.inc({ rule }, 0);
        for (const outcome of PLAN_OUTCOMES) planOutcomes.inc({ rule, outcome }, 0);
      }
      perWallet = setup.perWallet === true || (setup.perWallet === 'auto' && setup.wallets.length <= PER_WALLET_AUTO_LIMIT);
      const names = new Set(perWallet ? setup.wallets.map((w) => w.name) : []);
      for (const name of walletNames) {
        if (!names.has(name)) for (const outcome of ['ok', 'failed'] as const) walletPolls.remove({ wallet: name, outcome });
      }
      for (const name of names) for (const outcome of ['ok', 'failed'] as const) walletPolls.inc({ wallet: name, outcome }, 0);
      walletNames = names;
    },
    pollOk(wallet, summary, atMs) {
      polls.inc({ outcome: 'ok' });
      if (walletNames.has(wallet.name)) walletPolls.inc({ wallet: wallet.name, outcome: 'ok' });
      fleet.pollOk(wallet.address, summary, atMs);
    },
    pollFailed(wallet) {
      polls.inc({ outcome: 'failed' });
      if (walletNames.has(wallet.name)) walletPolls.inc({ wallet: wallet.name, outcome: 'failed' });
    },
    planCreated(rule) {
      plansCreated.inc({ rule });
    },
    planOutcome(rule, outcome) {
      planOutcomes.inc({ rule, outcome });
    },
    step(kind, outcome) {
      steps.inc({ kind, outcome });
    },
    signature(backend, outcome, code) {
      // Codes are a closed set per backend (SPEC §7's and each backend's): a bounded label.
      signatures.inc({ backend, outcome, code: /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'OTHER' });
    },
    actionSol(kind, lamports) {
      if (lamports > 0n) actionSol.inc({ action: kind }, lamportsToDisplayNumber(lamports));
    },
    actionUnits(kind, symbol, units) {
      if (units > 0n) actionUnits.inc({ action: kind, symbol }, lamportsToDisplayNumber(units));
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
      lastReloadOk.set(outcome === 'ok' ? 1 : 0);
    },
    notification(outcome) {
      notifications.inc({ outcome });
    },
    leaseLost(reason) {
      cluster.leaseLost(reason);
    },
  };
}
