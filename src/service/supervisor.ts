// Everything a long-running `run` has around the daemon: sd_notify (READY, WATCHDOG, RELOADING,
// STOPPING), the metrics and health listener, alert episodes and the optional webhook. It hears the
// daemon through the process's events (events.ts) and asks it only for what it reports on.
// None of it may stop the daemon: each part degrades to a log line.
// The service/ folder: notify.ts (sd_notify), health-server.ts with readiness.ts and loop-lag.ts
// (/healthz, /readyz), metrics.ts and instrument.ts (Prometheus, fed by the events), fleet.ts (the
// per-wallet view they all read), alerts.ts (stale wallets, old unknown steps), webhook.ts and
// webhook-events.ts (what is posted, failures first, signed).
// With shared state (state.url) it also hears the lease manager (cluster-signals.ts): the leases
// held and the live daemons (metrics, readiness), lease losses, and the wallets this daemon answers
// for (the fleet's scope), so no daemon reports another's wallets as stale.
import type { Lamports } from '../amount.js';
import { hostname } from 'node:os';
import { AutoclaimError } from '../errors.js';
import type { Clock } from '../domain.js';
import type { AutoclaimEventMap, AutoclaimEvents } from '../events.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import type { Daemon } from '../daemon.js';
import type { Runtime } from '../runtime.js';
import type { PlanWithSteps, StepRow } from '../store/rows.js';
import { createAlertTracker, evaluateAlerts, forgetWalletsNotHere, reportAlerts, signerDownTooLong, type AlertInputs } from './alerts.js';
import { clusterConditions, clusterCounts, heldScope, watchLeases } from './cluster-signals.js';
import { createFleet } from './fleet.js';
import { startHealthServer, type HealthServer } from './health-server.js';
import { instrument, type Instruments } from './instrument.js';
import { createMetrics, type ClusterCounts, type Metrics, type SigningPauseCounts } from './metrics.js';
import type { HealthReport } from './readiness.js';
import { createNotifier, type Notifier } from './notify.js';
import { runbookBase } from './runbook.js';
import { createFailureWebhook, type FailureWebhook } from './webhook-events.js';
import { heldForOperator } from '../store/plan-status.js';

export { webhookUrl } from './webhook-events.js';

interface SupervisorOptions {
  env: NodeJS.ProcessEnv;
  /** sd_notify; by default one of its own from `env`. `run` makes it before the runtime opens, which may extend the start with it. */
  notifier?: Notifier;
  clock: Clock;
  logger: Logger;
  redactor: Redactor;
  /** autoclaim's version, for autoclaim_build_info. */
  version?: string;
  /** The process's event channel, the one the runtime and the daemon were given. */
  events: Pick<AutoclaimEvents, 'on'>;
  runtime: Runtime;
  daemon: Daemon;
}

export class Supervisor {
  readonly metrics: Metrics;
  private readonly instruments: Instruments;
  private readonly notifier;
  private readonly tracker = createAlertTracker();
  /** Made at start; made or its channels replaced by an accepted reload (reloadChannels). */
  private webhook: FailureWebhook | undefined;
  private readonly startedAt: number;
  private readonly runtime: Runtime;
  private readonly daemon: Daemon;
  private readonly unsubscribe: Array<() => void>;
  private health: HealthServer | undefined;
  private stopWatchdog: () => void = () => {};
  private configValid = true;
  /** The unknown steps as last read: alerts are still evaluated while the database cannot be read. */
  private lastUnknown: Array<{ step: StepRow; plan: PlanWithSteps | undefined }> = [];
  /** Alerts are evaluated on this timer too, so a wallet goes stale even when no cycle completes. */
  private alertTimer: NodeJS.Timeout | undefined;
  /** Wallets (by name) whose last poll was refused for its epoch, with why: the epoch_refused alert. */
  private readonly epochRefused = new Map<string, string>();
  /** Wallets (by name) whose signer has not answered since `since`, with what it said: the signer_unavailable alert. */
  private readonly signerDown = new Map<string, { backend: string; code: string; detail: string; since: number }>();
  /** In a cluster, the addresses whose lease this daemon holds (asked at each read); undefined alone on its state. */
  private readonly scope: (() => ReadonlySet<string>) | undefined;
  /** Per wallet: since when no claim was applied (or first polled here), the pending then, and whether it has grown since. */
  private readonly claimWatch = new Map<string, { since: number; pending: Lamports; grew: boolean }>();

