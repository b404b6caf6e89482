// The rules/ folder, pure and table-tested: decide.ts (which rules fire), conditions.ts (`when`),
// amounts.ts (what each step moves, against the safety cap), limits.ts (once per epoch, cooldown,
// daily caps), recheck.ts (every limit again just before signing), format.ts (the words of details).
/**
 * decide(input) → { plans, decisions }: which rules fire for one wallet, given a fresh summary
 * and the plans already recorded. Pure: no I/O, no clock (`now` is passed in), no randomness;
 * the same input always gives deep-equal output.
 *
 * Which rules: those named by `wallet.rules`, in config order. Each yields exactly one Decision,
 * `fired` or skipped with a machine `reason` and a human `detail` (amounts in SOL). A name in
 * `wallet.rules` that no rule has yields `unknown_rule`.
 *
 * A rule's plans and history are keyed by its id (default: its name), never its name alone: a rule
 * renamed with the same id, or one that took over a replaced rule's id, keeps its limits.
 *
 * Which history: plans whose status is `failed` (the server refused the *request* as invalid:
 * signature, timestamp, headers, auth) count for nothing, so a fixed setup fires the rule again in
 * the same epoch — unless a step of theirs was applied (or may have been) before the refusal:
 * those count as any plan does (limits.ts countsForLimits). Of the rest, only plans with the same dry-ness as this run — a dry run never spends a real
 * rule's once-per-epoch or cooldown, and real plans never stop a dry run from showing what it
 * would do. Every status counts (open, done, blocked, failed): a plan that failed because each
 * step was rejected still spends its epoch, its cooldown and its daily count, so a rule the API
 * refuses does not hammer the API every poll; the operator clears it.
 *
 * The checks, in order; the first that fails is the reason:
 *  1. invalid_steps          — the steps cannot run as written (no steps, two claims, a percent or
 *                              "all" amount with no claim before it). Config checks should catch this.
 *  2. condition              — every condition of `when` must hold (AND). pending_sol/lifetime_sol
 *                              compare lamports exactly (bigint), rank as a number, tier as an exact
 *                              string; ops gt gte lt lte eq ne in. A field the summary lacks
 *                              (lifetime/rank/tier null) fails its condition, even `ne`; the detail
 *                              names the first condition that failed.
 *  3. once_per_epoch         — a plan of this rule already exists in summary.epoch.
 *  4. cooldown               — now < (latest createdAt of this rule) + cooldown. Ending exactly at
 *                              now is over. A createdAt later than now (the clock stepped back)
 *                              keeps the cooldown running from that createdAt: fail safe.
 *  5. max_plans_per_day      — plans of this rule in the last 24h ≥ the limit.
 *  6. max_sol_per_day        — lamports of this rule's plans in the last 24h + this plan's estimate
 *                              > the limit (equal is allowed). A plan counts for its claim (claimed,
 *                              or expected: pending) plus its fixed amounts (amounts.ts planDayLamports).
 *  6b. max_sol_per_wallet_per_day — safety's wallet-level cap: the same sum over every plan of the
 *                              address (all rules, one-off sends, and plans fired earlier in this
 *                              decide) + this plan's estimate > the cap. No cap when unset.
 *                              "The last 24h" is createdAt in (now − 24h, now], plus any plan dated
 *                              after now (clock stepped back: counting it is the safe side).
 *  7. nothing_to_claim       — the rule claims and pending is 0; an empty claim is never sent.
 *  8. max_sol_per_action     — a step would move more than safety.max_sol_per_action: the claim
 *                              (judged by pending), a fixed amount, or a percent/"all" amount
 *                              judged against pending. The worker re-checks with the real claim.
 *  9. blocked_unknown_step   — an `unknown` deposit, mint, withdraw or burn is open for this wallet
 *                              and this rule has any of them; claim-only rules still fire.
 *  9b. claim_in_doubt       — a claim of this wallet is sending or unknown and this rule claims:
 *                              reconciling it compares summaries, which another claim would move.
 * 10. claim_already_planned  — an earlier rule (config order) fired a plan with a claim in this
 *                              same decide; one claim empties pending, so a wallet gets at most one
 *                              claiming plan per decide. Rules without a claim can fire alongside.
 * Otherwise `fired`, and a PlanDraft is returned for it.
 *
 * A plan: `epoch` = summary.epoch; `estimateLamports` = pending when it claims, else the sum of
 * its fixed amounts; `seq` = one more than the highest seq of this rule's plans in this epoch,
 * failed ones included (so 0 for the first, and with once_per_epoch 0 unless a failed plan took
 * it), so the store's UNIQUE(address, rule, epoch, seq, dry) turns a duplicate of the same decision into a
 * conflict. Percent and "all" amounts stay as specs: the worker resolves them with
 * resolveStepAmount from what the claim actually returned, and re-checks checkActionLimit.
 */
