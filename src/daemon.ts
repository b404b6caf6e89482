// Wires the parts: schedule → poll → decide → plan → sign → send → record. start, reload, stop.
import type { AppConfig, Clock, PlanStatus, WalletConfig } from './domain.js';
import { formatIssue } from './errors.js';
import { createEvents, type AutoclaimEvents } from './events.js';
import { loadCheckedConfig, type Runtime, type RuntimeOptions } from './runtime.js';
import { PollScheduler } from './scheduler/scheduler.js';
import { lowestPendingThreshold, pollBudget } from './scheduler/planner.js';
import { AccrualPlanner } from './scheduler/priority.js';
import { PlanExecutor, type SigningPause } from './executor/executor.js';
import { createDecisionClock } from './executor/decision-clock.js';
import { ClockSkewWatch } from './executor/clock-skew.js';
import { ClaimDoubtWatch, type DoubtEpisode } from './executor/claim-doubt.js';
import type { Failpoint } from './executor/failpoints.js';
import type { WalletSigner } from './executor/ports.js';
import { swapSigners } from './keys/backends/index.js';
import { runWalletCycle, type CycleDeps, type WalletCycleResult } from './executor/wallet-cycle.js';
import { epochsExempt } from './executor/epoch-check.js';
import { carryRuleIds } from './rules/rule-ids.js';
import { ConfigError } from './errors.js';
import { ClusterWork } from './cluster/work.js';
import { recoverInFlight } from './executor/recovery.js';
import { nextCronTimes } from './config/index.js';

/** What the runtime was opened with (the daemon reloads the config the same way), and more. */
interface DaemonOptions extends Omit<RuntimeOptions, 'lock' | 'events'> {
  runtime: Runtime;
  dry: boolean;
  failpoint: Failpoint;
  /** Parallel wallet turns. */
  concurrency?: number;
  /**
   * The process's event channel (the one the runtime's client was given): polls, plans, step
   * outcomes and finished cycles go out on it; the daemon itself listens to `poll:ok` (the
   * planner) and `cycle:done`. A channel of its own when absent.
   */
  events?: AutoclaimEvents;
}

interface OnceReport {
  wallets: number;
  polled: number;
  plans: number;
  /** Plans that ended rejected (the action refused) or failed (the request refused as invalid). */
  failed: number;
  unknown: number;
  /** Plans left open: a step deferred (429, not sent) to be retried, freshly signed, next time. */
  pending: number;
  /** Wallet turns that threw (a bug or the state database failing); logged as wallet.failed. */
  crashed: number;
}

const DEFAULT_CONCURRENCY = 16;

/**
 * Beyond this many wallets `poll.ok` is logged at debug: a line per poll of a large fleet is log
 * volume (and CPU) that says little the state file does not keep (`autoclaim status`); failed
 * polls, decisions and actions are logged as ever.
 */
const POLL_OK_AT_INFO_UP_TO = 1000;

function pollOkLevel(wallets: number): 'info' | 'debug' {
  return wallets > POLL_OK_AT_INFO_UP_TO ? 'debug' : 'info';
}

export class Daemon {
  /** Swapped whole by a reload; every part reads it through `configRef` at each use. */
  private config: AppConfig;
  private readonly configRef = (): AppConfig => this.config;
  /** By name; a cycle over 10,000 wallets must not scan the list once per wallet. */
  private walletsByName: Map<string, WalletConfig>;
  private readonly executor: PlanExecutor;
  /** Built once: a wallet's turn needs nothing that is not here or read through `config`. */
  private readonly cycle: CycleDeps;
  private readonly events: AutoclaimEvents;
  /** Cooldowns, 24 h windows and claim ages are judged by this: an NTP step cannot move it. */
  private readonly decisionClock: Clock;
  private readonly clockSkew = new ClockSkewWatch();
  private readonly claimDoubt = new ClaimDoubtWatch();
  /**
   * When the fleet outgrows an interval's rate budget, polls go first to the wallets projected to
   * cross a rule's threshold soon (every wallet still at least every 5 intervals). Within budget
   * it changes nothing: every wallet is polled every tick.
   */
  private readonly planner = new AccrualPlanner({ threshold: (w) => lowestPendingThreshold(w, this.config.rules) });
  private scheduler: PollScheduler | undefined;
  /** With shared state (state.url): the wallets this daemon holds leases on are the ones it works. */
  private readonly cluster: ClusterWork | undefined;
  lastCycleAt: number | undefined;
  /** Rule ids settled against the journal (rules/rule-ids.ts): every turn waits for it before deciding. */
  private ruleIdsSettled: Promise<void> = Promise.resolve();

