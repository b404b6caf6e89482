// Executes the steps of a recorded plan, in order, with the state machine of SPEC §2:
//   planned → sending → acknowledged | rejected | failed | unknown
// `sending` is committed to SQLite before the first byte of a signed request goes out, so a crash
// at any point leaves a record that tells the next start what may have happened. Before that,
// every limit is judged again on a fresh summary (rules/recheck.ts); after it, the answer is
// classified and recorded by outcome.ts; when and whether to sign is signing-guard.ts's.
// The executor/ folder: wallet-cycle.ts (one wallet's turn: poll, decide, plan, execute); this
// executor with signing-guard.ts, answer.ts (what a 2xx body says), outcome.ts (recording it) and
// reconcile.ts (a lost claim answer); deps.ts and ports.ts (its edges); clock-skew.ts and
// decision-clock.ts (time); failpoints.ts (crash tests).
import type { ApiError } from '../errors.js';
import type { Lamports, PlanStatus, WalletSummary } from '../domain.js';
import { formatSol } from '../amount.js';
import type { Logger } from '../log/logger.js';
import { amountFields, checkActionLimit, claimDayLamports, movesSol, planDayLamports, resolveStepAmount, stepAmounts, unitsOf } from '../rules/amounts.js';
import { historyLookbackMs } from '../rules/limits.js';
import { claimWaitsForEpoch, recheckBeforeSigning } from '../rules/recheck.js';
import type { PlanWithSteps, PreparedRequest, StepRow, StoredRequest, UnsignedRequest, WalletSigner } from './ports.js';
import { beyondWindow, judgingNowMs } from '../api/ts-window.js';
import { CLAIM_UNDETERMINED, CLAIM_UNPROVED, heldForOperator } from '../store/plan-status.js';
import { claimLooksApplied } from './reconcile.js';
import type { SigningPause, StepResult, WorkerDeps } from './deps.js';
import { epochWait, errorSummary, OutcomeRecorder, stepEventOf, unprovedShareReason } from './outcome.js';
import { SigningPauses, SigningTime } from './signing-guard.js';
import { ids, recordOf, signAndSend } from './sign-step.js';
import { untilRuleIdsSettled } from './rule-ids-settle.js';
import { ruleSwitchedOff } from './kill-switch.js';

export type { SigningPause, StepEvent, WorkerDeps } from './deps.js';
export { errorSummary } from './outcome.js';

// A claim reconciled as "not applied" is signed and sent again at once, but only this many times in
// one execution; after that it waits for the next poll.
const MAX_SENDS_PER_EXECUTION = 2;

export class PlanExecutor {
  private readonly time: SigningTime;
  private readonly pauses_ = new SigningPauses();
  private readonly outcomes: OutcomeRecorder;
  /** The steps this process has recorded `sending` and not yet settled: the per-turn recovery leaves them alone. */
  private readonly sending = new Set<number>();

  constructor(private readonly deps: WorkerDeps) {
    this.time = new SigningTime(deps.clock, deps.store);
    this.outcomes = new OutcomeRecorder(deps, this.pauses_);
  }

  /** Why signing is paused for this address, if it is. */
  pausedFor(address: string): SigningPause | undefined {
    return this.deps.signingGate?.(address) ?? this.pauses_.pausedFor(address);
  }

  /** Every pause in force (for readiness and status). */
  pauses(): { all: SigningPause | undefined; wallets: ReadonlyMap<string, SigningPause> } {
    const current = this.pauses_.current();
    return { all: this.deps.signingGate?.(undefined) ?? current.all, wallets: current.wallets };
  }

  /** The pauses the server's refusals caused, without the gate (the clock, the kill switch). */
  refusalPauses(): { all: SigningPause | undefined; wallets: ReadonlyMap<string, SigningPause> } {
    return this.pauses_.current();
  }

  /** The setup changed (a reload of the signing settings): let signing try again. Returns how many pauses were lifted. */
  liftPauses(): number {
    return this.pauses_.lift();
  }

  /**
   * The ids of the steps being sent by this process right now (from before `sending` is committed
   * until the outcome is recorded): any other step found `sending` was left by a process gone.
   */
  inFlight(): ReadonlySet<number> {
    return this.sending;
  }

