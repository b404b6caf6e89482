// The last word before a signature: every limit of a plan's rule judged again, with a summary read
// a moment ago and the amount the step will really move (SPEC §2). decide() judged the plan with
// what it knew when it fired; since then pending may have jumped, another plan may have run, the
// config may have been reloaded, or the plan may be resuming after a restart. Pure: the worker
// passes the fresh summary, the history and the clock reading in.
import type { Lamports } from '../amount.js';
import type { PlanHistoryEntry, Rule, SafetyConfig, SignedOp, WalletSummary } from '../domain.js';
import { checkActionLimit, unitsOf } from './amounts.js';
import { evaluateConditions } from './conditions.js';
import { countsForLimits, firstLimitBreach, walletDayBreach, type LimitReason } from './limits.js';

export interface RecheckInput {
  /** The rule as configured now (a reload may have tightened it). */
  rule: Rule;
  plan: { id: number; epoch: string };
  /**
   * True while no step of the plan has been applied: the rule's conditions and the epoch are
   * judged only then. After a claim, pending has (rightly) dropped, and the deposit it funds must
   * not be skipped because the condition that started the plan no longer holds.
   */
  firstStep: boolean;
  stepKind: SignedOp;
  /** What the step moves: a claim, the pending just read; a deposit or mint, its resolved amount. */
  stepLamports: Lamports;
  /** The step's symbol, to name a withdraw's or burn's unit (shares, tokens: not SOL). */
  stepSymbol?: string | undefined;
  /** What the whole plan counts for against max_sol_per_day: what it claimed, or will claim, and its fixed amounts (amounts.ts planDayLamports). */
  planLamports: Lamports;
  /** Read right before this check. */
  summary: WalletSummary;
  /** This wallet address's recorded plans (last 24 h and the plan's epoch); the plan itself may be among them. */
  history: readonly PlanHistoryEntry[];
  safety: SafetyConfig;
  /** The decision clock's reading (the one plans are dated by). */
  now: number;
}

type RecheckReason = 'epoch' | 'condition' | LimitReason | 'max_sol_per_wallet_per_day' | 'max_sol_per_action';

type RecheckResult =
  | { ok: true }
  /** `refuse`: a safety cap, recorded as a refusal (rejected); otherwise the plan is skipped. */
  | { ok: false; reason: RecheckReason; detail: string; refuse: boolean; wait?: true };

/**
 * A read an epoch *behind* the plan's is not a rollover: the poll that decided the plan was
 * answered in the new epoch, this read by a backend that has not turned yet (a load-balanced API
 * whose clocks differ by seconds, at midnight). The plan's epoch has begun, and skipped, the plan
 * would spend that epoch's once_per_epoch unsent (its limits count every plan but a failed one):
 * the claim waits, unsigned, for a read of its epoch (`wait`: the plan stays open). Whatever that
 * read says of pending: a service that makes an epoch's rewards claimable at its turn shows none
 * on a backend not turned yet, and the executor's "nothing to claim" skipped the plan just the same.
 * Epochs are "YYYY-MM-DD" (the summary's schema; a plan's is its poll's), so text order is date order.
 * A rule's plan only: a one-off `send`'s recheck judges no epoch (an operator decided it), so let
 * past "nothing to claim" it signed a claim of nothing, which a signer service journals as that
 * epoch's one claim (executor.ts keeps it skipped).
 */
export function claimWaitsForEpoch(stepKind: SignedOp, readEpoch: string, planEpoch: string): boolean {
  return stepKind === 'claim' && readEpoch < planEpoch;
}

export function recheckBeforeSigning(input: RecheckInput): RecheckResult {
  const { rule, plan, summary } = input;
  // A claim is the claim of its plan's epoch: once the epoch has rolled over, the pending belongs
  // to the new epoch, whose own plan claims it. A held deposit or mint still goes out (judged by
  // the conditions below), as it did when it was decided.
  if (claimWaitsForEpoch(input.stepKind, summary.epoch, plan.epoch)) {
    return { ok: false, reason: 'epoch', detail: `the server's epoch ${summary.epoch} is before the plan's ${plan.epoch}; the claim waits for it`, refuse: false, wait: true };
  }
  if (input.stepKind === 'claim' && summary.epoch !== plan.epoch) {
    return { ok: false, reason: 'epoch', detail: `epoch rolled over from ${plan.epoch} to ${summary.epoch} before the claim was sent`, refuse: false };
  }
  if (input.firstStep) {
    const cond = evaluateConditions(rule.when, summary);
    if (!cond.holds) return { ok: false, reason: 'condition', detail: `rule no longer holds: ${cond.detail}`, refuse: false };
  }
  // The plan's own row must not count against itself; only real plans count for a real one.
  // Keyed by the rule's id, as decide keys them.
  const counting = input.history.filter((p) => !p.dry && p.id !== plan.id && countsForLimits(p));
  const others = counting.filter((p) => p.rule === rule.id);
  const breach = firstLimitBreach({ limits: rule.limits, plans: others, epoch: plan.epoch, now: input.now, estimateLamports: input.planLamports });
  if (breach !== undefined) return { ok: false, reason: breach.reason, detail: breach.detail, refuse: false };
  const wallet = walletDayBreach({ maxLamports: input.safety.maxLamportsPerWalletPerDay, plans: counting, now: input.now, estimateLamports: input.planLamports });
  if (wallet !== undefined) return { ok: false, reason: wallet.reason, detail: wallet.detail, refuse: false };
  const cap = checkActionLimit(input.stepLamports, input.safety, unitsOf({ kind: input.stepKind, symbol: input.stepSymbol }));
  if (!cap.ok) return { ok: false, reason: 'max_sol_per_action', detail: cap.detail, refuse: true };
  return { ok: true };
}
