// Executes the steps of a recorded plan, in order, with the state machine of SPEC §2:
//   planned → sending → acknowledged | rejected | unknown
// `sending` is committed to SQLite before the first byte of a signed request goes out, so a crash
// at any point leaves a record that tells the next start what may have happened.
import { ApiError, AutoclaimError } from '../errors.js';
import type { Clock, Lamports, PlanStatus, Rule, SafetyConfig, SignedEndpoint, SignedOp, StepState, WalletSummary } from '../domain.js';
import { formatSol } from '../api/amount.js';
import { DEFAULT_ENDPOINTS } from '../api/endpoints.js';
import type { Logger } from '../log/logger.js';
import { checkActionLimit, DAY_MS, recheckBeforeSigning, resolveStepAmount } from '../rules/index.js';
import type { ApiPort, PlanWithSteps, ResponseRecord, Signer, StepRow, StorePort, StoredRequest } from './ports.js';
import { claimLooksApplied } from './reconcile.js';
import { classifyAnswer, requestRefusalScope } from './answer.js';
import type { Failpoint } from './failpoints.js';

export interface WorkerDeps {
  store: StorePort;
  api: ApiPort;
  /** By wallet address: a wallet is its address, and a signer is only ever looked up by it. */
  signers: ReadonlyMap<string, Signer>;
  /** How each signed operation's answers read (applied / refused statuses); the current config's. Default: SPEC §2's sets. */
  endpoints?: () => Readonly<Record<SignedOp, Pick<SignedEndpoint, 'applied' | 'refused'>>>;
  /** By rule name; the current config's rules (a reload swaps the map). */
  rules: () => ReadonlyMap<string, Rule>;
  safety: () => SafetyConfig;
  /** See ApiConfig.claimSettleMs; the daemon passes the configured one. Absent: 0 (judge at once). */
  claimSettleMs?: () => number;
  /** Measures a claim's age for claim_settle; the daemon's decision clock, so an NTP step cannot fake it. Default: clock. */
  elapsedClock?: Clock;
  clock: Clock;
  logger: Logger;
  failpoint: Failpoint;
  /** Told when a step reaches a state worth counting (metrics, webhook); must not throw. */
  onStep?: (e: StepEvent) => void;
}

export interface StepEvent {
  kind: SignedOp;
  /** `anomaly`: the server claimed more than it could have (the step itself was still bounded). */
  state: StepState | 'deferred' | 'anomaly';
  wallet: string;
  plan: number;
  step: number;
  amountLamports?: bigint | undefined;
}

/** How one step ended for this run; anything but `acknowledged` stops the plan here for now. */
type StepResult = 'acknowledged' | 'rejected' | 'failed' | 'unknown' | 'retry_later' | 'skipped' | 'blocked' | 'paused';

// A claim reconciled as "not applied" is signed and sent again at once, but only this many times in
// one execution; after that it waits for the next poll.
const MAX_SENDS_PER_EXECUTION = 2;

/** Why signing is paused: the server refused a request as invalid, so more of the same would fail too. */
export interface SigningPause {
  /** `all`: the API key was refused (401/403); `wallet`: this wallet's request (signature, timestamp, headers). */
  scope: 'all' | 'wallet';
  reason: string;
  since: number;
  step: number;
}

export class PlanExecutor {
  /** Newest x-svc-ts signed per wallet address (Unix seconds); see signingTimeMs. */
  private readonly lastTs = new Map<string, number>();
  /** Signing paused for every wallet, or per address; lifted by a restart or liftPauses(). */
  private pausedAll: SigningPause | undefined;
  private readonly pausedWallets = new Map<string, SigningPause>();

  constructor(private readonly deps: WorkerDeps) {}

