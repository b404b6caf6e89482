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
