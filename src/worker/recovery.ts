// Steps left `sending` by a crash (or by a daemon whose lease another took over) become unknown at
// start, or when a wallet's lease is taken over: a request may have gone out, so nothing is sent
// again until it is reconciled (claims) or resolved by an operator (deposits and mints). Each is
// logged so an operator sees it.
import type { Clock } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/port.js';

/** Every wallet's in-flight steps, or only `address`'s; returns how many there were. */
export async function recoverInFlight(
  deps: { store: Pick<Store, 'recoverInFlight'>; clock: Clock; logger: Logger },
  address?: string,
): Promise<number> {
  const steps = await deps.store.recoverInFlight(deps.clock.now(), address);
  for (const step of steps) {
    deps.logger.error(
      { event: 'action.unknown', plan: step.planId, step: step.id, kind: step.kind },
      step.kind === 'claim'
        ? 'claim was in flight at the last shutdown or crash; it will be reconciled from the next summary'
        : `${step.kind} was in flight at the last shutdown or crash; it will NOT be re-sent. Resolve it with \`autoclaim actions resolve ${step.id} --applied|--not-applied\``,
    );
  }
  return steps.length;
}
