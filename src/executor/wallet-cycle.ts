// One wallet's turn: poll → decide → plan → execute. The thin I/O wrapper around the pure rules
// engine (cf. changesets' get-release-plan around assemble-release-plan).
import type { ApiError } from '../errors.js';
import type { Clock, Decision, WalletConfig, WalletSummary } from '../domain.js';
import type { EventSink } from '../events.js';
import { formatSol } from '../amount.js';
import { roundedAmountFields } from '../api/schemas.js';
import type { LogFields, Logger } from '../log/logger.js';
import { decide } from '../rules/decide.js';
import { describeStep } from '../rules/format.js';
import { historyLookbackMs } from '../rules/limits.js';
import type { WorkerConfig, WorkerDeps } from './deps.js';
import type { PlanExecutor } from './executor.js';
import { errorSummary } from './executor.js';
import type { Failpoint } from './failpoints.js';
import { untilRuleIdsSettled } from './rule-ids-settle.js';
import { DEFAULT_CLOCK_SKEW_THRESHOLD_MS, describeSkew, type ClockSkewWatch } from './clock-skew.js';
import type { DecisionClock } from './decision-clock.js';
import type { ApiPort } from './ports.js';
import type { PollView, Store } from '../store/port.js';
import type { ClaimDoubtWatch } from './claim-doubt.js';
import type { HoldNotice } from './hold-notice.js';
export { HoldNotice } from './hold-notice.js';
import { recoverInFlight } from './recovery.js';
import { EpochError, judgeEpoch } from './epoch-check.js';

/** alerts.unknown_step_after's default: how long a wallet may hold its claims in doubt before it is news. */
const DEFAULT_DOUBT_AFTER_MS = 15 * 60_000;

/** The store operations a cycle needs beyond what the executor uses: a view of the one store port. */
type CycleStore = Pick<Store, 'recordPoll' | 'pollView' | 'planHistory' | 'insertPlan' | 'activePlans' | 'hasUnknownSignedStep' | 'claimInDoubt' | 'recoverInFlight'>;

/** Built once per process (the daemon's constructor): what changes with a reload is read through `config()`. */
export interface CycleDeps {
  /** `clockSkewMs` (server Date minus our clock at the last response) feeds the skew warning. */
  api: Pick<ApiPort, 'walletSummary'> & { clockSkewMs?: () => number | undefined };
  store: CycleStore;
  executor: PlanExecutor;
  /** The current config's rules, safety and clock-skew threshold, read at each turn. */
  config: () => WorkerConfig;
  /** Wall clock: poll times, what the operator reads. */
  clock: Clock;
  /**
   * What rules judge cooldowns and 24 h windows by, and what plans are dated with: one that an NTP
   * step cannot move (createDecisionClock). Created once per process; `clock` when absent.
   */
  decisionClock?: Clock & Partial<Pick<DecisionClock, 'holdBackTo'>>;
  /** Episode state for the clock-skew warning, kept across cycles; no skew check when absent. */
  clockSkew?: ClockSkewWatch;
  /** Since when each wallet's claims are held as "claim in doubt" (warn and alert past a bound); kept across cycles. */
  claimDoubt?: ClaimDoubtWatch;
  /**
   * Which holds were said at info (hold-notice.ts: news once, then debug while they repeat); kept
   * across cycles. When absent, once_per_epoch holds are debug and every other hold info.
   */
  holds?: HoldNotice;
  logger: Logger;
  failpoint: Failpoint;
  dry: boolean;
  /** Polls (`poll:ok`, `poll:failed`) and plans (`plan:recorded`, `plan:settled`) go out on it. */
  events?: EventSink;
  /** `poll.ok` is logged at this level (default info); the daemon says debug for a large fleet. */
  pollOkLevel?: 'info' | 'debug';
  /** The sandbox's fast demo epochs are exempt from the calendar checks (epochsExempt); none when absent. */
  epochsExempt?: () => boolean;
  /**
   * As the executor's (WorkerDeps): a reload puts its rules in force at once and their ids a journal
   * read later, and a turn that ran or decided between would key a renamed rule's limits afresh.
   */
  ruleIdsSettled?: WorkerDeps['ruleIdsSettled'];
}

export interface WalletCycleResult {
  wallet: string;
  polled: boolean;
  plans: number[];
  /** Plan statuses after this cycle, for `once`'s exit code. */
  statuses: string[];
  /**
   * Polled, but nothing decided or run: the rule ids could not be read (rule-ids-settle.ts). Told
   * to `once` as waiting to retry: counted as a good poll alone, it exited 0 for a cycle that
   * decided no wallet and left an open plan's next step unsent.
   */
  undecided?: boolean;
}

