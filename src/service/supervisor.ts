// Everything a long-running `run` has around the daemon: sd_notify (READY, WATCHDOG, RELOADING,
// STOPPING), the metrics and health listener, alert episodes and the optional webhook.
// None of it may stop the daemon: each part degrades to a log line.
import type { Clock } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import type { Daemon } from '../daemon.js';
import type { Runtime } from '../runtime.js';
import type { StepEvent } from '../worker/executor.js';
import { createAlertTracker, evaluateAlerts, reportAlerts } from './alerts.js';
import { startHealthServer, type HealthServer } from './health-server.js';
import { instrument, type Instruments } from './instrument.js';
import { createMetrics, type Metrics, type SigningPauseCounts } from './metrics.js';
import type { HealthReport } from './readiness.js';
import { createNotifier } from './notify.js';
import { createFailureWebhook, DEFAULT_WEBHOOK_EVENTS, type FailureWebhook } from './webhook-events.js';

export { webhookUrl } from './webhook-events.js';

export interface SupervisorOptions {
  env: NodeJS.ProcessEnv;
  clock: Clock;
  logger: Logger;
  redactor: Redactor;
  /** autoclaim's version, for autoclaim_build_info. */
  version?: string;
}

export class Supervisor {
  readonly metrics: Metrics;
  readonly instruments: Instruments;
  private readonly notifier;
  private readonly tracker = createAlertTracker();
  private readonly webhook: FailureWebhook | undefined;
  private readonly startedAt: number;
  private runtime: Runtime | undefined;
  private daemon: Daemon | undefined;
  private health: HealthServer | undefined;
  private stopWatchdog: () => void = () => {};
  private configValid = true;

  constructor(private readonly opts: SupervisorOptions) {
    this.startedAt = opts.clock.now();
    this.metrics = createMetrics({ version: opts.version, clock: opts.clock, startedAt: this.startedAt, signing: () => this.signingCounts() });
    this.instruments = instrument(this.metrics, {
      clock: opts.clock,
      endpoints: () => this.runtime?.config.api.endpoints ?? { claim: noEndpoint, deposit: noEndpoint, mint: noEndpoint, withdraw: noEndpoint, burn: noEndpoint },
    });
    this.notifier = createNotifier({ env: opts.env, logger: opts.logger });
    this.webhook = createFailureWebhook({
      env: opts.env,
      logger: opts.logger,
      redactor: opts.redactor,
      clock: opts.clock,
      events: () => this.daemon?.currentConfig.alerts.webhookEvents ?? DEFAULT_WEBHOOK_EVENTS,
      onOutcome: (o) => this.metrics.notification(o),
    });
  }

  /** Step outcomes: counted, and announced on the webhook when they matter to a human. */
  onStep = (e: StepEvent): void => {
    this.instruments.onStep(e);
    this.webhook?.onStep(e);
  };

  /** After each cycle: limiter waits, unknown steps, staleness and unknown-step alerts. */
  onCycleDone = (at: number): void => {
    const { runtime, daemon } = this;
    if (runtime === undefined || daemon === undefined) return;
    try {
      this.instruments.sampleLimiter(runtime.limiter.waitedMs);
      const unknown = runtime.store.unknownSteps();
      this.metrics.unknownStepsOpen(unknown.length);
      const config = daemon.currentConfig;
      const transitions = evaluateAlerts(this.tracker, {
        now: at,
        intervalMs: daemon.pollIntervalMs(),
        staleAfterIntervals: config.alerts.staleAfterIntervals,
        unknownStepAfterMs: config.alerts.unknownStepAfterMs,
        // The fleet view (the state file at start, then every poll): the same last successes as
        // autoclaim_wallets_stale, and no query per wallet per cycle.
        wallets: [...this.metrics.fleet.wallets()].map((w) => ({ name: w.name, lastOkAt: w.lastOkAt, since: this.startedAt })),
        unknownSteps: unknown.map((s) => ({ id: s.id, plan: s.planId, wallet: runtime.store.getPlan(s.planId)?.wallet ?? '?', kind: s.kind, since: s.updatedAt })),
      });
      reportAlerts(transitions, { logger: this.opts.logger, webhook: this.webhook?.alerts });
    } catch (err) {
      this.opts.logger.warn({ event: 'alerts.failed', err }, 'could not evaluate alerts this cycle');
    }
  };