  /**
   * The time a new signed request carries. Ed25519 is deterministic and the claim message is
   * `{wallet}|{ts}`, so two claims in one second would carry the same signature and the second
   * would be refused as a replay. Each request of a wallet therefore gets a strictly newer second
   * than the last one it signed, in this process or (from the database) any earlier one — but
   * not when that last timestamp is far ahead of the wall clock: it was signed under a clock that
   * was wrong, and following it would get every request refused as from the future until the
   * clock caught up. It is dropped, with a warning. "Far" is MAX_TS_AHEAD_S for a timestamp read
   * from the database; one this process signed itself may run ahead by one second per request
   * when a wallet signs several in a second, so it is trusted up to MAX_OWN_TS_AHEAD_S.
   */
  private signingTimeMs(address: string, log: Logger): number {
    const nowSec = Math.floor(this.deps.clock.now() / 1000);
    const own = this.lastTs.get(address);
    let last = own ?? this.deps.store.lastRequestTs(address) ?? 0;
    if (last >= nowSec + (own === undefined ? MAX_TS_AHEAD_S : MAX_OWN_TS_AHEAD_S)) {
      log.warn(
        { event: 'clock.skew', last_ts: last, now_ts: nowSec, ahead_s: last - nowSec },
        `the last signed timestamp of this wallet is ${last - nowSec}s ahead of the clock (it was signed while the clock was wrong); signing with the clock's time again`,
      );
      last = 0;
    }
    const ts = Math.max(nowSec, last + 1);
    this.lastTs.set(address, ts);
    return ts * 1000;
  }

  /** Why signing is paused for this address, if it is. */
  pausedFor(address: string): SigningPause | undefined {
    return this.pausedAll ?? this.pausedWallets.get(address);
  }

  /** Every pause in force (for readiness and status). */
  pauses(): { all: SigningPause | undefined; wallets: ReadonlyMap<string, SigningPause> } {
    return { all: this.pausedAll, wallets: this.pausedWallets };
  }

  /** The setup changed (a reload of the api settings): let signing try again. */
  liftPauses(): number {
    const n = this.pausedWallets.size + (this.pausedAll === undefined ? 0 : 1);
    this.pausedAll = undefined;
    this.pausedWallets.clear();
    return n;
  }

  /** Runs a plan's remaining steps. Never throws for API trouble; returns the plan's status. */
  async execute(planId: number): Promise<PlanStatus> {
    const { store, clock } = this.deps;
    let plan = store.getPlan(planId);
    if (plan === undefined || plan.status !== 'open' && plan.status !== 'blocked') return plan?.status ?? 'failed';
    for (const step of [...plan.steps].sort((a, b) => a.idx - b.idx)) {
      if (step.state === 'acknowledged' || step.state === 'skipped') continue;
      if (step.state === 'rejected') break;
      const result = await this.runStep(plan, step);
      if (result !== 'acknowledged') break;
      // A claim's acknowledgement records what was claimed; the next step's percent is of that.
      plan = store.getPlan(planId) ?? plan;
    }
    return store.finishPlan(planId, clock.now());
  }

  private async runStep(plan: PlanWithSteps, step: StepRow): Promise<StepResult> {
    if (step.state === 'planned' && this.pausedFor(plan.address) !== undefined) {
      // The last signed request was refused as invalid; the step waits, unspent, for a fix.
      return 'paused';
    }
    if (step.state === 'sending') {
      // Only recoverInFlight() at start-up may decide about a step left in flight.
      return 'unknown';
    }
    if (step.kind === 'claim') return this.runClaim(plan, step);
    if (step.state === 'unknown') return 'unknown'; // deposits and mints wait for the operator
    return this.runTransfer(plan, step);
  }

  // ------------------------------------------------------------------------------------------
  // claim

  private async runClaim(plan: PlanWithSteps, step: StepRow): Promise<StepResult> {
    let current = step;
    for (let sends = 0; ; ) {
      if (current.state === 'unknown') {
        const r = await this.reconcileClaim(plan, current);
        if (r !== 'retry_later') return r;
        current = this.reload(current);
      }
      if (current.state !== 'planned') return current.state === 'acknowledged' ? 'acknowledged' : 'unknown';
      if (sends >= MAX_SENDS_PER_EXECUTION) return 'retry_later';
      if (this.deps.store.claimInDoubt(plan.address, current.id)) {
        // Another plan's claim is unknown: settle it first (see decide's claim_in_doubt).
        this.stepLogger(plan, current).info({ event: 'action.blocked' }, 'claim held back: an earlier claim of this wallet is still unknown');
        return 'blocked';
      }
      sends++;
      const r = await this.sendClaim(plan, current);
      if (r !== 'unknown') return r;
      current = this.reload(current);
    }
  }