export interface OnceReport {
  wallets: number;
  polled: number;
  plans: number;
  /** Plans that ended rejected (the action refused) or failed (the request refused as invalid). */
  failed: number;
  unknown: number;
  /** Plans left open: a step deferred (429, not sent) to be retried, freshly signed, next time; and turns that decided nothing (undecided). */
  pending: number;
  /** Wallet turns that threw (a bug or the state database failing); logged as wallet.failed. */
  crashed: number;
}

/** Adds one wallet's turn to `once`'s report. */
export function tallyTurn(report: OnceReport, r: WalletCycleResult | undefined): void {
  if (r === undefined) return;
  if (r.polled) report.polled++;
  if (r.undecided === true) report.pending++;
  report.plans += r.plans.length;
  for (const s of r.statuses) {
    if (s === 'failed' || s === 'rejected') report.failed++;
    else if (s === 'blocked') report.unknown++;
    else if (s === 'open') report.pending++;
  }
}

/**
 * Beyond this many wallets `poll.ok` is logged at debug: a line per poll of a large fleet is log
 * volume (and CPU) that says little the state file does not keep (`autoclaim status`); failed
 * polls, decisions and actions are logged as ever.
 */
const POLL_OK_AT_INFO_UP_TO = 1000;

export function pollOkLevel(wallets: number): 'info' | 'debug' {
  return wallets > POLL_OK_AT_INFO_UP_TO ? 'debug' : 'info';
}

