// What every adapter of the store port derives the same way: a plan's status from its steps' states,
// and the note a step left `sending` by a crash (or a lost lease) carries when it becomes unknown.
import type { PlanStatus, StepState } from '../domain.js';

export const IN_FLIGHT_ERROR = 'in flight at shutdown or crash';

/** all acknowledged/skipped → done; any unknown → blocked; any failed → failed; any rejected → rejected; else open. */
export function deriveStatus(states: readonly StepState[]): Exclude<PlanStatus, 'dry'> {
  if (states.includes('unknown')) return 'blocked';
  if (states.includes('failed')) return 'failed';
  if (states.includes('rejected')) return 'rejected';
  if (states.every((s) => s === 'acknowledged' || s === 'skipped')) return 'done';
  return 'open';
}

/**
 * The prefix of an unknown claim's resolution once the daemon has given up reconciling it
 * (store.holdForOperator): the reason code of plan.skipped and of the plan's skipped steps too.
 */
export const CLAIM_UNDETERMINED = 'claim_undetermined';

/** An unknown claim held for an operator: no daemon reconciles it again, nothing sized from it runs. */
export function heldForOperator(step: { state: StepState; resolution: string | null }): boolean {
  return step.state === 'unknown' && step.resolution?.startsWith(`${CLAIM_UNDETERMINED}:`) === true;
}