  private async sendClaim(plan: PlanWithSteps, step: StepRow): Promise<StepResult> {
    const { api } = this.deps;
    const log = this.stepLogger(plan, step);
    const signer = this.signer(plan);
    if (signer === undefined) return this.skip(plan, 'no key loaded for this wallet');

    // Read the summary fresh and judge every limit again right before signing (SPEC §2).
    const fresh = await this.freshSummary(plan, log);
    if (fresh === undefined) return 'retry_later';
    if (fresh.pendingLamports === 0n) return this.skip(plan, 'nothing to claim');
    // What this claim can take is what was just seen: the plan counts for that against its day.
    const blocked = this.recheck(plan, step, log, { fresh, stepLamports: fresh.pendingLamports, planLamports: fresh.pendingLamports });
    if (blocked !== undefined) return blocked;

    const prepared = api.prepare({ op: 'claim', wallet: plan.address, epoch: plan.epoch }, signer, this.signingTimeMs(plan.address, log));
    const request: StoredRequest = {
      ...recordOf(prepared),
      before: {
        pendingLamports: fresh.pendingLamports.toString(),
        lifetimeLamports: fresh.lifetimeLamports?.toString() ?? null,
        epoch: fresh.epoch,
      },
    };
    if (!this.commitSending(plan, step, request, log)) return 'retry_later';
    return this.send(plan, step, prepared, log, fresh.pendingLamports);
  }

  private async reconcileClaim(plan: PlanWithSteps, step: StepRow): Promise<StepResult> {
    const { store, clock } = this.deps;
    const log = this.stepLogger(plan, step);
    const before = step.request?.before;
    const fresh = await this.freshSummary(plan, log);
    if (fresh === undefined) return 'unknown';
    this.deps.failpoint('during_reconciliation');
    if (before === undefined) {
      // Nothing to compare against: never guess that money did not move.
      log.error({ event: 'action.unknown' }, 'claim outcome unknown and no pre-claim summary recorded; resolve it with `autoclaim actions resolve`');
      return 'unknown';
    }
    const verdict = claimLooksApplied(before, fresh);
    if (verdict.outcome === 'undetermined') {
      // Never guess "not applied": a new claim could then be applied twice. It waits for a
      // summary that can tell, or for an operator.
      log.warn(
        { event: 'action.reconcile_deferred', note: verdict.note },
        before.lifetimeLamports === null
          ? `claim outcome unknown and the summary cannot tell (${verdict.note}); check it on chain and run \`autoclaim actions resolve ${step.id} --applied|--not-applied\``
          : `claim outcome unknown: ${verdict.note}; looking again at the next poll`,
      );
      return 'unknown';
    }
    const ageMs = (this.deps.elapsedClock ?? clock).now() - (step.request?.ts ?? 0) * 1000;
    const settleMs = this.deps.claimSettleMs?.() ?? 0;
    if (!verdict.applied && ageMs < settleMs) {
      // A slow server may still be holding the claim: judging it "not applied" now and signing a
      // new one could let both land. Stay unknown and look again at the next poll.
      log.info(
        { event: 'action.reconcile_deferred', age_ms: ageMs, settle_ms: settleMs },
        'claim not visible in the summary yet; waiting for api.claim_settle before calling it not applied',
      );
      return 'unknown';
    }
    store.reconcile(step.id, verdict.applied, { claimedLamports: verdict.claimedLamports, note: verdict.note }, clock.now());
    log.info(
      { event: 'action.reconciled', applied: verdict.applied, note: verdict.note, claimed_sol: verdict.claimedLamports === undefined ? undefined : formatSol(verdict.claimedLamports) },
      verdict.applied ? 'claim reconciled as applied' : 'claim reconciled as not applied; it will be signed and sent again',
    );
    return verdict.applied ? 'acknowledged' : 'retry_later';
  }

