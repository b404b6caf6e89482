// What `send` says about a one-off plan: what happened, and above all what *will* happen (issue
// 24, finding 4). A plan left queued is not a failure that went away: the daemon that next works
// this state sends it, once. Saying only "deposit is planned" led an operator to retry under a new
// --id, and both were sent. So a queued plan is reported as queued, with who will send it and the
// one command that stops it.
import { formatSol, type Lamports } from '../../amount.js';
import type { SignedOp } from '../../domain.js';
import { movesSol, unitsOf } from '../../rules/amounts.js';
import type { PlanWithSteps, Store } from '../../store/index.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import { terminalText } from '../terminal-text.js';

export interface ReportOptions {
  /** The id was used before: nothing was sent by this call. */
  again: boolean;
  /** Shared state (state.url): the daemon holding the wallet sends it, not "the next daemon". */
  shared: boolean;
  /** Why a queued step was not sent, when it carries no error of its own (held, paused). */
  held?: string | undefined;
}

/** The command that cancels a queued one-off plan. */
export function cancelCommandFor(id: string): string {
  return `autoclaim send --cancel --id ${id}`;
}

/** What the step moves, in words: "deposit 3 SOL of SOL2X". */
export function actionText(plan: PlanWithSteps): string {
  const step = plan.steps[0];
  if (step === undefined) return 'nothing';
  if (step.kind === 'claim') return 'claim';
  return `${step.kind} ${amountText(step.kind, step.symbol ?? '?', step.amountLamports ?? undefined)}`;
}

/**
 * An amount in its unit: "3 SOL of SOL2X" for a deposit or mint; a withdraw's is the vault's
 * shares, "3 SOL2X vault shares", and a burn's the token's units, "3 SOL5X tokens" — an operator
 * asked "withdraw 3 SOL of SOL2X?" confirms a SOL value and signs a count of shares.
 */
export function amountText(kind: SignedOp, symbol: string, amount: Lamports | undefined): string {
  const n = amount === undefined ? '?' : formatSol(amount);
  return movesSol(kind) ? `${n} SOL of ${symbol}` : `${n} ${unitsOf({ kind, symbol })}`;
}

/** The outcome of a recorded one-off plan, as lines and an exit code (0 only when applied). */
export function reportPlan(ctx: CommandContext, plan: PlanWithSteps, opts: ReportOptions): ExitCode {
  const out = (line: string) => writeLine(ctx.io.stdout, line);
  const step = plan.steps[0];
  const id = plan.manualId ?? '?';
  const head = opts.again ? `id ${id} was already used (plan ${plan.id}); nothing was sent now.` : `plan ${plan.id}:`;
  const what = `${actionText(plan)} for wallet ${plan.wallet}`;
  // The error, the x-request-id and a resolution can hold what a server said: shown safe.
  const requestId = step?.requestId ? `, x-request-id ${terminalText(step.requestId)}` : '';
  const error = step?.error ? terminalText(step.error) : undefined;
  if (plan.cancelledAt !== null) {
    out(`${head} ${what} was cancelled by ${plan.cancelledBy ?? '?'} at ${new Date(plan.cancelledAt).toISOString()}; it was not sent and never will be`);
    return EXIT.FAILURE;
  }
  const state = step?.state ?? 'missing';
  switch (state) {
    case 'acknowledged':
      out(`${head} ${what} is acknowledged: applied${requestId}`);
      return EXIT.OK;
    case 'planned': {
      const why = error ?? opts.held;
      out(`${head} ${what} is QUEUED, not sent${why ? ` (${why})` : ''}.`);
      out(
        opts.shared
          ? `It stays recorded: the daemon holding wallet ${plan.wallet} WILL send it, once, at its next poll (\`autoclaim status\` shows which daemon).`
          : 'It stays recorded: the daemon running on this state file (or the next one started) WILL send it, once.',
      );
      out(`Do not retry it under a new --id: that would be a second ${step?.kind ?? 'action'}. To stop it: ${cancelCommandFor(id)}`);
      return EXIT.FAILURE;
    }
    case 'sending':
      out(`${head} ${what} is being sent now: its request may be on the wire and can no longer be cancelled; \`autoclaim actions\` shows its outcome`);
      return EXIT.FAILURE;
    case 'unknown':
      out(`${head} ${what} is unknown${error ? ` (${error})` : ''}${requestId}: it may have been applied.`);
      out(`Check it on chain, then \`autoclaim actions resolve ${step?.id ?? '?'} --applied|--not-applied\``);
      return EXIT.FAILURE;
    default:
      out(`${head} ${what} is ${state}${error ? ` (${error})` : step?.resolution ? ` (${terminalText(step.resolution)})` : ''}${requestId}; nothing more of it will be sent`);
      return EXIT.FAILURE;
  }
}

/**
 * Why a queued step that carries no error was held back: an unknown deposit/mint or claim of the
 * same wallet (settled first), or signing paused. Undefined when there is no such reason.
 */
export async function heldReason(store: Pick<Store, 'hasUnknownSignedStep' | 'claimInDoubt'>, plan: PlanWithSteps, paused: string | undefined): Promise<string | undefined> {
  const step = plan.steps[0];
  if (step === undefined || step.state !== 'planned' || step.error !== null) return undefined;
  if (paused !== undefined) return `signing is paused for this wallet: ${paused}`;
  if (step.kind !== 'claim' && (await store.hasUnknownSignedStep(plan.address))) {
    return 'held back: an earlier deposit, mint, withdraw or burn of this wallet is unknown; `autoclaim actions --state unknown` lists it';
  }
  if (step.kind === 'claim' && (await store.claimInDoubt(plan.address, step.id))) {
    return 'held back: an earlier claim of this wallet is still unknown';
  }
  return undefined;
}
