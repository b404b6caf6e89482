// What a signed request's answer (or its failure) means, recorded: the body's verdict for a 2xx,
// the disposition of an ApiError otherwise (SPEC §2). The one place a step leaves `sending`
// after a request, so every outcome is logged, counted and journaled the same way.
import { ApiError, AutoclaimError } from '../errors.js';
import type { Lamports } from '../domain.js';
import { formatSol } from '../amount.js';
import { amountFields } from '../rules/amounts.js';
import { DEFAULT_ENDPOINTS } from '../api/endpoints.js';
import { maxSendAgeMs } from '../api/ts-window.js';
import type { Logger } from '../log/logger.js';
import { classifyAnswer, requestRefusalScope } from './answer.js';
import type { SigningPause, StepResult, WorkerDeps } from './deps.js';
import type { PlanWithSteps, PreparedRequest, ResponseRecord, StepRow } from './ports.js';
import type { StepRef } from '../store/port.js';
import type { SigningPauses } from './signing-guard.js';
import { clockSignal, REFUSAL_FIX, serverRefusal, type ServerRefusal } from './refusal.js';
import { DEFAULT_CLOCK_SKEW_THRESHOLD_MS } from './clock-skew.js';
import type { StepEvent } from '../events.js';
import type { ClaimBaseline } from '../store/rows.js';
import { accrualSlack, provedClaimed } from './reconcile.js';
import { CLAIM_UNPROVED } from '../store/plan-status.js';
import { ruleSwitchedOff } from './kill-switch.js';

/**
 * A claim whose fresh read is an epoch behind its plan's waits, unsigned, for a read of its epoch
 * (recheck.ts `wait`). Said at each turn it waits, as every other step held back unsent is: silent,
 * its plan only stood open, and a backend a second behind at midnight looked the same as one stuck
 * on an old epoch for hours. Info, not warn: at midnight behind a load balancer it is the normal case.
 */
export function epochWait(log: Logger, step: StepRow, detail: string, readEpoch: string): 'retry_later' {
  log.info({ event: 'action.deferred', reason: 'epoch', read_epoch: readEpoch }, `${step.kind} not sent: ${detail}`);
  return 'retry_later';
}

/**
 * What every `step:outcome` of this step says, whatever its state: which step of which wallet, its
 * symbol, and the amount it was to move when known; each outcome adds its own (tx, the server's words).
 */
export function stepEventOf(plan: PlanWithSteps, step: StepRow): Omit<StepEvent, 'state'> {
  return { kind: step.kind, wallet: plan.wallet, plan: plan.id, step: step.id, symbol: step.symbol ?? undefined, amountLamports: step.amountLamports ?? undefined };
}

export class OutcomeRecorder {
  constructor(
    private readonly deps: WorkerDeps,
    private readonly pauses: SigningPauses,
  ) {}

  async send(
    plan: PlanWithSteps,
    step: StepRow,
    prepared: PreparedRequest,
    log: Logger,
    amount: bigint,
    before?: ClaimBaseline,
  ): Promise<StepResult> {
    const { store, api, clock } = this.deps;
    if (this.deps.stillHolds?.(plan.address) === false) {
      // Recorded `sending` while the lease was ours, but it is not any more: not sent. The step
      // stays `sending` for the wallet's new owner, which recovers it as unknown and reconciles it.
      log.warn({ event: 'lease.fenced' }, `${step.kind} not sent: this daemon lost the wallet's lease after recording it; the new owner reconciles it`);
      return 'retry_later';
    }
    // Logged once the gate lets it go (after the rate limiter's wait), so `action.sent` means sent.
    let announced = false;
    const gate = (): string | undefined => {
      const reason = this.holdBack(plan, prepared);
      if (reason === undefined && !announced) {
        announced = true;
        log.info({ event: 'action.sent', ...amountFields(step.kind, step.symbol, amount), attempt: step.attempts + 1, url: prepared.url }, `${step.kind} sent`);
      }
      return reason;
    };
    let result;
    try {
      result = await api.send(prepared, gate);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'WITHHELD') return await this.withheld(plan, step, err, log);
      this.deps.failpoint('after_answer_before_record');
      return await this.classifyFailure(plan, withAmount(step, amount), err, log);
    }
    this.deps.failpoint('after_answer_before_record');