  // ------------------------------------------------------------------------------------------
  // deposit and mint

  private async runTransfer(plan: PlanWithSteps, step: StepRow): Promise<StepResult> {
    const { store, api } = this.deps;
    const log = this.stepLogger(plan, step);
    const signer = this.signer(plan);
    if (signer === undefined) return this.skip(plan, 'no key loaded for this wallet');
    if (store.hasUnknownSignedStep(plan.address)) {
      log.warn({ event: 'action.blocked' }, `${step.kind} held back: an earlier deposit or mint of this wallet is unknown; resolve it with \`autoclaim actions resolve\``);
      return 'blocked';
    }
    if (step.symbol === null || step.amountSpec === null) return this.skip(plan, `${step.kind} step has no symbol or amount`);

    let amount = step.amountLamports;
    if (amount === null && step.amountSpec.kind !== 'fixed' && plan.claimedLamports === null) {
      // The claim was settled by hand (`actions resolve --applied`): what it received is unknown,
      // so a share of it cannot be computed. Guessing would move money nobody decided on.
      return this.skip(plan, `${step.kind} is a share of the claim, and the claim's amount is unknown (it was resolved by an operator)`);
    }
    if (amount === null) {
      amount = resolveStepAmount(step.amountSpec, plan.claimedLamports ?? undefined);
      store.setStepAmount(step.id, amount);
    }
    if (amount === 0n) return this.skip(plan, `${step.kind} amount resolves to 0`);

    const fresh = await this.freshSummary(plan, log);
    if (fresh === undefined) return 'retry_later';
    const blocked = this.recheck(plan, step, log, { fresh, stepLamports: amount, planLamports: plan.claimedLamports ?? plan.estimateLamports });
    if (blocked !== undefined) return blocked;

    const prepared = api.prepare({ op: step.kind, wallet: plan.address, epoch: plan.epoch, symbol: step.symbol, amount }, signer, this.signingTimeMs(plan.address, log));
    if (!this.commitSending(plan, step, recordOf(prepared), log)) return 'retry_later';
    return this.send(plan, step, prepared, log, amount);
  }

  /**
   * Every limit of the plan's rule, judged again against a summary read a moment ago (SPEC §2).
   * Undefined when the step may be signed; otherwise how this run of the plan ends: a safety cap
   * is a refusal recorded on the step, anything else skips the rest of the plan with its reason.
   */
  private recheck(
    plan: PlanWithSteps,
    step: StepRow,
    log: Logger,
    amounts: { fresh: WalletSummary; stepLamports: Lamports; planLamports: Lamports },
  ): StepResult | undefined {
    const { store, clock } = this.deps;
    if (plan.manualId !== null) {
      // A one-off `send`: an operator decided it, so no rule's conditions or limits apply; the
      // safety cap still does, as do the holds checked before this.
      const cap = checkActionLimit(amounts.stepLamports, this.deps.safety());
      return cap.ok ? undefined : this.refuse(plan, step, log, 'max_sol_per_action', cap.detail, amounts.stepLamports);
    }
    const rule = this.deps.rules().get(plan.rule);
    if (rule === undefined) return this.skip(plan, `rule ${plan.rule} is no longer configured`);
    const now = (this.deps.elapsedClock ?? clock).now();
    const firstStep = !plan.steps.some((s) => s.idx < step.idx && s.state === 'acknowledged');
    const verdict = recheckBeforeSigning({
      rule,
      plan,
      firstStep,
      stepKind: step.kind,
      stepLamports: amounts.stepLamports,
      planLamports: amounts.planLamports,
      summary: amounts.fresh,
      history: store.planHistory(plan.address, now - DAY_MS, plan.epoch),
      safety: this.deps.safety(),
      now,
    });
    if (verdict.ok) return undefined;
    if (!verdict.refuse) return this.skip(plan, verdict.detail, verdict.reason);
    return this.refuse(plan, step, log, verdict.reason, verdict.detail, amounts.stepLamports);
  }