  /**
   * Built once the runtime is open and the daemon made, before the daemon starts: it subscribes to
   * the events then, so the metrics hear the first poll. Throws KeyError for a webhook secret
   * that is set but too short (the config check has refused it already).
   */
  constructor(private readonly opts: SupervisorOptions) {
    const { runtime, daemon, events } = opts;
    this.runtime = runtime;
    this.daemon = daemon;
    this.startedAt = opts.clock.now();
    const manager = runtime.cluster?.manager;
    this.scope = manager === undefined ? undefined : heldScope(manager);
    this.metrics = createMetrics({
      version: opts.version,
      clock: opts.clock,
      startedAt: this.startedAt,
      signing: () => this.signingCounts(),
      cluster: () => this.clusterCounts(),
      alertsOpen: () => this.tracker.openKinds(),
      fleet: createFleet({ scope: this.scope }),
    });
    // Requests are labelled by the endpoints the client was opened with.
    this.instruments = instrument(this.metrics, events, { endpoints: () => runtime.config.api.endpoints });
    this.notifier = opts.notifier ?? createNotifier({ env: opts.env, logger: opts.logger });
    this.webhook = this.createWebhook();
    this.unsubscribe = [
      // Step outcomes are counted (instrument) and announced when they matter to a human.
      events.on('step:outcome', (e) => this.webhook?.onStep(e)),
      events.on('cycle:done', ({ at }) => void this.evaluate(at, true)),
      // Open from a refused epoch until the wallet's next good poll (another failure leaves it open).
      events.on('poll:failed', ({ wallet, error }) => {
        if (error instanceof AutoclaimError && error.code === 'INVALID_EPOCH') this.epochRefused.set(wallet.name, error.message);
      }),
      events.on('poll:ok', ({ wallet, summary, at }) => {
        this.epochRefused.delete(wallet.name);
        const watch = this.claimWatch.get(wallet.name);
        if (watch === undefined) this.claimWatch.set(wallet.name, { since: at, pending: summary.pendingLamports, grew: false });
        else watch.grew = summary.pendingLamports > watch.pending;
      }),
      // An applied claim starts the wallet's watch afresh at its next poll (alerts.unclaimed_after).
      events.on('step:outcome', (e) => {
        if (e.kind === 'claim' && e.state === 'acknowledged') this.claimWatch.delete(e.wallet);
      }),
      // Open from a signer that did not answer until it answers again (signs, or refuses: it judged).
      events.on('signer:answered', ({ wallet, backend, outcome, code, detail }) => {
        if (outcome !== 'unanswered') this.signerDown.delete(wallet);
        else {
          const since = this.signerDown.get(wallet)?.since ?? opts.clock.now();
          this.signerDown.set(wallet, { backend, code: code ?? '', detail: this.opts.redactor.redact(detail ?? ''), since });
        }
      }),
      events.on('config:reloading', () => this.notifier.reloading()),
      events.on('config:reloaded', (r) => this.reloaded(r)),
      ...(manager === undefined ? [] : watchLeases(manager, { metrics: this.metrics, store: runtime.store, logger: opts.logger })),
    ];
  }