    // A 2xx says the request arrived; the body says whether it was applied.
    const verdict = classifyAnswer(result.status, result.body, (this.deps.config().api?.endpoints ?? DEFAULT_ENDPOINTS)[step.kind]);
    const record = { status: result.status, responseRaw: result.rawText, requestId: result.requestId };
    const request_id = result.requestId;
    const tx = typeof result.body.tx === 'string' ? result.body.tx : undefined;
    if (verdict.outcome === 'refused') {
      await store.markRejected(sent(step), { ...record, error: `refused: ${verdict.detail}` }, clock.now());
      this.deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'rejected', amountLamports: amount, tx });
      log.warn({ event: 'action.rejected', status: result.status, answer: verdict.status, error_code: verdict.errorCode, request_id }, `${step.kind} rejected by the API (${verdict.detail})`);
      return 'rejected';
    }
    if (verdict.outcome === 'unknown') {
      return await this.markUnknown(plan, withAmount(step, amount), log, { ...record, error: `answer does not say it was applied: ${verdict.detail}` }, tx);
    }

    // A claim's amount: undefined when nothing proves one (claimedOf); the plan's claimed stays unknown.
    // The acknowledgement is recorded before anything else goes over the network: a claim whose
    // amount waits on a summary read is recorded first, its amount after (claimedOf), so a stop, a
    // crash or a lost lease during that read never leaves an applied claim `sending`.
    const said = result.body.claimedLamports ?? null;
    const toProve = step.kind === 'claim' && said === null && plan.steps.some((s) => s.idx > step.idx && sizedFromClaim(s));
    const known = step.kind !== 'claim' ? amount : toProve ? undefined : said === null ? amount : this.boundClaimed(plan, step, log, said, amount);
    // Proved when the answer said it (bounded); the pending seen, recorded when nothing is sized from it, is not.
    await store.markAcknowledged(sent(step), { ...record, ...(step.kind === 'claim' ? { claimedLamports: known, claimedProved: said !== null } : {}) }, clock.now());
    const claimed = toProve ? await this.claimedOf(plan, step, log, amount, before) : known;
    this.deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'acknowledged', amountLamports: claimed, tx });
    // A claim's amount_sol is what it counts as, min(claimed, seen); the server's own figure is
    // beside it (server_claimed_sol, absent when the answer had none), so a reader sees both.
    const told = step.kind === 'claim' && (result.body.claimedLamports != null || claimed !== amount) ? { server_claimed_sol: result.body.claimedLamports == null ? undefined : formatSol(result.body.claimedLamports), seen_sol: formatSol(amount) } : {};
    const counted = claimed === undefined ? {} : amountFields(step.kind, step.symbol, claimed);
    log.info({ event: 'action.acknowledged', status: result.status, answer: verdict.status, tx, ...counted, ...told, request_id }, `${step.kind} acknowledged`);
    return 'acknowledged';
  }

  /**
   * Asked by the client after every wait a signed request makes on its way out (the rate limiter,
   * a 429's pause, a backoff), right before its first byte: a reason to hold it back. A daemon
   * paused or queued there may have lost the wallet meanwhile, and its new owner may judge the step
   * at any moment; and a request whose timestamp aged past maxSendAgeMs (a quarter of api.ts_window)
   * is better signed again than sent to be refused as stale.
   */
  private holdBack(plan: PlanWithSteps, prepared: PreparedRequest): string | undefined {
    if (this.deps.stillHolds?.(plan.address) === false) return "this daemon lost the wallet's lease while the request waited to go out";
    // The kill switch or the clock bound, engaged while the signed request waited for its turn:
    // it holds what has not gone out yet too (back to planned, nothing spent).
    const gate = this.deps.signingGate?.(plan.address);
    if (gate !== undefined) return `signing was paused while the request waited to go out: ${gate.reason}`;
    if (ruleSwitchedOff(this.deps.config().rules, plan)) return `rule ${plan.rule} was switched off (enabled: false) while the request waited to go out`;
    const windowMs = this.deps.config().api?.tsWindowMs;
    if (windowMs === undefined) return undefined;
    const ageMs = this.deps.clock.now() - prepared.ts * 1000;
    const maxMs = maxSendAgeMs(windowMs);
    return ageMs > maxMs ? `its signed timestamp is ${Math.round(ageMs / 1000)} s old after waiting to go out, more than ${Math.round(maxMs / 1000)} s (a quarter of api.ts_window)` : undefined;
  }

  /**
   * Held back before any byte went out: back to planned, signed afresh (a new timestamp) when it is
   * tried again. With shared state that write is fenced: a daemon whose lease is gone cannot make
   * it, and leaves the step `sending` for the wallet's new owner, which recovers it as unknown and
   * judges it only once its timestamp is beyond the window.
   */
  private async withheld(plan: PlanWithSteps, step: StepRow, err: ApiError, log: Logger): Promise<StepResult> {
    const message = errorSummary(err);
    try {
      await this.deps.store.markNotSent(sent(step), message, this.deps.clock.now());
    } catch (writeErr) {
      log.warn(
        { event: 'lease.fenced', err: errorSummary(writeErr), reason: message },
        `${step.kind} not sent, and not put back to planned either (${errorSummary(writeErr)}); it stays in flight for the wallet's owner to recover`,
      );
      return 'retry_later';
    }
    this.deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'deferred' });
    log.warn({ event: 'action.deferred', err: message }, `${step.kind} not sent after waiting to go out; it will be signed again`);
    return 'retry_later';
  }

  /**
   * What an applied claim answered without claimed_sol, already recorded acknowledged, is proved to
   * have brought, when a step of its plan is sized from it (with claimed_sol: boundClaimed; sizing
   * nothing: the pending seen, the larger count for day limits). The pending seen before the claim
   * is no proof of what arrived (a fee, a partial claim, a server that says nothing of either): a
   * summary read after the answer bounds it by lifetime's rise (reconcile.ts provedClaimed), recorded
   * as the plan's claimed amount. With no rise to show, nothing is proved and undefined leaves the
   * plan's claimed amount unknown, so those steps are skipped (executor.ts), never guessed.
   */
  private async claimedOf(plan: PlanWithSteps, step: StepRow, log: Logger, seen: Lamports, before: ClaimBaseline | undefined): Promise<Lamports | undefined> {
    this.deps.failpoint('after_claim_acknowledged');
    let proved: Lamports | undefined;
    let why = 'no pre-claim summary was recorded';
    if (before !== undefined) {
      try {
        proved = provedClaimed(before, await this.deps.api.walletSummary(plan.address));
        why = 'the summary read after it shows no rise of lifetime_sol in the same epoch';
      } catch (err) {
        why = `the summary after it could not be read (${errorSummary(err)})`;
      }
    }
    this.deps.failpoint('during_claim_proof');
    if (proved !== undefined) {
      try {
        await this.deps.store.recordClaimed(step.id, proved, this.deps.clock.now());
      } catch (err) {
        // A fenced write (the lease lost meanwhile): unrecorded, the amount proves nothing to whoever runs the plan next.
        why = `what it brought could not be recorded (${errorSummary(err)})`;
        proved = undefined;
      }
    }
    if (proved !== undefined) {
      this.deps.failpoint('after_claim_proved');
      return proved;
    }
    log.warn(
      { event: 'action.claim_unproved', seen_sol: formatSol(seen), reason: why },
      `the claim was acknowledged without claimed_sol and ${why}: what it brought is not proved, so the steps sized from it ("N%", "all") will not run`,
    );
    return undefined;
  }

  /**
   * What an applied claim counts as having claimed: never more than the pending seen right
   * before it was signed (SPEC §2); the percent and "all" steps after it are sized from the bound.
   * Rewards accrue between that read and the claim, so a little more is normal (debug); more than
   * ACCRUAL_SLACK allows is wrong or hostile: an anomaly (error, webhook, metric).
   */
  private boundClaimed(plan: PlanWithSteps, step: StepRow, log: Logger, said: Lamports | null, seen: Lamports): Lamports {
    if (said === null) return seen;
    if (said <= seen) return said;
    if (said <= seen + accrualSlack(seen)) {
      log.debug({ event: 'action.claim_accrued', claimed_sol: formatSol(said), seen_sol: formatSol(seen) }, 'the claim took a little more than the pending seen before it (accrual); counting what was seen');
      return seen;
    }
    log.error(
      { event: 'action.anomaly', claimed_sol: formatSol(said), seen_sol: formatSol(seen) },
      `the API says the claim took ${formatSol(said)} SOL, more than the ${formatSol(seen)} SOL pending seen just before it; counting ${formatSol(seen)} SOL`,
    );
    this.deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'anomaly', amountLamports: said });
    return seen;
  }

  /** `tx`: the one a 2xx answer named although it did not say the action was applied (a `pending`), to look up. */
  private async markUnknown(plan: PlanWithSteps, step: StepRow, log: Logger, r: ResponseRecord & { error: string }, tx?: string): Promise<StepResult> {
    await this.deps.store.markUnknown(sent(step), r, this.deps.clock.now());
    this.deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'unknown', tx });
    if (step.kind === 'claim') {
      log.warn({ event: 'action.unknown', status: r.status, err: r.error, request_id: r.requestId }, 'claim outcome unknown; reconciling from the wallet summary');
    } else {
      log.error(
        { event: 'action.unknown', status: r.status, err: r.error, request_id: r.requestId },
        `${step.kind} outcome unknown; it will NOT be re-sent. Further deposits, mints, withdraws and burns of this wallet are held until an operator runs \`autoclaim actions resolve ${step.id} --applied|--not-applied\``,
      );
    }
    return 'unknown';
  }

  private async classifyFailure(plan: PlanWithSteps, step: StepRow, err: unknown, log: Logger): Promise<StepResult> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const e = err instanceof ApiError ? err : undefined;
    const message = errorSummary(err);
    if (e?.disposition === 'not_sent' || (e?.disposition === 'refused' && e.status === 429)) {
      // Provably not applied: the step goes back to planned and is tried again later, freshly signed.
      await store.markNotSent(sent(step), message, now);
      this.deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'deferred' });
      const level = e.status === 429 ? 'debug' : 'warn';
      log[level]({ event: 'action.deferred', status: e.status, err: message }, `${step.kind} not sent; it will be tried again`);
      return 'retry_later';
    }
    const scope = e?.disposition === 'refused' ? requestRefusalScope(e.status, [e.serverCode, e.serverMessage, e.message].join(' ')) : undefined;
    if (e !== undefined && scope !== undefined) return await this.requestRefused(plan, step, e, scope, message, log);
    if (e?.disposition === 'refused') {
      await store.markRejected(sent(step), { status: e.status, responseRaw: e.rawBody, requestId: e.requestId, error: message }, now);
      const refusal = serverRefusal(e);
      this.deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'rejected', ...refusal });
      await store.skipRemaining(plan.id, `${step.kind} was rejected`, now);
      log.warn({ event: 'action.rejected', status: e.status, err: message, error_code: e.serverCode, request_id: e.requestId }, `${step.kind} rejected by the API`);
      this.clockSkewFrom(refusal, message, log);
      return 'rejected';
    }
    // Timeout, reset, 5xx, a 2xx we cannot read, or a bug of ours: the request may have been applied.
    return await this.markUnknown(plan, step, log, { status: e?.status, responseRaw: e?.rawBody, requestId: e?.requestId, error: message });
  }

  /**
   * The server refused the request itself (signature, timestamp, headers, auth): the step and its
   * plan end `failed`, which spends no limit (unless an earlier step of it was applied), and signing pauses (every wallet for 401/403, this
   * wallet otherwise) until a restart or a reload that changes the api settings. Sending more
   * requests the server calls invalid would only fail the same way, and could burn the epochs of
   * every rule on a setup mistake.
   */
  private async requestRefused(plan: PlanWithSteps, step: StepRow, e: ApiError, scope: 'all' | 'wallet', message: string, log: Logger): Promise<StepResult> {
    const now = this.deps.clock.now();
    await this.deps.store.markFailed(sent(step), { status: e.status, responseRaw: e.rawBody, requestId: e.requestId, error: message }, now);
    // The hint and the fix come from the server's words (refusal.ts), never from the status alone.
    const refusal = serverRefusal(e);
    const hint = refusal.hint ?? 'unknown';
    const fix = REFUSAL_FIX[hint];
    this.deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'failed', ...refusal });
    const said = [e.serverCode, e.serverMessage].filter((t) => t !== undefined).join(': ');
    const pause: SigningPause = { scope, reason: `HTTP ${e.status ?? '?'}: ${said === '' ? e.code : said}`, since: now, step: step.id, refusal, fix };
    this.pauses.pause(plan.address, pause);
    log.error(
      { event: 'action.failed', status: e.status, err: message, error_code: e.serverCode, request_id: e.requestId, hint },
      `${step.kind} refused as an invalid request; the plan is failed and counts for no limit unless an earlier step of it was applied`,
    );
    log.error(
      { event: 'signing.paused', scope, status: e.status, reason: pause.reason, ...refusal },
      `signing paused for ${scope === 'all' ? 'every wallet' : 'this wallet'}: ${fix}; a restart or a reload that changes api lifts it`,
    );
    this.deps.events?.emit('signing:paused', { scope, wallet: plan.wallet, address: plan.address, since: now, reason: pause.reason, fix, ...refusal });
    this.clockSkewFrom(refusal, message, log);
    return 'failed';
  }

  /**
   * `clock.skew` at error for a refusal, only on a clock signal: the server's words say stale,
   * expired or out of window, or its Date header is beyond alerts.clock_skew of our clock. A
   * message that only names the `-ts` header is about the headers, and says so in its own hint.
   */
  private clockSkewFrom(refusal: ServerRefusal, message: string, log: Logger): void {
    const thresholdMs = this.deps.config().alerts?.clockSkewMs ?? DEFAULT_CLOCK_SKEW_THRESHOLD_MS;
    const dateSkewMs = this.deps.api.clockSkewMs?.();
    if (!clockSignal(refusal.hint ?? 'unknown', dateSkewMs, thresholdMs)) return;
    log.error(
      { event: 'clock.skew', status: refusal.http_status, err: message, code: refusal.code, request_id: refusal.request_id, server_skew_ms: dateSkewMs },
      "the API refused a signed request over its timestamp: check this machine's clock (timedatectl, chronyc tracking)",
    );
  }
}

