// Steps left `sending` by a crash (or by a daemon whose lease another took over) become unknown at
// start, when a wallet's lease is taken over, and at every turn of a wallet: a request may have gone
// out, so nothing is sent again until it is reconciled (claims) or resolved by an operator
// (deposits, mints, withdraws and burns). Each is logged so an operator sees it.
//
// The per-turn pass is what frees a wallet whose step was left `sending` under a live owner (a
// daemon that lost the lease between recording and sending and got it back, a `send` process
// killed while a daemon holds the wallet): without it the wallet skipped every claim as "claim in
// doubt" for as long as its owner lived. It never touches a step this process is sending right now
// (the executor's inFlight()), so a slow answer is not taken for a lost one.
import type { Clock } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/port.js';

/**
 * Every wallet's in-flight steps, or only `address`'s, but none of `except` (steps this process is
 * sending now); returns how many there were. `when` says what the log lines say it was.
 */
export async function recoverInFlight(
  deps: { store: Pick<Store, 'recoverInFlight'>; clock: Clock; logger: Logger },
  address?: string,
  opts: { except?: ReadonlySet<number>; when?: 'start' | 'turn' } = {},
): Promise<number> {
  const steps = await deps.store.recoverInFlight(deps.clock.now(), address, opts.except);
  const when = opts.when === 'turn' ? 'by a process that is gone (or lost the wallet’s lease)' : 'at the last shutdown or crash';
  for (const step of steps) {
    if (step.state === 'planned') {
      // Recorded `sending` before its signer answered (SPEC §7): no signature, so nothing was sent.
      deps.logger.warn(
        { event: 'action.deferred', plan: step.planId, step: step.id, kind: step.kind, recovered: opts.when ?? 'start', reason: 'unsigned' },
        `${step.kind} was left in flight ${when} before its signer answered; nothing was sent, and it will be signed afresh`,
      );
      continue;
    }
    deps.logger.error(
      { event: 'action.unknown', plan: step.planId, step: step.id, kind: step.kind, recovered: opts.when ?? 'start' },
      step.kind === 'claim'
        ? `claim was left in flight ${when}; it will be reconciled from the next summary`
        : `${step.kind} was left in flight ${when}; it will NOT be re-sent. Resolve it with \`autoclaim actions resolve ${step.id} --applied|--not-applied\``,
    );
  }
  return steps.length;
}