  /**
   * The webhook and alerts.channels as the running config has them; undefined when neither is set.
   * The webhook's URL, secret and settings are read here only (at start); channels again at each
   * accepted reload (reloaded()).
   */
  private createWebhook(): FailureWebhook | undefined {
    const { opts, daemon, runtime } = this;
    const alerts = daemon.currentConfig.alerts;
    return createFailureWebhook({
      env: opts.env,
      logger: opts.logger,
      redactor: opts.redactor,
      // Failure notices wait in the state database until delivered (shared with other daemons on PostgreSQL).
      store: runtime.store,
      settings: { expireMs: alerts.webhookExpireMs, timeoutMs: alerts.webhookTimeoutMs, allowLinkLocal: alerts.webhookAllowLinkLocal },
      clock: opts.clock,
      events: () => daemon.currentConfig.alerts.webhookEvents,
      minSeverity: () => daemon.currentConfig.alerts.webhookMinSeverity,
      runbookBase: () => runbookBase(daemon.currentConfig.alerts.runbookBaseUrl),
      channels: alerts.channels,
      host: hostname(),
      instance: runtime.cluster?.manager.id ?? `${hostname()}/${process.pid}`,
      onOutcome: (o) => this.metrics.notification(o),
    });
  }

  /**
   * An accepted reload's alerts.channels, at once: added, removed and changed channels (a URL, a
   * secret, a min_severity). Only after the reload was accepted: a refused one keeps the running
   * channels, and nothing of its config (its secrets, its destinations) is ever used.
   */
  private reloadChannels(): void {
    const channels = this.daemon.currentConfig.alerts.channels;
    try {
      if (this.webhook === undefined) {
        if (channels.length > 0) this.webhook = this.createWebhook();
        if (this.webhook !== undefined) this.opts.logger.info({ event: 'notify.channels_reloaded', started: channels.map((c) => c.name), stopped: [] }, 'notification channels started');
        return;
      }
      const change = this.webhook.useChannels(channels);
      if (change.started.length + change.stopped.length > 0) {
        this.opts.logger.info({ event: 'notify.channels_reloaded', ...change }, `notification channels reloaded: ${change.started.length} started, ${change.stopped.length} stopped`);
      }
    } catch (err) {
      this.opts.logger.warn({ event: 'notify.webhook_failed', err }, 'the reloaded notification channels could not be set up; the running ones stay');
    }
  }

  /** The counts, and any config conflict, for readiness (state.url only). */
  private clusterHealth(): HealthReport['cluster'] {
    const counts = this.clusterCounts();
    const manager = this.runtime.cluster?.manager;
    const conflict = manager?.configConflict();
    const schema = manager?.schemaRefusal();
    return counts === undefined ? undefined : { ...counts, conflict, schemaNewer: schema === undefined ? undefined : { reason: schema.reason } };
  }

  /** The lease manager's counts (state.url only). */
  private clusterCounts(): ClusterCounts | undefined {
    const manager = this.runtime.cluster?.manager;
    return manager === undefined ? undefined : clusterCounts(manager);
  }