import type { Decision, PlanDraft, PlanHistoryEntry, Rule, SafetyConfig, WalletConfig, WalletSummary } from '../domain.js';
import { amountOf, estimatePlanLamports, firstOverActionLimit, planDayLamports, planStepProblem } from './amounts.js';
import { evaluateConditions } from './conditions.js';
import { describeStep, sol } from './format.js';
import { countsForLimits, firstLimitBreach, walletDayBreach, type LimitReason } from './limits.js';

export interface DecideInput {
  wallet: WalletConfig;
  /** Fresh and validated. */
  summary: WalletSummary;
  /** This wallet's recorded plans (at least the last 24h and the current epoch), any order. */
  history: PlanHistoryEntry[];
  /** All configured rules; only those named by wallet.rules apply, in config order. */
  rules: Rule[];
  safety: SafetyConfig;
  /** Wall-clock ms. */
  now: number;
  /** A dry run: only dry history counts for it, only real history for a real run. */
  dry: boolean;
  /** An `unknown` deposit, mint, withdraw or burn is open for this wallet: rules with any of them must not fire. */
  blockedSignedOps?: boolean;
  /** A claim of this wallet is sending or unknown: rules that claim must not fire until it settles. */
  claimInDoubt?: boolean;
}

interface DecideOutput {
  plans: PlanDraft[];
  decisions: Decision[];
}

type DecisionReason =
  | 'fired'
  | 'unknown_rule'
  | 'invalid_steps'
  | 'condition'
  | LimitReason
  | 'max_sol_per_wallet_per_day'
  | 'nothing_to_claim'
  | 'max_sol_per_action'
  | 'blocked_unknown_step'
  | 'claim_in_doubt'
  | 'claim_already_planned';

interface RuleDecision extends Decision {
  reason: DecisionReason;
}

type Verdict = { reason: Exclude<DecisionReason, 'fired'>; detail: string } | { plan: PlanDraft; detail: string };

function hasClaim(rule: Rule): boolean {
  return rule.do.some((s) => s.kind === 'claim');
}

function nextSeq(plans: readonly PlanHistoryEntry[], epoch: string): number {
  return plans.filter((p) => p.epoch === epoch).reduce((next, p) => Math.max(next, p.seq + 1), 0);
}

