// How much each step of a plan moves, and whether safety allows it. The worker calls these again
// at execution time with what the claim actually returned; decide calls them with the estimate.
import type { Lamports } from '../amount.js';
import type { AmountSpec, SafetyConfig, StepSpec } from '../domain.js';
import { AutoclaimError } from '../errors.js';
import { describeStep, sol } from './format.js';

const PPM = 1_000_000n;

/**
 * Lamports a deposit/mint moves. percent: floor(claimed * ppm / 1e6) — rounding down means a
 * percentage can never ask for a lamport that was not claimed; all: the claimed amount; fixed:
 * the amount. percent/all with no claim to take it from throw: guessing here would move money.
 */
export function resolveStepAmount(spec: AmountSpec, claimedLamports: Lamports | undefined): Lamports {
  if (spec.kind === 'fixed') return spec.lamports;
  if (claimedLamports === undefined) {
    throw new AutoclaimError('AMOUNT_NEEDS_CLAIM', `amount "${spec.kind === 'all' ? 'all' : 'N%'}" needs a claim earlier in the plan`);
  }
  if (claimedLamports < 0n) throw new AutoclaimError('AMOUNT_INVALID', `claimed amount is negative (${claimedLamports} lamports)`);
  if (spec.kind === 'all') return claimedLamports;
  if (!Number.isSafeInteger(spec.ppm) || spec.ppm < 0) {
    throw new AutoclaimError('AMOUNT_INVALID', `percent must be a non-negative whole number of ppm, got ${spec.ppm}`);
  }
  return (claimedLamports * BigInt(spec.ppm)) / PPM;
}

/**
 * Whether an operation's amount is SOL. A deposit or mint pays SOL from the wallet (SPEC §6:
 * "decimal SOL"); a withdraw gives up vault shares and a burn the token's own units (the SOL
 * comes back as `received`), with the same 9-decimal wire form but not the same unit.
 */
export function movesSol(kind: string): boolean {
  return kind === 'deposit' || kind === 'mint';
}

/** Whether an operation's amount counts SOL: a claim's, a deposit's, a mint's; not a withdraw's shares or a burn's tokens. */
export function inSol(kind: string): boolean {
  return kind === 'claim' || movesSol(kind);
}

/** "SOL2X vault shares", "SOL5X tokens": what a withdraw's or burn's amount counts; "SOL" for the others. */
export function unitsOf(step: { kind: string; symbol?: string | null | undefined }): string {
  const symbol = step.symbol ?? '?';
  return step.kind === 'withdraw' ? `${symbol} vault shares` : step.kind === 'burn' ? `${symbol} tokens` : 'SOL';
}

/**
 * A step's amount as log and notice fields. SOL is `amount_sol`; a withdraw's shares and a burn's
 * tokens are `amount_units` with their `unit` ("SOL5X tokens"), never `amount_sol`: whatever sums
 * or shows `amount_sol` (a log query, a channel's "Amount (SOL)") would read them as SOL.
 */
export function amountFields(kind: string, symbol: string | null | undefined, lamports: Lamports): { amount_sol: string } | { amount_units: string; unit: string } {
  if (inSol(kind)) return { amount_sol: sol(lamports) };
  return { amount_units: sol(lamports), unit: unitsOf({ kind, symbol }) };
}

interface ActionLimitCheck {
  ok: boolean;
  detail: string;
}

/**
 * safety.max_sol_per_action: a step moving strictly more than the limit is refused. It bounds a
 * withdraw's shares and a burn's tokens too, as a number (nothing else bounds a one-off `send`);
 * `unit` says which, so a detail never calls shares SOL.
 */
export function checkActionLimit(lamports: Lamports, safety: SafetyConfig, unit = 'SOL'): ActionLimitCheck {
  const limit = safety.maxLamportsPerAction;
  return lamports > limit
    ? { ok: false, detail: `${sol(lamports)} ${unit} exceeds max_sol_per_action ${sol(limit)}` }
    : { ok: true, detail: `${sol(lamports)} ${unit} is within max_sol_per_action ${sol(limit)}` };
}

/**
 * Why a list of steps cannot be executed as written, or undefined when it can. The config loader
 * should refuse such rules up front; decide refuses them too rather than trust that it did.
 */