  /**
   * After each cycle, and on a timer whatever the cycles do: limiter waits (after a cycle), unknown
   * steps, staleness, unknown-step and state-unreachable alerts. A state database that cannot be
   * read (or is unreachable) leaves the unknown steps as last read: the other alerts still fire.
   */
  private async evaluate(at: number, afterCycle: boolean): Promise<void> {
    const { runtime, daemon } = this;
    try {
      if (afterCycle) this.instruments.sampleLimiter(runtime.limiter.waitedMs);
      const reach = runtime.cluster?.reachability.state();
      if (reach === undefined || reach.reachable) {
        try {
          this.lastUnknown = await this.ownUnknownSteps();
          this.metrics.unknownStepsOpen(this.lastUnknown.length);
        } catch (err) {
          this.opts.logger.warn({ event: 'alerts.failed', err }, 'could not read the unknown steps; alerting on those last read');
        }
      }
      const unknown = this.lastUnknown;
      const config = daemon.currentConfig;
      // A wallet's epoch refusal and claim watch end only at its next poll here: one taken out by a
      // reload (or moved to another daemon) is never polled here again, and its alert stayed open.
      // The watch is read (and so pruned) only when its alert is on: it holds every wallet polled.
      const held = this.scope?.();
      forgetWalletsNotHere(this.epochRefused, config.wallets, held);
      const unclaimedAfterMs = config.alerts.unclaimedAfterMs;
      if (unclaimedAfterMs !== undefined) forgetWalletsNotHere(this.claimWatch, config.wallets, held);
      const intervalMs = daemon.walletPollGapMs();
      const staleAfterIntervals = config.alerts.staleAfterIntervals;
      // The fleet view (the state file at start, then every poll): the same last successes as
      // autoclaim_wallets_stale, and no query per wallet per cycle. Only the wallets stale now or
      // with an episode open: the fresh rest would change nothing, and reading every wallet at
      // every cycle made the cycle's cost grow with the fleet.
      const watched = this.metrics.fleet.staleOrNamed(at, staleAfterIntervals * intervalMs, this.startedAt, this.tracker.openOf('wallet_stale'));
      const transitions = evaluateAlerts(this.tracker, {
        now: at,
        intervalMs,
        staleAfterIntervals,
        unknownStepAfterMs: config.alerts.unknownStepAfterMs,
        wallets: watched.map((w) => ({ name: w.name, lastOkAt: w.lastOkAt, since: this.startedAt })),
        unknownSteps: unknown.map(({ step: s, plan }) => ({
          id: s.id,
          plan: s.planId,
          wallet: plan?.wallet ?? '?',
          kind: s.kind,
          since: s.updatedAt,
          held: heldForOperator(s),
          symbol: s.symbol ?? undefined,
          amountLamports: s.amountLamports ?? undefined,
        })),
        stateUnreachable: reach === undefined || reach.reachable ? undefined : { since: reach.since, error: this.opts.redactor.redact(reach.error) },
        claimsInDoubt: daemon.claimsInDoubt(),
        cluster: runtime.cluster === undefined ? undefined : clusterConditions(runtime.cluster.manager),
        epochRefused: [...this.epochRefused].map(([name, detail]) => ({ name, detail })),
        signerUnavailable: this.signersDown(config),
        unclaimedAfterMs,
        // Read only when the alert is on (it is off by default): one entry per wallet polled.
        claimWatch: unclaimedAfterMs === undefined ? undefined : [...this.claimWatch].map(([wallet, w]) => ({ wallet, since: w.since, grew: w.grew })),
      });
      reportAlerts(transitions, { logger: this.opts.logger, webhook: this.webhook?.alerts });
    } catch (err) {
      this.opts.logger.warn({ event: 'alerts.failed', err }, 'could not evaluate alerts this cycle');
    }
  }

  /** The wallets this daemon works whose signer does not answer (alerts.ts forgetWalletsNotHere). */
  private signersDown(config: { wallets: ReadonlyArray<{ name: string; address: string }> }): NonNullable<AlertInputs['signerUnavailable']> {
    if (this.signerDown.size === 0) return [];
    forgetWalletsNotHere(this.signerDown, config.wallets, this.scope?.());
    return [...this.signerDown].map(([wallet, d]) => ({ wallet, ...d }));
  }

  /**
   * The unknown steps with their plans; with shared state only those of the wallets this daemon
   * holds, so each is counted and alerted on by the one daemon that reconciles it (the database
   * holds every daemon's).
   */
  private async ownUnknownSteps(): Promise<Array<{ step: StepRow; plan: PlanWithSteps | undefined }>> {
    const { store, cluster } = this.runtime;
    const held = cluster === undefined ? undefined : new Set(cluster.manager.held());
    const steps = await Promise.all((await store.unknownSteps()).map(async (step) => ({ step, plan: await store.getPlan(step.planId) })));
    return held === undefined ? steps : steps.filter(({ plan }) => plan !== undefined && held.has(plan.address));
  }

  /** Once the daemon runs: the health listener, READY=1 and the watchdog. */
  async start(): Promise<void> {
    const { runtime, daemon } = this;
    // Before the first poll comes back (the first cycle is already under way, awaiting the API).
    await this.configureMetrics();
    const listen = runtime.config.metrics.listen;
    if (listen !== undefined) {
      this.health = await startHealthServer({
        listen,
        metrics: this.metrics,
        logger: this.opts.logger,
        redact: (text) => this.opts.redactor.redact(text),
        health: () => this.healthReport(runtime, daemon),
      });
    }
    this.notifier.ready(`watching ${daemon.currentConfig.wallets.length} wallet(s)`);
    // Pings come from a timer on the event loop: a blocked loop, or cycles that stopped
    // completing, withhold them and systemd restarts the service.
    const every = Math.min(60_000, Math.max(5_000, daemon.pollIntervalMs()));
    this.alertTimer = setInterval(() => void this.evaluate(this.opts.clock.now(), false), every);
    this.alertTimer.unref();
    this.stopWatchdog = this.notifier.startWatchdog(() => {
      const limit = 3 * daemon.pollIntervalMs() + 60_000;
      const last = daemon.lastCycleAt ?? this.startedAt;
      return this.opts.clock.now() - last < limit;
    });
  }