  /** Once the daemon runs: the health listener, READY=1 and the watchdog. */
  async start(runtime: Runtime, daemon: Daemon): Promise<void> {
    this.runtime = runtime;
    this.daemon = daemon;
    // Before the first poll comes back (the first cycle is already under way, awaiting the API).
    this.configureMetrics();
    const listen = runtime.config.metrics.listen;
    if (listen !== undefined) {
      this.health = await startHealthServer({
        listen,
        metrics: this.metrics,
        logger: this.opts.logger,
        health: () => this.healthReport(runtime, daemon),
      });
    }
    this.notifier.ready(`watching ${daemon.currentConfig.wallets.length} wallet(s)`);
    // Pings come from a timer on the event loop: a blocked loop, or cycles that stopped
    // completing, withhold them and systemd restarts the service.
    this.stopWatchdog = this.notifier.startWatchdog(() => {
      const limit = 3 * daemon.pollIntervalMs() + 60_000;
      const last = daemon.lastCycleAt ?? this.startedAt;
      return this.opts.clock.now() - last < limit;
    });
  }

  reloading(): void {
    this.notifier.reloading();
  }

  reloaded(ok: boolean): void {
    if (!ok) this.webhook?.configInvalid(this.daemon?.lastConfigIssues ?? ['see config.invalid in the log']);
    this.configValid = ok;
    this.metrics.configReload(ok ? 'ok' : 'invalid');
    if (ok) this.configureMetrics();
    this.notifier.ready(ok ? 'config reloaded' : 'config invalid; running the previous one');
  }

  /**
   * The wallets, rules and thresholds the metrics describe, and what the state file remembers:
   * last successes and unknown steps survive a restart, even one with the API down.
   */
  private configureMetrics(): void {
    const { runtime, daemon } = this;
    if (runtime === undefined || daemon === undefined) return;
    try {
      const config = daemon.currentConfig;
      this.metrics.configure({
        wallets: config.wallets,
        rules: config.rules.map((r) => r.name),
        perWallet: config.metrics.perWallet,
        staleAfterMs: config.alerts.staleAfterIntervals * daemon.pollIntervalMs(),
      });
      this.metrics.fleet.restore(runtime.store.walletStates());
      this.metrics.unknownStepsOpen(runtime.store.unknownSteps().length);
    } catch (err) {
      this.opts.logger.warn({ event: 'metrics.setup_failed', err }, 'could not read the state file for the metrics; they fill in as polls come back');
    }
  }

  /** For /readyz: gathered on each request, the write probe included (no fsync, microseconds). */
  private healthReport(runtime: Runtime, daemon: Daemon): HealthReport {
    let dbError: string | undefined;
    try {
      runtime.store.probeWrite();
    } catch (err) {
      dbError = this.opts.redactor.redact(err instanceof Error ? err.message : String(err));
    }
    const pauses = daemon.signingPauses();
    return {
      now: this.opts.clock.now(),
      lastSuccessAt: this.metrics.fleet.lastSuccessAt(),
      startedAt: this.startedAt,
      pollIntervalMs: daemon.pollIntervalMs(),
      staleAfterIntervals: daemon.currentConfig.alerts.staleAfterIntervals,
      dbError,
      signing: { all: pauses.all, wallets: pauses.wallets },
      configValid: this.configValid,
    };
  }

  private signingCounts(): SigningPauseCounts {
    const pauses = this.daemon?.signingPauses();
    return { all: pauses?.all !== undefined, wallets: pauses?.wallets.size ?? 0 };
  }

  async stop(): Promise<void> {
    this.notifier.stopping();
    this.stopWatchdog();
    await this.health?.close();
    await this.webhook?.close(5_000);
    await this.notifier.close();
  }
}

const noEndpoint = { method: 'POST' as const, path: '\0', message: '' };