  /** A safety cap refused the step before signing: recorded as rejected, the rest of the plan skipped. */
  private refuse(plan: PlanWithSteps, step: StepRow, log: Logger, reason: string, detail: string, lamports: Lamports): StepResult {
    log.error(
      { event: 'action.refused', reason, amount_sol: formatSol(lamports), max_sol: formatSol(this.deps.safety().maxLamportsPerAction) },
      `${step.kind} refused before signing: ${detail}`,
    );
    this.deps.store.markRefused(step.id, `${step.kind} refused before signing: ${detail}`, this.deps.clock.now());
    this.deps.onStep?.({ kind: step.kind, state: 'rejected', wallet: plan.wallet, plan: plan.id, step: step.id });
    return 'rejected';
  }

  // ------------------------------------------------------------------------------------------
  // shared

  private commitSending(plan: PlanWithSteps, step: StepRow, request: StoredRequest, log: Logger): boolean {
    try {
      this.deps.store.markSending(step.id, request, this.deps.clock.now());
    } catch (err) {
      // Fail closed: what is not recorded is not sent.
      log.error({ event: 'state.write_failed', err: errorSummary(err) }, `could not record the ${step.kind} before sending it; nothing was sent`);
      return false;
    }
    this.deps.failpoint('after_sending_committed');
    return true;
  }

  private async send(
    plan: PlanWithSteps,
    step: StepRow,
    prepared: ReturnType<ApiPort['prepare']>,
    log: Logger,
    amount: bigint,
  ): Promise<StepResult> {
    const { store, api, clock } = this.deps;
    log.info({ event: 'action.sent', amount_sol: formatSol(amount), attempt: step.attempts + 1, url: prepared.url }, `${step.kind} sent`);
    let result;
    try {
      result = await api.send(prepared);
    } catch (err) {
      this.deps.failpoint('after_answer_before_record');
      return this.classifyFailure(plan, step, err, log);
    }
    this.deps.failpoint('after_answer_before_record');

    // A 2xx says the request arrived; the body says whether it was applied.
    const verdict = classifyAnswer(result.status, result.body, (this.deps.endpoints?.() ?? DEFAULT_ENDPOINTS)[step.kind]);
    const record = { status: result.status, responseRaw: result.rawText, requestId: result.requestId };
    const request_id = result.requestId;
    const tx = typeof result.body.tx === 'string' ? result.body.tx : undefined;
    if (verdict.outcome === 'refused') {
      store.markRejected(step.id, { ...record, error: `refused: ${verdict.detail}` }, clock.now());
      this.deps.onStep?.({ kind: step.kind, state: 'rejected', wallet: plan.wallet, plan: plan.id, step: step.id });
      log.warn({ event: 'action.rejected', status: result.status, answer: verdict.status, error_code: verdict.errorCode, request_id }, `${step.kind} rejected by the API (${verdict.detail})`);
      return 'rejected';
    }
    if (verdict.outcome === 'unknown') {
      return this.markUnknown(plan, step, log, { ...record, error: `answer does not say it was applied: ${verdict.detail}` });
    }

    const claimed = step.kind === 'claim' ? this.boundClaimed(plan, step, log, result.body.claimedLamports ?? null, amount) : undefined;
    store.markAcknowledged(step.id, { ...record, claimedLamports: claimed }, clock.now());
    this.deps.onStep?.({ kind: step.kind, state: 'acknowledged', wallet: plan.wallet, plan: plan.id, step: step.id, amountLamports: claimed ?? amount });
    log.info({ event: 'action.acknowledged', status: result.status, answer: verdict.status, tx, amount_sol: formatSol(claimed ?? amount), request_id }, `${step.kind} acknowledged`);
    return 'acknowledged';
  }