  private reloaded(r: AutoclaimEventMap['config:reloaded']): void {
    const { ok } = r;
    if (!r.ok) this.webhook?.configInvalid(r.issues);
    else this.reloadChannels();
    this.configValid = ok;
    this.metrics.configReload(ok ? 'ok' : 'invalid');
    if (ok) void this.configureMetrics();
    this.notifier.ready(ok ? 'config reloaded' : 'config invalid; running the previous one');
  }

  /**
   * The wallets, rules and thresholds the metrics describe, and what the state file remembers:
   * last successes and unknown steps survive a restart, even one with the API down.
   */
  private async configureMetrics(): Promise<void> {
    const { runtime, daemon } = this;
    try {
      const config = daemon.currentConfig;
      this.metrics.configure({
        wallets: config.wallets,
        rules: config.rules.map((r) => r.name),
        perWallet: config.metrics.perWallet,
        staleAfterMs: config.alerts.staleAfterIntervals * daemon.pollIntervalMs(),
        walletStaleAfterMs: () => config.alerts.staleAfterIntervals * daemon.walletPollGapMs(),
      });
      this.metrics.fleet.restore(await runtime.store.walletStates());
      this.metrics.unknownStepsOpen((await this.ownUnknownSteps()).length);
    } catch (err) {
      this.opts.logger.warn({ event: 'metrics.setup_failed', err }, 'could not read the state file for the metrics; they fill in as polls come back');
    }
  }

  /** For /readyz: gathered on each request, the write probe included (no fsync, microseconds). */
  private async healthReport(runtime: Runtime, daemon: Daemon): Promise<HealthReport> {
    let dbError: string | undefined;
    const reach = runtime.cluster?.reachability.state();
    try {
      // Known unreachable: said at once, not after a probe's deadline.
      if (reach !== undefined && !reach.reachable) throw new Error(`unreachable since ${new Date(reach.since).toISOString()}: ${reach.error}`);
      await runtime.store.probeWrite();
    } catch (err) {
      dbError = this.opts.redactor.redact(err instanceof Error ? err.message : String(err));
    }
    const pauses = daemon.signingPauses();
    const now = this.opts.clock.now();
    const gapMs = daemon.walletPollGapMs();
    return {
      now,
      lastSuccessAt: this.metrics.fleet.lastSuccessAt(),
      startedAt: this.startedAt,
      pollIntervalMs: daemon.pollIntervalMs(),
      staleAfterIntervals: daemon.currentConfig.alerts.staleAfterIntervals,
      dbError,
      // A database that takes the probe's write but not the rule ids' read is as unfit: no turn decides.
      dbReadError: daemon.ruleIdsUnread(),
      signing: { all: pauses.all, wallets: pauses.wallets },
      signersDown: this.signersDown(daemon.currentConfig).filter((d) => signerDownTooLong(d.since, now, gapMs)),
      configValid: this.configValid,
      cluster: this.clusterHealth(),
    };
  }

  private signingCounts(): SigningPauseCounts {
    const pauses = this.daemon.signingPauses();
    return { all: pauses.all !== undefined, wallets: pauses.wallets.size };
  }

  async stop(): Promise<void> {
    clearInterval(this.alertTimer);
    for (const off of this.unsubscribe.splice(0)) off();
    this.instruments.close();
    this.notifier.stopping();
    this.stopWatchdog();
    await this.health?.close();
    await this.webhook?.close(5_000);
    await this.notifier.close();
  }
}
