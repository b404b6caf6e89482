// What every adapter of the store port derives the same way: a plan's status from its steps' states,
// the note a step left `sending` by a crash (or a lost lease) carries when it becomes unknown, and
// whether a plan may be cancelled.
import type { PlanStatus, StepState } from '../domain.js';
import type { PlanWithSteps, StepRow } from './rows.js';

export const IN_FLIGHT_ERROR = 'in flight at shutdown or crash';
/** Why a step left `sending` before its signer answered went back to planned: nothing was sent. */
export const UNSIGNED_ERROR = 'left before its signer answered: nothing was signed for it, nothing was sent';

/** all acknowledged/skipped → done; any unknown → blocked; any failed → failed; any rejected → rejected; else open. */
export function deriveStatus(states: readonly StepState[]): Exclude<PlanStatus, 'dry'> {
  if (states.includes('unknown')) return 'blocked';
  if (states.includes('failed')) return 'failed';
  if (states.includes('rejected')) return 'rejected';
  if (states.every((s) => s === 'acknowledged' || s === 'skipped')) return 'done';
  return 'open';
}

/**
 * Why a plan cannot be cancelled (`send --cancel`), or undefined when it can: a plan is cancelled
 * only while nothing of it can be on the wire — no step `sending` (its request may be out) or
 * `unknown` (it may have been applied) — and some step is still `planned`. Both adapters ask this
 * under the plan's write lock, the lock `markSending` also takes, so a cancel and a send of the
 * same plan happen one after the other and only the first wins.
 */
export function cancelRefusal(plan: PlanWithSteps): string | undefined {
  const at = (ms: number) => new Date(ms).toISOString();
  if (plan.cancelledAt !== null) return `plan ${plan.id} was already cancelled by ${plan.cancelledBy ?? '?'} at ${at(plan.cancelledAt)}`;
  if (plan.dry) return `plan ${plan.id} is a dry run: nothing of it is ever sent`;
  const step = (s: StepRow) => `step ${s.id} (${s.kind})`;
  const sending = plan.steps.find((s) => s.state === 'sending');
  if (sending !== undefined) {
    return `${step(sending)} of plan ${plan.id} is sending: its request may already be on the wire, so it cannot be cancelled; \`autoclaim actions\` shows its outcome`;
  }
  const unknown = plan.steps.find((s) => s.state === 'unknown');
  if (unknown !== undefined) {
    return `${step(unknown)} of plan ${plan.id} is unknown: it may have been applied, so it cannot be cancelled; check it, then \`autoclaim actions resolve ${unknown.id} --applied|--not-applied\``;
  }
  if (!plan.steps.some((s) => s.state === 'planned')) {
    const last = plan.steps[plan.steps.length - 1];
    return `nothing of plan ${plan.id} is left to send${last === undefined ? '' : `: ${step(last)} is ${last.state}`}`;
  }
  return undefined;
}

/** The note a cancelled step keeps: who and when. */
export function cancelNote(by: string, now: number): string {
  return `cancelled by ${by} at ${new Date(now).toISOString()}`;
}

/**
 * The prefix of an unknown claim's resolution once the daemon has given up reconciling it
 * (store.holdForOperator): the reason code of plan.skipped and of the plan's skipped steps too.
 */
export const CLAIM_UNDETERMINED = 'claim_undetermined';

/**
 * The reason code of plan.skipped when a step sized from the claim ("N%", "all") cannot be sized:
 * what the claim brought is not proved (its answer had no claimed_sol and no lifetime rose after
 * it, or an operator resolved it as applied). Never guessed from the pending seen.
 */
export const CLAIM_UNPROVED = 'claim_unproved';

/** An unknown claim held for an operator: no daemon reconciles it again, nothing sized from it runs. */
export function heldForOperator(step: { state: StepState; resolution: string | null }): boolean {
  return step.state === 'unknown' && step.resolution?.startsWith(`${CLAIM_UNDETERMINED}:`) === true;
}