export async function runWalletCycle(deps: CycleDeps, wallet: WalletConfig): Promise<WalletCycleResult> {
  const { api, store, clock, executor } = deps;
  // The wallet's child logger is made at its first line: a turn of a large fleet usually logs
  // nothing (poll.ok is at debug there), and a pino child serializes its bindings when made.
  let child: Logger | undefined;
  const log = (): Logger => (child ??= deps.logger.child({ wallet: wallet.name }));
  const enabled = (level: 'warn' | 'info' | 'debug'): boolean => deps.logger.isLevelEnabled(level);
  const result: WalletCycleResult = { wallet: wallet.name, polled: false, plans: [], statuses: [] };

  let summary: WalletSummary;
  // What the turn decides by: the decision clock's now, and what the store says of the wallet then.
  let now: number;
  let view: PollView;
  try {
    summary = await api.walletSummary(wallet.address);
    holdDecisionsToService(deps);
    // Everything the turn reads, read at once (store/poll-view.ts): the last epoch is needed now,
    // the rest would be read after the poll record, which changes none of it (wallet_state and
    // epochs_seen only). Only running the wallet's plans can; a turn that runs one reads again.
    now = (deps.decisionClock ?? clock).now();
    view = await store.pollView(wallet.address, now - historyLookbackMs(deps.config().rules), summary.epoch);
    believeEpoch(deps, summary.epoch, view.lastEpoch);
  } catch (err) {
    const at = clock.now();
    await store.recordPoll(wallet.name, wallet.address, at, { ok: false, error: errorSummary(err) });
    const { issues, requestId } = err as Partial<ApiError>;
    const epoch = err instanceof EpochError ? { epoch: err.epoch, why: err.why } : {};
    log().warn({ event: 'poll.failed', err: errorSummary(err), ...epoch, issues: issues?.length ? issues : undefined, request_id: requestId }, 'poll failed');
    deps.events?.emit('poll:failed', { wallet, error: err, at });
    return result;
  }
  result.polled = true;
  const polledAt = clock.now();
  const { newEpoch } = await store.recordPoll(wallet.name, wallet.address, polledAt, { ok: true, summary });
  deps.events?.emit('poll:ok', { wallet, summary, at: polledAt });
  const pollOkLevel = deps.pollOkLevel ?? 'info';
  if (enabled(pollOkLevel)) {
    log()[pollOkLevel](
      {
        event: 'poll.ok',
        epoch: summary.epoch,
        pending_sol: formatSol(summary.pendingLamports),
        lifetime_sol: summary.lifetimeLamports === null ? null : formatSol(summary.lifetimeLamports),
        rank: summary.rank,
        tier: summary.tier,
      },
      'polled',
    );
  }
  if (newEpoch && enabled(pollOkLevel)) log()[pollOkLevel]({ event: 'epoch.new', epoch: summary.epoch }, `new epoch ${summary.epoch}`);
  if (enabled('debug')) {
    // Servers write floats (0.30000000000000004): read toward zero to the lamport, said here.
    const rounded = roundedAmountFields(summary.raw);
    if (rounded.length > 0) log().debug({ event: 'amount.rounded', fields: rounded }, `amounts finer than a lamport rounded toward zero: ${rounded.join(', ')}`);
  }
  checkClockSkew(deps);

  const paused = deps.dry ? undefined : executor.pausedFor(wallet.address);
  if (paused !== undefined && paused.source !== 'kill_switch') {
    // The server called this wallet's (or every) signed request invalid: nothing new is decided or
    // signed until the setup is fixed; polls go on, so status and metrics stay current.
    log().debug({ event: 'signing.paused', scope: paused.scope, reason: paused.reason }, 'signing paused; not deciding');
    return result;
  }

  // Finish what earlier cycles (or an earlier process) started before deciding anything new.
  if (!deps.dry && view.hasActivePlans) {
    // Unsettled, a plan's renamed rule would look gone and its next step be skipped: not this turn.
    if (!(await untilRuleIdsSettled(deps.ruleIdsSettled))) return { ...result, undecided: true };
    let active = await store.activePlans(wallet.address);
    // A step left `sending` by a process gone (or by this daemon before it lost the wallet's lease
    // and won it back) becomes unknown now, to be reconciled below, whoever recorded it; never one
    // this process is sending. A sending step's plan is open (plan-status.ts), so the plans read
    // anyway tell whether there is one: no query of its own on a turn with nothing to recover.
    const inFlight = executor.inFlight();
    if (active.some((p) => p.steps.some((s) => s.state === 'sending' && !inFlight.has(s.id)))) {
      await recoverInFlight({ store, clock, logger: log() }, wallet.address, { except: inFlight, when: 'turn' });
      active = await store.activePlans(wallet.address);
    }
    for (const plan of active) {
      result.plans.push(plan.id);
      const status = await executor.execute(plan.id);
      result.statuses.push(status);
      deps.events?.emit('plan:settled', { wallet: wallet.name, plan: plan.id, rule: plan.rule, status });
    }
    // Running them changed what the rules must see: read again, after them.
    now = (deps.decisionClock ?? clock).now();
    view = {
      ...view,
      claimInDoubt: await store.claimInDoubt(wallet.address),
      history: await store.planHistory(wallet.address, now - historyLookbackMs(deps.config().rules), summary.epoch),
      unknownSignedStep: await store.hasUnknownSignedStep(wallet.address),
    };
  }

  // The turn may have started before a reload (its poll under way): nothing between this and the
  // decision awaits, so the rules it decides by are the settled ones. Unsettled (the journal could
  // not be read), a renamed rule would decide without its history: nothing new this turn.
  if (!(await untilRuleIdsSettled(deps.ruleIdsSettled))) return { ...result, undecided: true };
  const config = deps.config();
  const { claimInDoubt, history, unknownSignedStep: blockedSignedOps } = view;
  // The kill switch (kill-switch.ts) and a rule's `enabled: false` decide in dry mode: the plan is
  // shown and recorded as dry, and nothing is signed for it.
  const held = paused?.reason;
  const runs = deps.dry || held !== undefined
    ? [{ rules: config.rules, dry: true }]
    : [{ rules: config.rules.filter((r) => r.enabled !== false), dry: false }, { rules: config.rules.filter((r) => r.enabled === false), dry: true }];
  const decided = runs
    .filter((run) => run.rules.length > 0)
    .map((run) => ({ run, ...decide({ wallet, summary, history, rules: run.rules, safety: config.safety, now, dry: run.dry, blockedSignedOps, claimInDoubt }) }));
  const decisions = decided.flatMap((d) => d.decisions);
  const doubtSince = deps.claimDoubt?.observe(wallet, claimInDoubt && decisions.some((d) => d.reason === 'claim_in_doubt'), clock.now());
  const doubtOverdue = doubtSince !== undefined && clock.now() - doubtSince > (config.alerts?.unknownStepAfterMs ?? DEFAULT_DOUBT_AFTER_MS);
  for (const d of decisions) {
    // Built only when it is written: a skipped rule is a debug line on every poll of every wallet.
    const news = deps.holds?.observe(wallet.address, summary.epoch, d);
    const level = d.reason === 'claim_in_doubt' && doubtOverdue ? 'warn' : decisionLevel(d, news);
    if (enabled(level)) logDecision(log(), level, summary, d);
  }
  for (const { run, plans } of decided) {
    const why = deps.dry ? 'dry run' : held !== undefined ? `kill switch (${held})` : 'rule disabled (enabled: false)';
    for (const draft of plans) {
      const reason = decisions.find((d) => d.ruleId === draft.rule)?.detail ?? '';
      const recorded = await store.insertPlan(draft, { dry: run.dry, now, reason });
      if (recorded === undefined) {
        // The UNIQUE key did its job: this decision was already recorded (a race, or a clock step).
        log().info({ event: 'plan.duplicate', rule: draft.rule, epoch: draft.epoch, seq: draft.seq }, 'plan already recorded for this rule and epoch');
        continue;
      }
      deps.failpoint('after_plan_recorded');
      deps.events?.emit('plan:recorded', { wallet: wallet.name, plan: recorded.id, rule: draft.rule, epoch: draft.epoch, dry: run.dry });
      const plog = log().child({ epoch: draft.epoch, plan: recorded.id, rule: draft.rule });
      const steps = draft.steps.map(describeStep);
      plog.info(
        { event: run.dry ? 'plan.dry' : 'plan.recorded', steps, estimate_sol: formatSol(draft.estimateLamports), ...(run.dry && !deps.dry ? { held: why } : {}) },
        run.dry ? `${why}: would ${steps.join(', then ')}` : `plan recorded: ${steps.join(', then ')}`,
      );
      if (run.dry) continue;
      result.plans.push(recorded.id);
      const status = await executor.execute(recorded.id);
      result.statuses.push(status);
      deps.events?.emit('plan:settled', { wallet: wallet.name, plan: recorded.id, rule: draft.rule, status });
    }
  }
  return result;
}

