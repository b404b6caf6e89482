// Wires the parts: schedule → poll → decide → plan → sign → send → record. start, reload, stop.
import type { AppConfig, PlanStatus, WalletConfig } from './domain.js';
import { formatIssue } from './errors.js';
import { createEvents, type AutoclaimEvents } from './events.js';
import { loadCheckedConfig, runtimeEpochsExempt, type Runtime, type RuntimeOptions } from './runtime.js';
import { PollInterval, PollScheduler, type Turns } from './scheduler/scheduler.js';
import { lowestPendingThreshold, pollBudget } from './scheduler/planner.js';
import { AccrualPlanner } from './scheduler/priority.js';
import { PlanExecutor, type SigningPause } from './executor/executor.js';
import { createDecisionClock, type DecisionClock } from './executor/decision-clock.js';
import { ClockSkewWatch } from './executor/clock-skew.js';
import { ClaimDoubtWatch, type DoubtEpisode } from './executor/claim-doubt.js';
import type { Failpoint } from './executor/failpoints.js';
import type { WalletSigner } from './executor/ports.js';
import { swapSigners } from './keys/backends/index.js';
import { HoldNotice, pollOkLevel, runWalletCycle, tallyTurn, type CycleDeps, type OnceReport, type WalletCycleResult } from './executor/wallet-cycle.js';
import { RuleIdsSettling } from './executor/rule-ids-settle.js';
import { ConfigError } from './errors.js';
import { ClusterWork } from './cluster/work.js';
import { recoverInFlight } from './executor/recovery.js';
import { warnRestartNeeded } from './config/restart-needed.js';
import { killSwitchFor, type OperatorPause } from './executor/kill-switch.js';

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
  /**
   * The pause record, read at every ask of the signing gate, for a process the CLI cannot signal:
   * `pause` signals only the pid `run` names (service/control.ts), so `once` and `send` under way
   * would sign on after it said "signing paused". Absent (`run`): read at start and at SIGUSR2.
   */
  pauseRecord?: () => OperatorPause | undefined;
}

const DEFAULT_CONCURRENCY = 16;

export class Daemon {
  /** Swapped whole by a reload; every part reads it through `configRef` at each use. */
  private config: AppConfig;
  private readonly configRef = (): AppConfig => this.config;
  /** By name and by address; a cycle over 10,000 wallets must not scan the list once per wallet. */
  private walletsByName: Map<string, WalletConfig>;
  private walletsByAddress: Map<string, WalletConfig>;
  private readonly executor: PlanExecutor;
  /** Built once: a wallet's turn needs nothing that is not here or read through `config`. */
  private readonly cycle: CycleDeps;
  private readonly events: AutoclaimEvents;
  /** Cooldowns, 24 h windows and claim ages are judged by this: an NTP step cannot move it. */
  private readonly decisionClock: DecisionClock;
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
  private readonly ruleIds: RuleIdsSettling;

  constructor(private readonly opts: DaemonOptions) {
    const { runtime, clock, logger, failpoint } = opts;
    this.decisionClock = createDecisionClock(clock);
    this.config = runtime.config;
    this.walletsByName = indexBy(this.config.wallets, 'name');
    this.walletsByAddress = indexBy(this.config.wallets, 'address');
    // Subscribed before anyone else can be: the planner hears a poll before the metrics do, and
    // lastCycleAt is current before the supervisor's alerts read it.
    this.events = opts.events ?? createEvents({ logger });
    this.events.on('poll:ok', ({ wallet, summary }) => this.planner.observe(wallet, summary, clock.monotonic()));
    this.events.on('cycle:done', ({ at }) => {
      this.lastCycleAt = at;
    });
    this.ruleIds = new RuleIdsSettling({ store: runtime.store, logger, current: this.configRef, apply: (config) => void (this.config = config), now: () => clock.now() });
    const shared = { config: this.configRef, clock, logger, failpoint, events: this.events, ruleIdsSettled: this.ruleIds.settled };
    this.executor = new PlanExecutor({
      ...shared,
      store: runtime.store,
      api: runtime.client,
      signers: runtime.signers,
      elapsedClock: this.decisionClock,
      stillHolds: runtime.cluster === undefined ? undefined : (address) => this.cluster?.holds(address) ?? false,
      // The clock checked against the database's at every lease round: out of bounds, nothing is
      // signed; and the kill switch (safety.paused, `autoclaim pause`, a wallet's enabled: false).
      signingGate: (address) => this.clockGate() ?? this.killSwitch(address),
    });
    this.cycle = {
      ...shared,
      api: runtime.client,
      store: runtime.store,
      executor: this.executor,
      decisionClock: this.decisionClock,
      clockSkew: this.clockSkew,
      claimDoubt: this.claimDoubt,
      holds: new HoldNotice(),
      dry: opts.dry,
      pollOkLevel: pollOkLevel(this.config.wallets.length),
      epochsExempt: () => runtimeEpochsExempt(runtime, this.config, opts.env),
    };
    if (runtime.cluster !== undefined) {
      this.cluster = new ClusterWork(runtime.cluster, { store: runtime.store, clock, logger, inFlight: () => this.executor.inFlight(), decisionClock: this.decisionClock });
      this.cluster.configure(this.config);
    }
  }