  /** Runs a plan's remaining steps. Never throws for API trouble; returns the plan's status. */
  async execute(planId: number): Promise<PlanStatus> {
    const { store, clock } = this.deps;
    let plan = await store.getPlan(planId);
    if (plan === undefined || plan.status !== 'open' && plan.status !== 'blocked') return plan?.status ?? 'failed';
    for (const step of [...plan.steps].sort((a, b) => a.idx - b.idx)) {
      if (step.state === 'acknowledged' || step.state === 'skipped') continue;
      if (step.state === 'rejected') break;
      const result = await this.runStep(plan, step);
      if (result !== 'acknowledged') break;
      // A claim's acknowledgement records what was claimed; the next step's percent is of that.
      plan = (await store.getPlan(planId)) ?? plan;
    }
    return await store.finishPlan(planId, clock.now());
  }

  private async runStep(plan: PlanWithSteps, step: StepRow): Promise<StepResult> {
    // A refusal of the last signed request, or a kill switch (the rule's too): the step waits, unspent.
    if (step.state === 'planned' && (this.pausedFor(plan.address) !== undefined || this.ruleOff(plan))) return 'paused';
    if (step.state === 'sending') {
      // Only recoverInFlight() (at start-up, a takeover, or the wallet's turn) may decide about a step left in flight.
      return 'unknown';
    }
    if (step.kind === 'claim') return this.runClaim(plan, step);
    if (step.state === 'unknown') return 'unknown'; // deposits, mints, withdraws and burns wait for the operator
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
        current = await this.reload(current);
      }
      if (current.state !== 'planned') return current.state === 'acknowledged' ? 'acknowledged' : 'unknown';
      if (sends >= MAX_SENDS_PER_EXECUTION) return 'retry_later';
      // Reconciled as not applied just now: it is signed again only if signing may go on.
      if (this.pausedFor(plan.address) !== undefined) return 'paused';
      if (await this.deps.store.claimInDoubt(plan.address, current.id)) {
        // Another plan's claim is unknown: settle it first (see decide's claim_in_doubt).
        this.stepLogger(plan, current).info({ event: 'action.blocked' }, 'claim held back: an earlier claim of this wallet is still unknown');
        return 'blocked';
      }
      sends++;
      const r = await this.sendClaim(plan, current);
      if (r !== 'unknown') return r;
      current = await this.reload(current);
    }
  }

  private async sendClaim(plan: PlanWithSteps, step: StepRow): Promise<StepResult> {
    const { api } = this.deps;
    const log = this.stepLogger(plan, step);
    const signer = this.signer(plan);
    if (signer === undefined) return await this.skip(plan, 'no key loaded for this wallet');

    // Read the summary fresh and judge every limit again right before signing (SPEC §2).
    const fresh = await this.freshSummary(plan, log);
    if (fresh === undefined) return 'retry_later';
    if (fresh.pendingLamports === 0n && (plan.manualId !== null || !claimWaitsForEpoch('claim', fresh.epoch, plan.epoch))) return await this.skip(plan, 'nothing to claim'); // a rule's, behind: it waits (recheck.ts)
    // What this claim can take is what was just seen: the plan counts for that (and its fixed amounts).
    const blocked = await this.recheck(plan, step, log, { fresh, stepLamports: fresh.pendingLamports, planLamports: planDayLamports(stepAmounts(plan), fresh.pendingLamports) });
    if (blocked !== undefined) return blocked;

    const unsigned = api.unsigned({ op: 'claim', wallet: plan.address, epoch: plan.epoch, ...ids(plan, step) }, await this.time.next(plan.address, log));
    const request: StoredRequest = {
      ...recordOf(unsigned),
      before: {
        pendingLamports: fresh.pendingLamports.toString(),
        lifetimeLamports: fresh.lifetimeLamports?.toString() ?? null,
        epoch: fresh.epoch,
      },
    };
    return this.commitAndSend(plan, step, signer, unsigned, request, log, (prepared) => this.outcomes.send(plan, step, prepared, log, fresh.pendingLamports, request.before));
  }

  private async reconcileClaim(plan: PlanWithSteps, step: StepRow): Promise<StepResult> {
    const { store, clock } = this.deps;
    const log = this.stepLogger(plan, step);
    // Held for an operator: no later summary may settle it, since the one that moved could not.
    if (heldForOperator(step)) return 'unknown';
    const before = step.request?.before;
    // The window is judged before the summary is read: judged after, a pause between the two would
    // let a summary read before a late arrival of the old request pass for one read after the
    // window (the claim-gap model's SUMMARY_FIRST, docs/reliability.md).
    const window = await this.windowAge(step, log);
    const fresh = await this.freshSummary(plan, log);
    if (fresh === undefined) return 'unknown';
    this.deps.failpoint('during_reconciliation');
    if (before === undefined) {
      // Nothing to compare against: never guess that money did not move.
      log.error({ event: 'action.unknown' }, 'claim outcome unknown and no pre-claim summary recorded; resolve it with `autoclaim actions resolve`');
      return 'unknown';
    }
    const verdict = claimLooksApplied(before, fresh);
    if (verdict.outcome === 'undetermined' && verdict.moved) return await this.holdUndetermined(plan, step, verdict.note, log);
    if (verdict.outcome === 'undetermined') {
      // Never guess "not applied": a new claim could then be applied twice. Nothing moved, so it
      // waits for a summary that can tell, or for an operator.
      log.warn(
        { event: 'action.reconcile_deferred', note: verdict.note },
        before.lifetimeLamports === null
          ? `claim outcome unknown and the summary cannot tell (${verdict.note}); check it on chain and run \`autoclaim actions resolve ${step.id} --applied|--not-applied\``
          : `claim outcome unknown: ${verdict.note}; looking again at the next poll`,
      );
      return 'unknown';
    }
    if (!verdict.applied && window?.beyond !== true) {
      if (window !== undefined) {
        log.info(
          { event: 'action.reconcile_deferred', age_ms: window.ageMs, settle_ms: window.settleMs },
          "claim not visible in the summary yet; waiting until its signed timestamp is older than api.claim_settle by the state store's clock and the service's (no copy of it can be accepted then) before calling it not applied",
        );
      }
      return 'unknown';
    }
    await store.reconcile({ id: step.id, attempt: step.attempts }, verdict.applied, { claimedLamports: verdict.claimedLamports, note: verdict.note }, clock.now());
    log.info(
      { event: 'action.reconciled', applied: verdict.applied, note: verdict.note, claimed_sol: verdict.claimedLamports === undefined ? undefined : formatSol(verdict.claimedLamports) },
      verdict.applied ? 'claim reconciled as applied' : 'claim reconciled as not applied; it will be signed and sent again',
    );
    return verdict.applied ? 'acknowledged' : 'retry_later';
  }

  /**
   * Whether no copy of the step's signed request can be accepted any more (SPEC §2): its timestamp
   * older than api.claim_settle (default ts_window + margin), by the store's clock — the database's
   * with shared state, so a new owner does not judge an old owner's timestamp on a clock of its own.
   * Until then a paused daemon, or a slow server, may still land it, and a new claim could land too.
   * And by the service's clock, when its last `Date` is behind (ts-window.ts judgingNowMs).
   */
  private async windowAge(step: StepRow, log: Logger): Promise<{ ageMs: number; settleMs: number; beyond: boolean } | undefined> {
    const settleMs = this.deps.config().api?.claimSettleMs ?? 0;
    let nowMs: number;
    try {
      nowMs = await this.deps.store.clockNow();
    } catch (err) {
      log.warn({ event: 'action.reconcile_deferred', err: errorSummary(err) }, "the state store's clock could not be read, so a lost claim cannot be judged not applied; looking again at the next poll");
      return undefined;
    }
    const judgedMs = judgingNowMs(nowMs, this.deps.clock.now(), this.deps.api.clockSkewMs?.());
    return { ...beyondWindow(step.request?.ts ?? 0, judgedMs, settleMs), settleMs };
  }

  /**
   * The summary moved, but not as only a claim moves it (a pending drop alone, an epoch rollover):
   * the claim is neither re-sent nor believed. It stays unknown, held for an operator (so it keeps
   * holding this wallet's other claims: claim_in_doubt), the rest of its plan is skipped — above
   * all any step sized from it — and the supervisor raises the claim_undetermined alert.
   */
  private async holdUndetermined(plan: PlanWithSteps, step: StepRow, note: string, log: Logger): Promise<StepResult> {
    const { store, clock } = this.deps;
    // The rest first: a held claim is never judged again, so a process dead between the two writes must leave its plan ended, not the claim held.
    await this.skip(plan, `${CLAIM_UNDETERMINED}: the claim's outcome cannot be told from the summary (step ${step.id} is held for an operator)`, CLAIM_UNDETERMINED);
    await store.holdForOperator({ id: step.id, attempt: step.attempts }, `${CLAIM_UNDETERMINED}: ${note}`, clock.now());
    log.error(
      { event: 'action.claim_undetermined', reason: CLAIM_UNDETERMINED, note },
      `claim outcome undetermined: ${note}. It will not be sent again and nothing sized from it runs; check it on chain, then run \`autoclaim actions resolve ${step.id} --applied|--not-applied\``,
    );
    return 'unknown';
  }

  // ------------------------------------------------------------------------------------------
  // deposit, mint, withdraw and burn

  private async runTransfer(plan: PlanWithSteps, step: StepRow): Promise<StepResult> {
    const { store, api } = this.deps;
    const log = this.stepLogger(plan, step);
    const signer = this.signer(plan);
    if (signer === undefined) return await this.skip(plan, 'no key loaded for this wallet');
    if (await store.hasUnknownSignedStep(plan.address)) {
      log.warn({ event: 'action.blocked' }, `${step.kind} held back: an earlier deposit, mint, withdraw or burn of this wallet is unknown; resolve it with \`autoclaim actions resolve\``);
      return 'blocked';
    }
    if (step.symbol === null || step.amountSpec === null) return await this.skip(plan, `${step.kind} step has no symbol or amount`);

    let amount = step.amountLamports;
    // Recorded before the config refused it: a share of the SOL claimed is no count of shares or tokens.
    if (amount === null && step.amountSpec.kind !== 'fixed' && !movesSol(step.kind)) return await this.skip(plan, `${step.kind} is a share of the claim, but a ${step.kind} takes ${unitsOf(step)}, not SOL`);
    if (step.amountSpec.kind !== 'fixed' && (plan.claimedLamports === null || !plan.claimedProved)) {
      // Not proved (settled by hand, no claimed_sol and no lifetime rise, or an earlier release's pending seen, even if it sized this step): guessing would move money nobody decided on.
      this.deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'skipped' });
      return await this.skip(plan, unprovedShareReason(plan, step), CLAIM_UNPROVED);
    }
    if (amount === null) {
      amount = resolveStepAmount(step.amountSpec, plan.claimedLamports ?? undefined);
      await store.setStepAmount(step.id, amount);
    }
    if (amount === 0n) return await this.skip(plan, `${step.kind} amount resolves to 0`);

    const fresh = await this.freshSummary(plan, log);
    if (fresh === undefined) return 'retry_later';
    const blocked = await this.recheck(plan, step, log, { fresh, stepLamports: amount, planLamports: planDayLamports(stepAmounts(plan), claimDayLamports(plan)) });
    if (blocked !== undefined) return blocked;

    const unsigned = api.unsigned({ op: step.kind, wallet: plan.address, epoch: plan.epoch, symbol: step.symbol, amount, ...ids(plan, step) }, await this.time.next(plan.address, log));
    return this.commitAndSend(plan, step, signer, unsigned, recordOf(unsigned), log, (prepared) => this.outcomes.send(plan, step, prepared, log, amount));
  }

  /**
   * Every limit of the plan's rule, judged again against a summary read a moment ago (SPEC §2).
   * Undefined when the step may be signed; otherwise how this run of the plan ends: a safety cap
   * is a refusal recorded on the step, anything else skips the rest of the plan with its reason.
   */
  private async recheck(
    plan: PlanWithSteps,
    step: StepRow,
    log: Logger,
    amounts: { fresh: WalletSummary; stepLamports: Lamports; planLamports: Lamports },
  ): Promise<StepResult | undefined> {
    const { store, clock } = this.deps;
    if (plan.manualId !== null) {
      // A one-off `send`: an operator decided it, so no rule's conditions or limits apply; the
      // safety cap still does, as do the holds checked before this.
      const cap = checkActionLimit(amounts.stepLamports, this.deps.config().safety, unitsOf(step));
      return cap.ok ? undefined : await this.refuse(plan, step, log, 'max_sol_per_action', cap.detail, amounts.stepLamports);
    }
    // Plans are keyed by the rule's id (its name unless set): a renamed rule keeps its plans, once
    // a reload has carried its id (until then, or unread, a rule kept across it would look gone).
    if (!(await untilRuleIdsSettled(this.deps.ruleIdsSettled))) return 'retry_later';
    const config = this.deps.config();
    const rule = config.rules.find((r) => r.id === plan.rule);
    if (rule === undefined) return await this.skip(plan, `rule ${plan.rule} is no longer configured`);
    // Still configured, but taken off this wallet's list by a reload: for this wallet it is gone too.
    const wallet = config.wallets?.find((w) => w.address === plan.address);
    if (wallet !== undefined && !wallet.rules.includes(rule.name)) return await this.skip(plan, `rule ${rule.name} no longer applies to wallet ${wallet.name}`);
    // The rule's kill switch, put on by a reload while this step's fresh read waited: held, as the wallet's.
    if (rule.enabled === false) return 'paused';
    const now = (this.deps.elapsedClock ?? clock).now();
    const firstStep = !plan.steps.some((s) => s.idx < step.idx && s.state === 'acknowledged');
    const verdict = recheckBeforeSigning({
      rule,
      plan,
      firstStep,
      stepKind: step.kind,
      stepLamports: amounts.stepLamports, stepSymbol: step.symbol ?? undefined,
      planLamports: amounts.planLamports,
      summary: amounts.fresh,
      history: await store.planHistory(plan.address, now - historyLookbackMs([rule]), plan.epoch),
      safety: config.safety,
      now,
    });
    if (verdict.ok) return undefined;
    if (!verdict.refuse) return verdict.wait === true ? epochWait(log, step, verdict.detail, amounts.fresh.epoch) : await this.skip(plan, verdict.detail, verdict.reason);
    return await this.refuse(plan, step, log, verdict.reason, verdict.detail, amounts.stepLamports);
  }

  /** A safety cap refused the step before signing: recorded as rejected, the rest of the plan skipped. */
  private async refuse(plan: PlanWithSteps, step: StepRow, log: Logger, reason: string, detail: string, lamports: Lamports): Promise<StepResult> {
    log.error(
      { event: 'action.refused', reason, ...amountFields(step.kind, step.symbol, lamports), max_sol: formatSol(this.deps.config().safety.maxLamportsPerAction) },
      `${step.kind} refused before signing: ${detail}`,
    );
    await this.deps.store.markRefused(step.id, `${step.kind} refused before signing: ${detail}`, this.deps.clock.now());
    this.deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'rejected', amountLamports: lamports });
    return 'rejected';
  }

  // ------------------------------------------------------------------------------------------
  // shared

  /** Records `sending`, asks the signer, records the signature, sends (sign-step.ts). */
  private async commitAndSend(
    plan: PlanWithSteps,
    step: StepRow,
    signer: WalletSigner,
    unsigned: UnsignedRequest,
    request: StoredRequest,
    log: Logger,
    send: (prepared: PreparedRequest) => Promise<StepResult>,
  ): Promise<StepResult> {
    // The gate again, right before the signature: the step's fresh summary may have waited in the
    // rate limiter (a 429's pause: minutes) since runStep asked, and a pause that came meanwhile
    // (the kill switch, the clock bound, a refusal) holds it too. Still planned: nothing spent.
    if (this.pausedFor(plan.address) !== undefined) return 'paused';
    // The key loaded now: one a reload replaced while the step waited must not sign (Daemon.reload).
    return signAndSend(this.deps, this.sending, { plan, step, signer: this.signer(plan) ?? signer, unsigned, request, log }, send);
  }

  private ruleOff(plan: PlanWithSteps): boolean {
    return ruleSwitchedOff(this.deps.config().rules, plan);
  }

  private async freshSummary(plan: PlanWithSteps, log: Logger): Promise<WalletSummary | undefined> {
    try {
      return await this.deps.api.walletSummary(plan.address);
    } catch (err) {
      log.warn({ event: 'poll.failed', err: errorSummary(err), request_id: (err as Partial<ApiError>).requestId }, 'could not read the wallet summary before acting; will try again later');
      return undefined;
    }
  }

  private async skip(plan: PlanWithSteps, reason: string, code?: string): Promise<StepResult> {
    await this.deps.store.skipRemaining(plan.id, reason, this.deps.clock.now());
    this.deps.logger.info({ event: 'plan.skipped', wallet: plan.wallet, plan: plan.id, rule: plan.rule, epoch: plan.epoch, reason, code }, `plan skipped: ${reason}`);
    return 'skipped';
  }

  private signer(plan: PlanWithSteps): WalletSigner | undefined {
    return this.deps.signers.get(plan.address);
  }

  private async reload(step: StepRow): Promise<StepRow> {
    const plan = await this.deps.store.getPlan(step.planId);
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