  constructor(private readonly opts: DaemonOptions) {
    const { runtime, clock, logger, failpoint } = opts;
    this.decisionClock = createDecisionClock(clock);
    this.config = runtime.config;
    this.walletsByName = byName(this.config.wallets);
    // Subscribed before anyone else can be: the planner hears a poll before the metrics do, and
    // lastCycleAt is current before the supervisor's alerts read it.
    this.events = opts.events ?? createEvents({ logger });
    this.events.on('poll:ok', ({ wallet, summary }) => this.planner.observe(wallet, summary, clock.monotonic()));
    this.events.on('cycle:done', ({ at }) => {
      this.lastCycleAt = at;
    });
    const shared = { config: this.configRef, clock, logger, failpoint, events: this.events };
    this.executor = new PlanExecutor({
      ...shared,
      store: runtime.store,
      api: runtime.client,
      signers: runtime.signers,
      elapsedClock: this.decisionClock,
      stillHolds: runtime.cluster === undefined ? undefined : (address) => this.cluster?.holds(address) ?? false,
      // The clock checked against the database's at every lease round: out of bounds, nothing is signed.
      signingGate: runtime.cluster === undefined ? undefined : () => this.clockGate(),
    });
    this.cycle = {
      ...shared,
      api: runtime.client,
      store: runtime.store,
      executor: this.executor,
      decisionClock: this.decisionClock,
      clockSkew: this.clockSkew,
      claimDoubt: this.claimDoubt,
      dry: opts.dry,
      pollOkLevel: pollOkLevel(this.config.wallets.length),
      epochsExempt: () => epochsExempt(this.config, opts.env),
    };
    if (runtime.cluster !== undefined) {
      this.cluster = new ClusterWork(runtime.cluster, { store: runtime.store, clock, logger, inFlight: () => this.executor.inFlight() });
      this.cluster.configure(this.config);
    }
  }

  private clockGate(): SigningPause | undefined {
    const refusal = this.cluster?.signingGate();
    return refusal === undefined ? undefined : { scope: 'all', reason: `clock: ${refusal.reason}`, since: refusal.since };
  }

  /** The wallets this daemon works now: all of them, or with shared state those it holds leases on. */
  private workable(): readonly WalletConfig[] {
    return this.cluster === undefined ? this.config.wallets : this.cluster.mine(this.config.wallets);
  }

  get currentConfig(): AppConfig {
    return this.config;
  }

  /** Where signing stands: paused for every wallet, or for some (readiness and metrics). */
  signingPauses(): ReturnType<PlanExecutor['pauses']> {
    return this.executor.pauses();
  }

  /**
   * Marks steps left in flight by a crash as unknown; logs each so an operator sees it. With shared
   * state, never all of them (another daemon's may be in flight right now): a wallet's are
   * recovered when its lease is taken (cluster/work.ts).
   */
  async recover(): Promise<void> {
    this.settleRuleIds();
    await this.ruleIdsSettled;
    if (this.cluster !== undefined) return;
    const { runtime, clock, logger } = this.opts;
    await recoverInFlight({ store: runtime.store, clock, logger });
  }