function judge(rule: Rule, input: DecideInput, claimTakenBy: string | undefined, drafted: readonly PlanDraft[]): Verdict {
  const { summary, safety, now, dry } = input;
  const stepProblem = planStepProblem(rule.do);
  if (stepProblem !== undefined) return { reason: 'invalid_steps', detail: stepProblem };

  const cond = evaluateConditions(rule.when, summary);
  if (!cond.holds) return { reason: 'condition', detail: cond.detail };

  // A failed plan (the request was refused as invalid: the setup, not the action) spends nothing,
  // unless a step of it had been applied before.
  // Keyed by the rule's id: a renamed rule (same id) keeps its history (SPEC §2).
  const ofRule = input.history.filter((p) => p.rule === rule.id && p.dry === dry);
  const plans = ofRule.filter(countsForLimits);
  const claims = hasClaim(rule);
  const estimateLamports = estimatePlanLamports(rule.do, summary.pendingLamports);
  // What it counts for against the daily caps: the claim it expects and its fixed amounts.
  const dayLamports = planDayLamports(rule.do.map(amountOf), summary.pendingLamports);
  const breach = firstLimitBreach({ limits: rule.limits, plans, epoch: summary.epoch, now, estimateLamports: dayLamports });
  if (breach) return breach;
  // The wallet-level cap: every rule's plans of this address, and those fired earlier in this decide.
  const walletBreach = walletDayBreach({
    maxLamports: safety.maxLamportsPerWalletPerDay,
    plans: [
      ...input.history.filter((p) => p.dry === dry && countsForLimits(p)),
      ...drafted.map((d) => ({ rule: d.rule, epoch: d.epoch, seq: d.seq, createdAt: now, dry, status: 'open' as const, lamports: planDayLamports(d.steps.map(amountOf), d.estimateLamports) })),
    ],
    now,
    estimateLamports: dayLamports,
  });
  if (walletBreach) return walletBreach;

  if (claims && summary.pendingLamports <= 0n) {
    return { reason: 'nothing_to_claim', detail: 'pending_sol is 0: nothing to claim' };
  }
  const overLimit = firstOverActionLimit(rule.do, summary.pendingLamports, safety);
  if (overLimit !== undefined) return { reason: 'max_sol_per_action', detail: overLimit };

  if (input.blockedSignedOps === true) {
    const signed = rule.do.filter((s) => s.kind !== 'claim');
    if (signed.length > 0) {
      return {
        reason: 'blocked_unknown_step',
        detail:
          `an unknown deposit, mint, withdraw or burn is open for this wallet, so ${signed.map(describeStep).join(', ')} must wait; ` +
          'resolve it with `autoclaim actions resolve ID --applied|--not-applied`',
      };
    }
  }
  if (claims && input.claimInDoubt === true) {
    // Its reconciliation compares the summary before and after it: another claim now would move
    // that summary and could credit a claim that never happened with this one's money.
    return { reason: 'claim_in_doubt', detail: 'an earlier claim of this wallet is still unknown; it is reconciled from the summary first' };
  }
  if (claims && claimTakenBy !== undefined) {
    return { reason: 'claim_already_planned', detail: `rule ${claimTakenBy} already plans this wallet's claim in this decision` };
  }

  const plan: PlanDraft = {
    wallet: input.wallet.name,
    address: input.wallet.address,
    rule: rule.id,
    epoch: summary.epoch,
    // Failed plans keep their seqs, so a plan after one takes the next free seq even under
    // once_per_epoch (which, had a plan that counts existed, would have stopped this one).
    seq: nextSeq(ofRule, summary.epoch),
    // Copied so a caller mutating the plan cannot reach back into the config.
    steps: structuredClone(rule.do),
    estimateLamports,
  };
  return { plan, detail: `${cond.detail}; plan ${rule.do.map(describeStep).join(' → ')}, estimate ${sol(estimateLamports)} SOL` };
}

export function decide(input: DecideInput): DecideOutput {
  const plans: PlanDraft[] = [];
  const decisions: RuleDecision[] = [];
  const applicable = new Set(input.wallet.rules);
  let claimTakenBy: string | undefined;

  for (const rule of input.rules) {
    if (!applicable.has(rule.name)) continue;
    const verdict = judge(rule, input, claimTakenBy, plans);
    if ('plan' in verdict) {
      plans.push(verdict.plan);
      if (hasClaim(rule)) claimTakenBy = rule.name;
      decisions.push({ rule: rule.name, ruleId: rule.id, fired: true, reason: 'fired', detail: verdict.detail });
    } else {
      decisions.push({ rule: rule.name, ruleId: rule.id, fired: false, reason: verdict.reason, detail: verdict.detail });
    }
  }

  const known = new Set(input.rules.map((r) => r.name));
  for (const name of new Set(input.wallet.rules)) {
    if (!known.has(name)) {
      decisions.push({ rule: name, fired: false, reason: 'unknown_rule', detail: `wallet ${input.wallet.name} names rule ${name}, which is not configured` });
    }
  }
  return { plans, decisions };
}