export function errorSummary(err: unknown): string {
  if (err instanceof AutoclaimError) return `${err.code}: ${err.message}`;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** A step whose amount is a share of the claim ("N%", "all"), not resolved yet. */
export function sizedFromClaim(s: StepRow): boolean {
  return s.amountLamports === null && s.amountSpec !== null && s.amountSpec.kind !== 'fixed';
}

/** Why a share of the claim (`step`) is skipped when the plan's claimed amount is not proved: plan.skipped's reason. */
export function unprovedShareReason(plan: PlanWithSteps, step: StepRow): string {
  const claim = plan.steps.find((s) => s.kind === 'claim');
  const how =
    plan.claimedLamports !== null
      ? 'an earlier release of autoclaim recorded the pending seen before it as its amount'
      : claim?.resolution === null
        ? 'its answer had no claimed_sol, and no summary read after it showed lifetime_sol rise (or the daemon stopped before recording one)'
        : 'it was resolved by an operator';
  return `${CLAIM_UNPROVED}: ${step.kind} is a share of the claim, and what the claim brought is not proved (${how})`;
}

/** The step with the amount its request was sized for (a claim's: the pending seen), for what its outcome tells. */
function withAmount(step: StepRow, amount: bigint): StepRow {
  return step.amountLamports === null ? { ...step, amountLamports: amount } : step;
}

/**
 * The step as its request was recorded: markSending counted this attempt, so every write about the
 * request's outcome is guarded by it (a later request of the step, signed by another daemon since,
 * is not this one's to settle).
 */
function sent(step: StepRow): StepRef {
  return { id: step.id, attempt: step.attempts + 1 };
}