  /** The wallets whose claims are held as "claim in doubt" now, with since when (alerts); with shared state, those it holds. */
  claimsInDoubt(): DoubtEpisode[] {
    const open = this.claimDoubt.open();
    return this.cluster === undefined ? open : open.filter((e) => this.cluster?.holds(e.address) === true);
  }

  /** Runs one recorded plan's remaining steps now (a one-off `send`); call recover() first. */
  async runPlan(planId: number): Promise<PlanStatus> {
    return this.executor.execute(planId);
  }

  async runWallet(name: string): Promise<WalletCycleResult | undefined> {
    const wallet = this.walletsByName.get(name);
    if (wallet === undefined) return undefined;
    await this.ruleIdsSettled;
    if (this.cluster === undefined) return runWalletCycle(this.cycle, wallet);
    if (!this.cluster.holds(wallet.address)) return undefined;
    return this.cluster.run(wallet.address, () => runWalletCycle(this.cycle, wallet));
  }

  /** One poll → decide → act cycle for every wallet, as fast as the rate budget allows. */
  async once(): Promise<OnceReport> {
    await this.recover();
    // With shared state: one round of the lease split (its share, or every wallet when alone), then
    // those wallets; runtime.close() hands them back.
    await this.cluster?.join(false);
    const mine = this.workable();
    const wallets = mine.length;
    this.opts.logger.info({ event: 'once.started', wallets, poll_ok: pollOkLevel(wallets) }, `one cycle over ${wallets} wallet(s)`);
    const report: OnceReport = { wallets, polled: 0, plans: 0, failed: 0, unknown: 0, pending: 0, crashed: 0 };
    const tally = (r: WalletCycleResult | undefined): void => {
      if (r === undefined) return;
      if (r.polled) report.polled++;
      report.plans += r.plans.length;
      for (const s of r.statuses) {
        if (s === 'failed' || s === 'rejected') report.failed++;
        else if (s === 'blocked') report.unknown++;
        else if (s === 'open') report.pending++;
      }
    };
    // One wallet's failure must not cost the others their turn.
    const turn = async (name: string) => {
      try {
        tally(await this.runWallet(name));
      } catch (err) {
        report.crashed++;
        this.opts.logger.error({ event: 'wallet.failed', wallet: name, err }, 'wallet turn failed unexpectedly');
      }
    };
    // `concurrency` lanes, each taking the next wallet when its last is done: nothing is held per
    // wallet beyond its turn (a promise and a result for each of 10,000 wallets, made up front and
    // kept to the end, were ~1 KB a wallet for the garbage collector to copy and promote).
    let next = 0;
    const lane = async (): Promise<void> => {
      for (let w = mine[next++]; w !== undefined; w = mine[next++]) await turn(w.name);
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency ?? DEFAULT_CONCURRENCY, wallets) }, lane));
    // The cycle's poll records are in the state file before it is reported done.
    await this.opts.runtime.store.flushPolls();
    this.lastCycleAt = this.opts.clock.now();
    return report;
  }

  async start(): Promise<void> {
    await this.recover();
    // With shared state: a first share taken and recovered before the first poll, then a lease
    // round every third of a lease, on the manager's own timer.
    await this.cluster?.join(true);
    this.scheduler = this.makeScheduler();
    this.scheduler.start();
    // Poll right away rather than waiting up to a whole interval for the first tick.
    this.scheduler.tick();
    this.opts.logger.info(
      {
        event: 'daemon.started',
        wallets: this.config.wallets.length,
        rules: this.config.rules.length,
        schedule: this.config.schedule.poll,
        dry_run: this.opts.dry,
        poll_ok: pollOkLevel(this.config.wallets.length),
      },
      `watching ${this.config.wallets.length} wallet(s)`,
    );
  }

  /**
   * SIGHUP: re-read the config and every wallet's key. An invalid file, or a key that does not load
   * or does not derive its wallet's address, is logged as config.invalid and the running config and
   * keys stay, whole. Rules, limits, safety, schedule, wallets and keys change in place; api and
   * state need a restart.
   */
  reload(): boolean {
    const { logger, env, cwd, configPath, redactor } = this.opts;
    this.events.emit('config:reloading', { at: this.opts.clock.now() });
    let next: AppConfig;
    let keys: { signers: ReadonlyMap<string, WalletSigner> };
    let apiKey: string | undefined;
    // Every key again, not only those of new wallets: a wallet pointed at another key file, or a key
    // file opened up to others since it was loaded, must not go on signing with what was read before.
    // The same pipeline as start and `check`: config and key problems in one list, each placed.
    try {
      const checked = loadCheckedConfig(configPath, { env, cwd, redactor, logger });
      next = checked.config;
      keys = checked.secrets;
      apiKey = checked.secrets.apiKey;
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const issues = err.issues.map(formatIssue);
      logger.error({ event: 'config.invalid', issues }, 'reloaded config is invalid; keeping the running config and keys');
      this.events.emit('config:reloaded', { ok: false, issues });
      return false;
    }
    const connection = (a: AppConfig['api']) => JSON.stringify([a.timeoutMs, a.connectTimeoutMs, a.maxResponseBytes, a.connections, a.rateLimit]);
    const movedBase = next.api.baseUrl !== this.config.api.baseUrl && this.config.api.baseUrl.startsWith('http') && next.api.baseUrl !== 'sandbox';
    if (movedBase || connection(next.api) !== connection(this.config.api)) {
      logger.warn({ event: 'config.restart_needed', key: 'api' }, 'api connection settings changed (base_url, timeouts, connections, rate_limit); they take effect at the next restart');
    }
    if (next.state.path !== this.config.state.path || next.state.url !== this.config.state.url || next.state.leaseMs !== this.config.state.leaseMs) {
      logger.warn({ event: 'config.restart_needed', key: 'state' }, 'state (path, url or lease) changed; it takes effect at the next restart');
    }
    if (next.cluster.maxClockSkewMs !== this.config.cluster.maxClockSkewMs) {
      logger.warn({ event: 'config.restart_needed', key: 'cluster' }, 'cluster.max_clock_skew changed; it takes effect at the next restart');
    }
    const scheduleChanged = next.schedule.poll !== this.config.schedule.poll || next.schedule.timezone !== this.config.schedule.timezone;
    // Config and keys change together, with no await in between: no wallet turn sees one without the other.
    // How requests are signed and read changes now: a wrong header prefix or message template fixed
    // by a reload must not wait for a restart, and lifts the signing pause it caused.
    const { client } = this.opts.runtime;
    const signingChanged = client.reconfigure(next.api);
    if (apiKey !== undefined) redactor.add(apiKey);
    const keyChanged = client.useApiKey(apiKey);
    const api = { ...this.config.api, headerPrefix: next.api.headerPrefix, endpoints: next.api.endpoints, signatureEncoding: next.api.signatureEncoding, authReads: next.api.authReads, tsWindowMs: next.api.tsWindowMs, claimSettleMs: next.api.claimSettleMs };
    this.config = { ...next, api, state: this.config.state, cluster: this.config.cluster };
    this.settleRuleIds();
    if (signingChanged || keyChanged) {
      const lifted = this.executor.liftPauses();
      logger.info(
        { event: 'signing.reconfigured', signing: signingChanged, api_key: keyChanged, pauses_lifted: lifted },
        lifted > 0 ? 'signing settings changed; signing resumes' : 'signing settings changed',
      );
    }
    this.walletsByName = byName(next.wallets);
    this.cluster?.configure(this.config);
    this.cycle.pollOkLevel = pollOkLevel(next.wallets.length);
    this.replaceSigners(keys.signers);
    if (scheduleChanged && this.scheduler !== undefined) {
      const old = this.scheduler;
      void old.stop(0);
      this.scheduler = this.makeScheduler();
      this.scheduler.start();
    }
    logger.info({ event: 'config.reloaded', wallets: next.wallets.length, rules: next.rules.length }, 'config reloaded');
    this.events.emit('config:reloaded', { ok: true });
    return true;
  }

  /**
   * A rule replaced by one with the same steps (gone from the config, the new one without plans of
   * its own) takes the old rule's id and with it its history and limits (SPEC §2; rules/rule-ids.ts).
   * Asked of the journal at every start and reload, so a restart carries as the reload did; the
   * turns wait for it. A newer reload settles its own config.
   */
  private settleRuleIds(): void {
    const config = this.config;
    const { logger } = this.opts;
    this.ruleIdsSettled = (async () => {
      const plans = await this.opts.runtime.store.latestRulePlans();
      if (this.config !== config) return;
      const outcome = carryRuleIds(config.rules, plans);
      for (const c of outcome.carried) {
        const was = plans.find((p) => p.rule === c.id);
        logger.warn(
          { event: 'rule.renamed', rule: c.name, id: c.id },
          `rule ${c.name} has the steps of rule ${c.id}, which is gone from the config: it keeps that rule's history and limits (id ${c.id}${was ? `, last planned for ${was.wallet} in epoch ${was.epoch}` : ''}); give it \`id: ${c.id}\` to say so`,
        );
      }
      for (const a of outcome.ambiguous) {
        logger.warn(
          { event: 'rule.rename_ambiguous', rules: a.names, ids: a.ids },
          `rule(s) ${a.names.join(', ')} have the steps of gone rule(s) ${a.ids.join(', ')}; which replaced which is not guessed, so none carries a history: give the rule meant \`id: <old id>\``,
        );
      }
      if (outcome.carried.length > 0) this.config = { ...config, rules: outcome.rules };
    })().catch((err: unknown) => {
      logger.error({ event: 'rule.ids_failed', err }, 'could not read which rules planned before; renamed rules are not matched with their history');
    });
  }

  /**
   * The executor holds the runtime's map itself, so its contents are replaced in place, at once:
   * a removed wallet's key is dropped, a changed one replaced, a new one added.
   */
  private replaceSigners(next: ReadonlyMap<string, WalletSigner>): void {
    swapSigners(this.opts.runtime.signers, next, this.opts.logger);
  }

  /** Stops taking new work; waits up to timeoutMs for the steps in flight to be recorded. */
  async stop(timeoutMs: number): Promise<boolean> {
    const done = (await this.scheduler?.stop(timeoutMs)) ?? true;
    this.opts.logger.info({ event: 'daemon.stopping', drained: done }, done ? 'stopped cleanly' : 'stopped with work still in flight (it will be recovered at the next start)');
    return done;
  }

  /** The time between two polls of a wallet, from the cron schedule (for staleness and readiness). */
  pollIntervalMs(): number {
    const times = nextCronTimes(this.config.schedule.poll, new Date(this.opts.clock.now()), 2, { timezone: this.config.schedule.timezone });
    const [a, b] = times;
    return a !== undefined && b !== undefined ? b.getTime() - a.getTime() : 60_000;
  }

  nextPoll(): Date | undefined {
    return this.scheduler?.nextRun();
  }

  private makeScheduler(): PollScheduler {
    return new PollScheduler({
      cron: this.config.schedule.poll,
      timezone: this.config.schedule.timezone,
      jitterMs: this.config.schedule.jitterMs,
      wallets: () => this.workable(),
      runWallet: (w) => this.runWallet(w.name),
      clock: this.opts.clock,
      logger: this.opts.logger,
      concurrency: this.opts.concurrency ?? DEFAULT_CONCURRENCY,
      planner: this.planner,
      budget: (ms) => pollBudget(this.config.api.rateLimit, ms),
      events: this.events,
    });
  }
}

function byName<T extends { name: string }>(items: T[]): Map<string, T> {
  return new Map(items.map((i) => [i.name, i]));
}