  /**
   * What an applied claim counts as having claimed: never more than the pending seen right
   * before it was signed (SPEC §2). A server saying it claimed more is wrong or hostile; the
   * percent and "all" steps after it are sized from the bound, and the claim is an anomaly.
   */
  private boundClaimed(plan: PlanWithSteps, step: StepRow, log: Logger, said: Lamports | null, seen: Lamports): Lamports {
    if (said === null) return seen;
    if (said <= seen) return said;
    log.error(
      { event: 'action.anomaly', claimed_sol: formatSol(said), seen_sol: formatSol(seen) },
      `the API says the claim took ${formatSol(said)} SOL, more than the ${formatSol(seen)} SOL pending seen just before it; counting ${formatSol(seen)} SOL`,
    );
    this.deps.onStep?.({ kind: step.kind, state: 'anomaly', wallet: plan.wallet, plan: plan.id, step: step.id, amountLamports: said });
    return seen;
  }

  private markUnknown(plan: PlanWithSteps, step: StepRow, log: Logger, r: ResponseRecord & { error: string }): StepResult {
    this.deps.store.markUnknown(step.id, r, this.deps.clock.now());
    this.deps.onStep?.({ kind: step.kind, state: 'unknown', wallet: plan.wallet, plan: plan.id, step: step.id });
    if (step.kind === 'claim') {
      log.warn({ event: 'action.unknown', status: r.status, err: r.error, request_id: r.requestId }, 'claim outcome unknown; reconciling from the wallet summary');
    } else {
      log.error(
        { event: 'action.unknown', status: r.status, err: r.error, request_id: r.requestId },
        `${step.kind} outcome unknown; it will NOT be re-sent. Further deposits and mints of this wallet are held until an operator runs \`autoclaim actions resolve ${step.id} --applied|--not-applied\``,
      );
    }
    return 'unknown';
  }

  private classifyFailure(plan: PlanWithSteps, step: StepRow, err: unknown, log: Logger): StepResult {
    const { store, clock } = this.deps;
    const now = clock.now();
    const e = err instanceof ApiError ? err : undefined;
    const message = errorSummary(err);
    if (e?.disposition === 'not_sent' || (e?.disposition === 'refused' && e.status === 429)) {
      // Provably not applied: the step goes back to planned and is tried again later, freshly signed.
      store.markNotSent(step.id, message, now);
      this.deps.onStep?.({ kind: step.kind, state: 'deferred', wallet: plan.wallet, plan: plan.id, step: step.id });
      const level = e.status === 429 ? 'debug' : 'warn';
      log[level]({ event: 'action.deferred', status: e.status, err: message }, `${step.kind} not sent; it will be tried again`);
      return 'retry_later';
    }
    const scope = e?.disposition === 'refused' ? requestRefusalScope(e.status, [e.serverCode, e.serverMessage, e.message].join(' ')) : undefined;
    if (e !== undefined && scope !== undefined) return this.requestRefused(plan, step, e, scope, message, log);
    if (e?.disposition === 'refused') {
      store.markRejected(step.id, { status: e.status, responseRaw: e.rawBody, requestId: e.requestId, error: message }, now);
      this.deps.onStep?.({ kind: step.kind, state: 'rejected', wallet: plan.wallet, plan: plan.id, step: step.id });
      store.skipRemaining(plan.id, `${step.kind} was rejected`, now);
      log.warn({ event: 'action.rejected', status: e.status, err: message, error_code: e.serverCode, request_id: e.requestId }, `${step.kind} rejected by the API`);
      if (namesTheClock(e)) {
        log.error(
          { event: 'clock.skew', status: e.status, err: message },
          'the API refused a signed request over its timestamp: check this machine\'s clock (timedatectl, chronyc tracking)',
        );
      }
      return 'rejected';
    }
    // Timeout, reset, 5xx, a 2xx we cannot read, or a bug of ours: the request may have been applied.
    return this.markUnknown(plan, step, log, { status: e?.status, responseRaw: e?.rawBody, requestId: e?.requestId, error: message });
  }