  private clockGate(): SigningPause | undefined {
    const refusal = this.cluster?.signingGate();
    return refusal === undefined ? undefined : { scope: 'all', source: refusal.source, reason: `${refusal.source}: ${refusal.reason}`, since: refusal.since };
  }

  /** `autoclaim pause` / `resume` as recorded (service/control.ts); read at start and at SIGUSR2 (unless opts.pauseRecord). */
  private operatorPause: OperatorPause | undefined;

  setOperatorPause(p: OperatorPause | undefined): void {
    this.operatorPause = p;
  }

  /** The kill switch for this wallet (address), or for every wallet (undefined): executor/kill-switch.ts. */
  killSwitch(address: string | undefined): SigningPause | undefined {
    const operator = this.opts.pauseRecord === undefined ? this.operatorPause : this.opts.pauseRecord();
    return killSwitchFor(this.config.safety, operator, this.walletsByAddress, address, this.opts.clock.now());
  }

  /** The held wallets as last listed, with the config's list and the leases (joined) they came from. */
  private mine: { wallets: readonly WalletConfig[]; held: string; list: readonly WalletConfig[] } | undefined;
  /** The wallets worked now (all, or those held): the same array until the config or the leases change (the planner keeps its ranking for it). */
  private workable(): readonly WalletConfig[] {
    const manager = this.opts.runtime.cluster?.manager;
    if (this.cluster === undefined || manager === undefined) return this.config.wallets;
    const { wallets } = this.config;
    const held = manager.held().join(' ');
    if (this.mine?.wallets === wallets && this.mine.held === held) return this.mine.list;
    const list = this.cluster.mine(wallets);
    this.mine = manager.held().join(' ') === held ? { wallets, held, list } : undefined; // not kept if a lease came or went meanwhile
    return list;
  }

  get currentConfig(): AppConfig {
    return this.config;
  }

  /**
   * Where signing stands: paused for every wallet, or for some (readiness and metrics). Not the
   * kill switch: an operator's choice is not a fault to page about (killSwitch() says it).
   */
  signingPauses(): ReturnType<PlanExecutor['pauses']> {
    const p = this.executor.pauses();
    // Only wallets worked here: one taken out by a reload (or moved away) keeps its pause should it come back, unreported.
    const mine = (address: string): boolean => this.walletsByAddress.has(address) && (this.cluster?.holds(address) ?? true);
    return { all: p.all?.source === 'kill_switch' ? undefined : p.all, wallets: new Map([...p.wallets].filter(([address]) => mine(address))) };
  }

  /**
   * Polls these wallets now, beside the schedule (`autoclaim poll`, SIGUSR1, a reload that lifted
   * a pause); a wallet whose turn is running is not run twice. `paused`: the wallets signing is
   * paused for. Returns the names asked for that are not configured (or, with shared state, not held).
   */
  pollNow(which: 'all' | 'paused' | readonly string[]): { polling: string[]; unknown: string[] } {
    const mine = this.workable();
    let chosen: WalletConfig[];
    let unknown: string[] = [];
    if (which === 'all') chosen = [...mine];
    else if (which === 'paused') {
      const p = this.executor.refusalPauses();
      chosen = p.all !== undefined ? [...mine] : mine.filter((w) => p.wallets.has(w.address));
    } else {
      chosen = mine.filter((w) => which.includes(w.name));
      unknown = which.filter((n) => !chosen.some((w) => w.name === n));
    }
    if (chosen.length > 0) void this.scheduler?.pollNow(chosen);
    return { polling: chosen.map((w) => w.name), unknown };
  }

  /**
   * Marks steps left in flight by a crash as unknown; logs each so an operator sees it. With shared
   * state, never all of them (another daemon's may be in flight right now): a wallet's are
   * recovered when its lease is taken (cluster/work.ts).
   */
  async recover(): Promise<void> {
    this.ruleIds.settle();
    await this.ruleIds.settled();
    if (this.cluster !== undefined) return;
    const { runtime, clock, logger } = this.opts;
    await recoverInFlight({ store: runtime.store, clock, logger });
  }