/**
 * Throws EpochError for an epoch SPEC §2 does not believe: not a real date, more than a day from
 * this machine's UTC date (the wall clock, injected), or before the last one recorded for the address.
 */
function believeEpoch(deps: CycleDeps, epoch: string, last: string | undefined): void {
  const verdict = judgeEpoch({ epoch, nowMs: deps.clock.now(), last, exempt: deps.epochsExempt?.() ?? false });
  if (!verdict.ok) throw new EpochError(epoch, verdict.why, verdict.detail);
}

/**
 * The decision clock took the wall time once, at start (decision-clock.ts). When this machine's
 * clock and the service's (as the `Date` of the poll just made put it) agree within
 * alerts.clock_skew, and the decision clock is further than that ahead of both, it was started
 * from a wrong wall clock that NTP has set right since: it is held back to them. Never forward;
 * and not when the two disagree (a wrong `Date` from a proxy, our clock stepped in-process):
 * `clock.skew` says so, and neither is believed over the other.
 */
function holdDecisionsToService(deps: CycleDeps): void {
  const skewMs = deps.api.clockSkewMs?.();
  if (deps.decisionClock?.holdBackTo === undefined || skewMs === undefined || !Number.isFinite(skewMs)) return;
  const thresholdMs = deps.config().alerts?.clockSkewMs ?? DEFAULT_CLOCK_SKEW_THRESHOLD_MS;
  if (Math.abs(skewMs) > thresholdMs) return;
  const wallMs = deps.clock.now();
  const targetMs = Math.min(wallMs, wallMs + skewMs);
  if (deps.decisionClock.now() - targetMs <= thresholdMs) return;
  const by = deps.decisionClock.holdBackTo(targetMs);
  deps.logger.warn(
    { event: 'clock.decisions_held_back', by_ms: by, threshold_ms: thresholdMs },
    `the clock cooldowns and daily limits are judged by was ${Math.round(by / 1000)}s ahead of the API server's and this machine's (which was wrong when autoclaim started); held back to them`,
  );
}

function checkClockSkew(deps: CycleDeps): void {
  if (deps.clockSkew === undefined || deps.api.clockSkewMs === undefined) return;
  const thresholdMs = deps.config().alerts?.clockSkewMs ?? DEFAULT_CLOCK_SKEW_THRESHOLD_MS;
  const report = deps.clockSkew.observe(deps.api.clockSkewMs(), thresholdMs);
  if (report === undefined) return;
  const fields = { event: report.event, skew_ms: report.skewMs, threshold_ms: thresholdMs };
  if (report.event === 'clock.skew') {
    deps.logger.warn(
      fields,
      `${describeSkew(report.skewMs)} (more than ${thresholdMs / 1000}s); signed requests may be refused as stale: check NTP (timedatectl, chronyc tracking)`,
    );
  } else {
    deps.logger.info(fields, `clock skew back within ${thresholdMs / 1000}s of the API server's`);
  }
}

/**
 * A rule whose condition does not hold is the normal case on every poll: debug, so a fleet of
 * wallets does not drown the log. A firing rule is news; a limit that held one back is news the
 * first time it is seen, then debug while it repeats (`news`, hold-notice.ts). Without a notice
 * (`undefined`), a once_per_epoch hold is debug and every other hold info.
 */
function decisionLevel(d: Decision, news: boolean | undefined): 'info' | 'debug' {
  if (d.fired) return 'info';
  if (news !== undefined) return news ? 'info' : 'debug';
  return d.reason === 'condition' || d.reason === 'once_per_epoch' ? 'debug' : 'info';
}

function logDecision(log: Logger, level: 'warn' | 'info' | 'debug', summary: WalletSummary, d: Decision): void {
  const fields = { event: d.fired ? 'rule.fired' : 'rule.skipped', epoch: summary.epoch, rule: d.rule, reason: d.reason, detail: d.detail } satisfies LogFields;
  log[level](fields, `rule ${d.rule} ${d.fired ? 'fired' : 'skipped'}: ${d.detail}`);
}
