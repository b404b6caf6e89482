// `send --cancel --id ID`: stops a queued one-off plan before it is sent (issue 24, finding 4).
// It needs no lock, no API and no key: it opens the state beside a running daemon as `actions
// resolve` does, and the store cancels under the same write lock as the daemon's `sending` commit,
// so either the cancel wins (nothing is ever sent) or the send does (the cancel is refused: the
// request may be on the wire). Recorded once, with who and when; a second cancel says so.
import os from 'node:os';
import { StateError } from '../../errors.js';
import type { PlanWithSteps } from '../../store/index.js';
import { UsageError, type CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import type { SendOptions } from './send.js';
import { actionText } from './send-report.js';
import { openStateForCli } from './state-access.js';

/** Who cancelled, as recorded: the command, the user, the host and the process. */
function whoCancels(): string {
  let user = 'unknown user';
  try {
    user = os.userInfo().username;
  } catch {
    // No passwd entry (a container's arbitrary uid): the uid still says who.
    user = `uid ${process.getuid?.() ?? '?'}`;
  }
  return `autoclaim send --cancel (user ${user} on ${os.hostname()}, pid ${process.pid})`;
}

export async function cancelSend(ctx: CommandContext, op: string | undefined, opts: SendOptions): Promise<ExitCode> {
  const extra = [op === undefined ? undefined : `OP ${op}`, ...(['wallet', 'symbol', 'amount', 'dryRun'] as const).map((k) => (opts[k] === undefined ? undefined : `--${k === 'dryRun' ? 'dry-run' : k}`))].filter(
    (x): x is string => x !== undefined,
  );
  if (extra.length > 0) throw new UsageError(`--cancel takes only --id ID (the id names the action); drop ${extra.join(', ')}`);
  const id = opts.id;
  if (id === undefined) throw new UsageError('--cancel needs --id ID: the id the action was sent with');
  const out = (line: string) => writeLine(ctx.io.stdout, line);
  const { store } = await openStateForCli(ctx, { write: true });
  try {
    const plan = await store.planByManualId(id);
    if (plan === undefined) {
      out(`no action was ever recorded with --id ${id}: nothing to cancel`);
      return EXIT.FAILURE;
    }
    let cancelled: PlanWithSteps;
    try {
      cancelled = await store.cancelPlan(plan.id, whoCancels(), ctx.io.clock.now());
    } catch (err) {
      if (!(err instanceof StateError) || err.code !== 'STATE_TRANSITION') throw err;
      // Already cancelled: what was asked for holds, and the record keeps the first cancel's who/when.
      const already = (await store.planByManualId(id)) ?? plan;
      if (already.cancelledAt !== null) {
        out(`id ${id}: ${err.message}; nothing changed (it was not sent and never will be)`);
        return EXIT.OK;
      }
      out(`id ${id} cannot be cancelled: ${err.message}`);
      return EXIT.FAILURE;
    }
    ctx.logger.info({ event: 'plan.cancelled', wallet: cancelled.wallet, plan: cancelled.id, manual_id: id, by: cancelled.cancelledBy }, `one-off plan cancelled: ${actionText(cancelled)}`);
    out(`id ${id} (plan ${cancelled.id}): ${actionText(cancelled)} for wallet ${cancelled.wallet} is cancelled; no daemon will send it.`);
    out(`Recorded: ${cancelled.steps.find((s) => s.resolution?.startsWith('cancelled by') === true)?.resolution ?? `cancelled by ${cancelled.cancelledBy ?? '?'}`}`);
    return EXIT.OK;
  } finally {
    await store.close();
  }
}