  /** The wallets whose claims are held as "claim in doubt" now, with since when (alerts); with shared state, those it holds. */
  claimsInDoubt(): DoubtEpisode[] {
    const open = this.claimDoubt.open();
    return this.cluster === undefined ? open : open.filter((e) => this.cluster?.holds(e.address) === true);
  }

  /** Why the rule ids cannot be settled now, for /readyz (executor/rule-ids-settle.ts: a read that failed is asked again); undefined when they are. */
  ruleIdsUnread = (): string | undefined => this.ruleIds.unread();

  /** Runs one recorded plan's remaining steps now (a one-off `send`); call recover() first. */
  async runPlan(planId: number): Promise<PlanStatus> {
    return this.executor.execute(planId);
  }

  /** A wallet's turn, by name (`once`) or by address (the scheduler: a reload may rename the wallet while the turn waits). */
  async runWallet(name: string, by: 'name' | 'address' = 'name'): Promise<WalletCycleResult | undefined> {
    const wallet = (by === 'name' ? this.walletsByName : this.walletsByAddress).get(name);
    if (wallet === undefined) return undefined;
    this.ruleIds.again();
    await this.ruleIds.settled();
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
    const tally = (r: WalletCycleResult | undefined): void => tallyTurn(report, r);
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
    // kept to the end, were for the garbage collector to copy and promote).
    let next = 0;
    const lane = async (): Promise<void> => {
      for (let w = mine[next++]; w !== undefined; w = mine[next++]) await turn(w.name);
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency ?? DEFAULT_CONCURRENCY, wallets) }, lane));
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
    warnRestartNeeded(this.config, next, logger);
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
    this.walletsByName = indexBy(next.wallets, 'name');
    this.walletsByAddress = indexBy(next.wallets, 'address');
    this.ruleIds.settle();
    if (signingChanged || keyChanged) {
      const paused = this.executor.refusalPauses();
      const wasPaused = paused.all !== undefined ? 'all' : this.config.wallets.filter((w) => paused.wallets.has(w.address)).map((w) => w.name);
      const lifted = this.executor.liftPauses();
      if (lifted > 0) {
        this.events.emit('signing:resumed', { lifted, at: this.opts.clock.now() });
        // The fix is in: the paused wallets are polled now, not at their next scheduled turn.
        queueMicrotask(() => this.pollNow(wasPaused));
      }
      logger.info(
        { event: 'signing.reconfigured', signing: signingChanged, api_key: keyChanged, pauses_lifted: lifted },
        lifted > 0 ? 'signing settings changed; signing resumes' : 'signing settings changed',
      );
    }
    this.cluster?.configure(this.config);
    this.cycle.pollOkLevel = pollOkLevel(next.wallets.length);
    this.replaceSigners(keys.signers);
    if (scheduleChanged && this.scheduler !== undefined) {
      const old = this.scheduler;
      this.scheduler = this.makeScheduler(old.turns);
      old.replaceBy(this.scheduler);
    }
    logger.info({ event: 'config.reloaded', wallets: next.wallets.length, rules: next.rules.length }, 'config reloaded');
    this.events.emit('config:reloaded', { ok: true });
    return true;
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
    return this.interval.ms(this.config.schedule, this.opts.clock.now());
  }
  private readonly interval = new PollInterval();

  /** A wallet's time between polls by plan, which its staleness counts in (PollPlanner.revisitIntervals). */
  walletPollGapMs(): number {
    const intervalMs = this.pollIntervalMs();
    return intervalMs * this.planner.revisitIntervals(this.workable().length, pollBudget(this.config.api.rateLimit, intervalMs));
  }

  nextPoll(): Date | undefined {
    return this.scheduler?.nextRun();
  }

  private makeScheduler(turns?: Turns): PollScheduler {
    return new PollScheduler({
      cron: this.config.schedule.poll,
      timezone: this.config.schedule.timezone,
      jitterMs: this.config.schedule.jitterMs,
      wallets: () => this.workable(),
      runWallet: (w) => this.runWallet(w.address, 'address'),
      clock: this.opts.clock,
      logger: this.opts.logger,
      concurrency: this.opts.concurrency ?? DEFAULT_CONCURRENCY,
      turns,
      planner: this.planner,
      budget: (ms) => pollBudget(this.config.api.rateLimit, ms),
      events: this.events,
    });
  }
}

function indexBy<T, K extends keyof T>(items: readonly T[], key: K): Map<T[K], T> {
  return new Map(items.map((i) => [i[key], i]));
}