  /**
   * The server refused the request itself (signature, timestamp, headers, auth): the step and its
   * plan end `failed`, which spends no limit, and signing pauses (every wallet for 401/403, this
   * wallet otherwise) until a restart or a reload that changes the api settings. Sending more
   * requests the server calls invalid would only fail the same way, and could burn the epochs of
   * every rule on a setup mistake.
   */
  private requestRefused(plan: PlanWithSteps, step: StepRow, e: ApiError, scope: 'all' | 'wallet', message: string, log: Logger): StepResult {
    const now = this.deps.clock.now();
    this.deps.store.markFailed(step.id, { status: e.status, responseRaw: e.rawBody, requestId: e.requestId, error: message }, now);
    this.deps.onStep?.({ kind: step.kind, state: 'failed', wallet: plan.wallet, plan: plan.id, step: step.id });
    const pause: SigningPause = { scope, reason: `HTTP ${e.status ?? '?'}: ${e.serverCode ?? e.serverMessage ?? e.code}`, since: now, step: step.id };
    if (scope === 'all') this.pausedAll = pause;
    else this.pausedWallets.set(plan.address, pause);
    const fix =
      scope === 'all'
        ? 'check the API key ($AUTOCLAIM_API_KEY, api.api_key_file or the api_key credential)'
        : 'check api.header_prefix, api.endpoints.*.message and api.signature_encoding against the service (autoclaim doctor)';
    log.error(
      { event: 'action.failed', status: e.status, err: message, error_code: e.serverCode, request_id: e.requestId },
      `${step.kind} refused as an invalid request; the plan is failed and counts for no limit`,
    );
    log.error(
      { event: 'signing.paused', scope, status: e.status, reason: pause.reason },
      `signing paused for ${scope === 'all' ? 'every wallet' : 'this wallet'}: ${fix}; a restart or a reload that changes api lifts it`,
    );
    if (namesTheClock(e)) {
      log.error({ event: 'clock.skew', status: e.status, err: message }, 'the API refused a signed request over its timestamp: check this machine\'s clock (timedatectl, chronyc tracking)');
    }
    return 'failed';
  }

  private async freshSummary(plan: PlanWithSteps, log: Logger): Promise<WalletSummary | undefined> {
    try {
      return await this.deps.api.walletSummary(plan.address);
    } catch (err) {
      log.warn({ event: 'poll.failed', err: errorSummary(err), request_id: (err as Partial<ApiError>).requestId }, 'could not read the wallet summary before acting; will try again later');
      return undefined;
    }
  }

  private skip(plan: PlanWithSteps, reason: string, code?: string): StepResult {
    this.deps.store.skipRemaining(plan.id, reason, this.deps.clock.now());
    this.deps.logger.info({ event: 'plan.skipped', wallet: plan.wallet, plan: plan.id, rule: plan.rule, epoch: plan.epoch, reason, code }, `plan skipped: ${reason}`);
    return 'skipped';
  }

  private signer(plan: PlanWithSteps): Signer | undefined {
    return this.deps.signers.get(plan.address);
  }

  private reload(step: StepRow): StepRow {
    const plan = this.deps.store.getPlan(step.planId);
    return plan?.steps.find((s) => s.id === step.id) ?? step;
  }

  private stepLogger(plan: PlanWithSteps, step: StepRow): Logger {
    return this.deps.logger.child({
      wallet: plan.wallet,
      epoch: plan.epoch,
      plan: plan.id,
      step: step.id,
      kind: step.kind,
      symbol: step.symbol ?? undefined,
      rule: plan.rule,
    });
  }
}

/** A stored last timestamp further ahead of the wall clock than this was signed under a wrong clock. */
export const MAX_TS_AHEAD_S = 5;
/** The same for one this process signed: a burst of requests may legitimately run it a little ahead. */
export const MAX_OWN_TS_AHEAD_S = 60;

/** A refusal whose words are about the request's time: the clock, not the config, is wrong. */
function namesTheClock(e: ApiError): boolean {
  const text = [e.serverCode, e.serverMessage, e.message].filter((t) => t !== undefined).join(' ');
  return /timestamp|\bts\b|clock|skew|expired|too old|in the future|stale/i.test(text);
}

function recordOf(p: ReturnType<ApiPort['prepare']>): StoredRequest {
  return { method: p.method, url: p.url, ts: p.ts, message: p.message, body: p.body };
}

export function errorSummary(err: unknown): string {
  if (err instanceof AutoclaimError) return `${err.code}: ${err.message}`;
  if (err instanceof Error) return err.message;
  return String(err);
}
