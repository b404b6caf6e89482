// `actions`: the recorded plans and steps; `actions resolve ID --applied|--not-applied`.
import { formatSol } from '../../amount.js';
import type { StepState } from '../../domain.js';
import { toJson } from '../../json.js';
import { beyondWindow } from '../../api/ts-window.js';
import type { StepRow } from '../../store/index.js';
import { type CommandContext, UsageError } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import { table } from '../table.js';
import { openStateForCli, openStateIfAny } from './state-access.js';

const STATES: StepState[] = ['planned', 'sending', 'acknowledged', 'rejected', 'failed', 'unknown', 'skipped'];

export async function actionsCommand(ctx: CommandContext, opts: { json?: boolean; state?: string; limit?: string }): Promise<ExitCode> {
  if (opts.state !== undefined && !STATES.includes(opts.state as StepState)) {
    throw new UsageError(`--state must be one of ${STATES.join(', ')}`);
  }
  const limit = opts.limit === undefined ? 50 : Number(opts.limit);
  if (!Number.isInteger(limit) || limit <= 0) throw new UsageError('--limit must be a positive integer');
  // No state yet is an empty journal, as `status` calls it "no polls yet" (exit 0, SPEC §3): a
  // script listing actions on a fresh install is not failing. `actions resolve` still exits 1:
  // there is no step to resolve.
  const { config, store } = await openStateIfAny(ctx, { write: false });
  if (store === undefined) {
    const where = config.state.url === undefined ? `no state file at ${config.state.path}` : 'no autoclaim state in the database at state.url';
    const note = `no actions yet: ${where} (the daemon has not run with this config)`;
    if (opts.json === true) writeLine(ctx.io.stdout, toJson({ plans: [], note }));
    else writeLine(ctx.io.stdout, note);
    return EXIT.OK;
  }
  try {
    const plans = await store.listPlans({ state: opts.state as StepState | undefined, limit });
    if (opts.json === true) {
      // Each send of each step, with the server's x-request-id, for quoting to its support.
      const withSends = [];
      for (const p of plans) {
        const steps = [];
        for (const s of p.steps) steps.push({ ...s, sends: await store.stepAttempts(s.id) });
        withSends.push({ ...p, steps });
      }
      writeLine(ctx.io.stdout, toJson({ plans: withSends }));
      return EXIT.OK;
    }
    const rows = plans.flatMap((p) =>
      p.steps.map((s) => [
        s.id,
        p.id,
        p.wallet,
        p.rule,
        p.epoch,
        `${s.kind}${s.symbol ? ' ' + s.symbol : ''}`,
        // A withdraw's shares and a burn's tokens are not SOL: the column says so beside the number.
        s.amountLamports === null ? (s.kind === 'claim' && p.claimedLamports !== null ? formatSol(p.claimedLamports) : null) : `${formatSol(s.amountLamports)}${s.kind === 'withdraw' ? ' shares' : s.kind === 'burn' ? ' tokens' : ''}`,
        s.state + (p.dry ? ' (dry)' : ''),
        s.error,
      ]),
    );
    writeLine(ctx.io.stdout, table(['step', 'plan', 'wallet', 'rule', 'epoch', 'action', 'SOL', 'state', 'note'], rows));
    return EXIT.OK;
  } finally {
    await store.close();
  }
}

export async function resolveCommand(ctx: CommandContext, id: string, opts: { applied?: boolean; notApplied?: boolean; note?: string; force?: boolean }): Promise<ExitCode> {
  if (opts.applied === opts.notApplied) throw new UsageError('say exactly one of --applied or --not-applied');
  const stepId = Number(id);
  if (!Number.isInteger(stepId) || stepId <= 0) throw new UsageError(`step ID must be a positive integer, got "${id}"`);
  const { config, store } = await openStateForCli(ctx, { write: true });
  try {
    const applied = opts.applied === true;
    // The verdict is about the request the operator looked at: a daemon may reconcile the step and
    // send another before this write (shared state), which the verdict must not settle.
    const seen = await store.getStep(stepId);
    if (!applied && opts.force !== true) {
      const early = tooEarly(seen, await store.clockNow(), config.api.claimSettleMs);
      if (early !== undefined) {
        writeLine(ctx.io.stderr, `step ${stepId}: ${early}; nothing changed`);
        return EXIT.FAILURE;
      }
    }
    const note = opts.note ?? `resolved by operator as ${applied ? 'applied' : 'not applied'}`;
    const step = await store.resolve(seen === undefined ? stepId : { id: stepId, attempt: seen.attempts }, applied, note, ctx.io.clock.now());
    ctx.logger.info({ event: 'action.resolved', step: stepId, plan: step.planId, applied }, note);
    writeLine(ctx.io.stdout, `step ${stepId} (${step.kind}) is now ${step.state}`);
    return EXIT.OK;
  } finally {
    await store.close();
  }
}

/**
 * Why "not applied" cannot be said yet of this unknown step: its last signed request can still be
 * accepted by the service (SPEC §2 lets the daemon call a claim not applied only after that). An
 * operator who looks too soon finds nothing, since the server may still hold it, and a deposit
 * then sent again by hand would land twice. `--applied` sends nothing and needs no wait.
 */
function tooEarly(step: StepRow | undefined, now: number, settleMs: number): string | undefined {
  const ts = step?.request?.ts;
  if (step?.state !== 'unknown' || ts === undefined) return undefined;
  if (beyondWindow(ts, now, settleMs).beyond) return undefined;
  const until = new Date(ts * 1000 + settleMs).toISOString();
  return `its ${step.kind} request, signed at ${new Date(ts * 1000).toISOString()}, can still be accepted by the service until ${until} (api.claim_settle), so finding it not applied now proves nothing; look again after that (or resolve it --applied if it is there; --force if you know the service refused it or never got it)`;
}