export function planStepProblem(steps: readonly StepSpec[]): string | undefined {
  if (steps.length === 0) return 'the rule has no steps';
  let claimed = false;
  for (const step of steps) {
    if (step.kind === 'claim') {
      // A second claim would find pending already emptied by the first.
      if (claimed) return 'the rule claims more than once';
      claimed = true;
    } else if (step.amount.kind !== 'fixed' && !movesSol(step.kind)) {
      return `${describeStep(step)}: a ${step.kind} takes ${unitsOf(step)}, not SOL, so it cannot be a share of the SOL claimed`;
    } else if (step.amount.kind !== 'fixed' && !claimed) {
      return `${describeStep(step)} takes its amount from a claim, but no claim comes before it`;
    }
  }
  return undefined;
}

/** What a plan expects to claim: pending when it claims, else the sum of its fixed amounts (what its row keeps as the estimate). */
export function estimatePlanLamports(steps: readonly StepSpec[], pendingLamports: Lamports): Lamports {
  if (steps.some((s) => s.kind === 'claim')) return pendingLamports;
  return fixedLamports(steps.map(amountOf));
}

/**
 * What a plan counts for against max_sol_per_day and the wallet's daily cap: what its claim takes
 * (claimed, or expected) and every fixed amount besides. A percent or "all" is a share of the
 * claim, counted once with it; a fixed amount is paid from the balance whatever was claimed, so a
 * claim before it must not hide it (a rule that claimed 0.1 and deposited a fixed 1 counted 0.1).
 * The store counts recorded plans the same way (codecs.ts historyFromRaw).
 */
export function planDayLamports(steps: readonly { kind: string; amount: AmountSpec | null }[], claimLamports: Lamports): Lamports {
  const fixed = fixedLamports(steps);
  return steps.some((s) => s.kind === 'claim') ? claimLamports + fixed : fixed;
}

/** The step specs' amounts, for planDayLamports (a claim has none). */
export function amountOf(step: StepSpec): { kind: string; amount: AmountSpec | null } {
  return { kind: step.kind, amount: step.kind === 'claim' ? null : step.amount };
}

/**
 * What a recorded plan's claim counts for against the daily caps: the larger of what it claimed
 * and what it expected — the pending its claim was signed against, once sent. What it claimed sizes
 * the steps after it (never more than was seen, SPEC §2); it cannot lower the count below what
 * the claim may have taken, or a server that took 8 and says 0.001 frees 7.999 of the day.
 */
export function claimDayLamports(plan: { claimedLamports: Lamports | null; estimateLamports: Lamports }): Lamports {
  const { claimedLamports: claimed, estimateLamports: estimate } = plan;
  return claimed !== null && claimed > estimate ? claimed : estimate;
}

/** A recorded plan's steps, for planDayLamports. */
export function stepAmounts(plan: { steps: readonly { kind: string; amountSpec: AmountSpec | null }[] }): { kind: string; amount: AmountSpec | null }[] {
  return plan.steps.map((s) => ({ kind: s.kind, amount: s.amountSpec }));
}

/**
 * The SOL the fixed steps pay. A withdraw's shares and a burn's tokens are not SOL (movesSol):
 * added to a SOL count they held other rules' claims back for a day (20 cheap tokens burned
 * counted 20 SOL). They are bounded by their rule's own limits and per action (recheck.ts).
 */
function fixedLamports(steps: readonly { kind: string; amount: AmountSpec | null }[]): Lamports {
  let sum = 0n;
  for (const s of steps) if (s.amount?.kind === 'fixed' && movesSol(s.kind)) sum += s.amount.lamports;
  return sum;
}

/**
 * The first step that safety refuses, judged with pending as the claim estimate, or undefined.
 * Call only with steps that pass planStepProblem.
 */
export function firstOverActionLimit(
  steps: readonly StepSpec[],
  pendingLamports: Lamports,
  safety: SafetyConfig,
): string | undefined {
  let claimed: Lamports | undefined;
  for (const step of steps) {
    const lamports = step.kind === 'claim' ? pendingLamports : resolveStepAmount(step.amount, claimed);
    if (step.kind === 'claim') claimed = pendingLamports;
    const check = checkActionLimit(lamports, safety, unitsOf(step));
    if (!check.ok) return `${describeStep(step)}: ${check.detail}`;
  }
  return undefined;
}
