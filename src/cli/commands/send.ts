// `send OP --wallet NAME [--symbol S] [--amount A] --id ID [--yes] [--dry-run]`: one action an
// operator decided, through the same journal as the rules' plans (recorded before it is signed,
// `sending` before the first byte, the same answer classification and reconciliation), the same
// safety cap and the same holds. Exactly once per --id: the id is a UNIQUE column of the plan, so
// the same id again reports what was recorded and sends nothing.
import { createInterface } from 'node:readline/promises';
import { formatSol, parseSol, type Lamports } from '../../amount.js';
import { parseDuration } from '../../config/durations.js';
import { Daemon } from '../../daemon.js';
import { SIGNED_OPS, type PlanDraft, type SignedOp, type StepSpec, type WalletConfig } from '../../domain.js';
import { createEvents } from '../../events.js';
import { openRuntime, runtimeEpochsExempt, type Runtime } from '../../runtime.js';
import type { PlanWithSteps } from '../../store/index.js';
import { failpointsFromEnv } from '../../executor/failpoints.js';
import { killSwitchPause } from '../../executor/kill-switch.js';
import { EpochError, judgeEpoch } from '../../executor/epoch-check.js';
import { errorSummary } from '../../executor/outcome.js';
import { estimatePlanLamports, movesSol } from '../../rules/amounts.js';
import { pauseReader } from '../../service/control.js';
import { UsageError, type CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import { openNotices, type CommandNotices } from './notices.js';
import { cancelSend } from './send-cancel.js';
import { actionText, amountText, heldReason, reportPlan } from './send-report.js';

export interface SendOptions {
  wallet?: string;
  symbol?: string;
  amount?: string;
  id?: string;
  yes?: boolean;
  dryRun?: boolean;
  /** With shared state: how long to wait for the wallet's lease holder to send it (e.g. 2m). */
  wait?: string;
  /** `send --cancel --id ID`: stop a queued one-off plan before it is sent. */
  cancel?: boolean;
}

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
const SYMBOL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;
/** The rule name a one-off plan is recorded under; `@` cannot start a configured rule's name. */
const SEND_RULE_PREFIX = '@send:';

interface Request {
  op: SignedOp;
  id: string;
  symbol: string | undefined;
  lamports: Lamports | undefined;
}

/** Checks the arguments before anything is opened: a usage error sends nothing and records nothing. */
function parseSendArgs(op: string | undefined, opts: SendOptions): Request {
  if (op === undefined) throw new UsageError(`OP is required: one of ${SIGNED_OPS.join(', ')} (or --cancel --id ID)`);
  if (!(SIGNED_OPS as readonly string[]).includes(op)) throw new UsageError(`OP must be one of ${SIGNED_OPS.join(', ')}, got "${op}"`);
  const kind = op as SignedOp;
  if (opts.wallet === undefined) throw new UsageError('--wallet NAME is required');
  if (opts.id === undefined || !ID_PATTERN.test(opts.id)) {
    throw new UsageError('--id ID is required: 1 to 64 letters, digits, "_", ".", ":" or "-", e.g. --id topup-2026-11-23 (the same id never sends twice)');
  }
  if (kind === 'claim') {
    if (opts.symbol !== undefined || opts.amount !== undefined) throw new UsageError('a claim takes no --symbol or --amount: it claims what is pending');
    return { op: kind, id: opts.id, symbol: undefined, lamports: undefined };
  }
  if (opts.symbol === undefined || !SYMBOL_PATTERN.test(opts.symbol)) throw new UsageError(`${op} needs --symbol, e.g. --symbol SOL2X`);
  if (opts.amount === undefined) throw new UsageError(`${op} needs --amount in ${kind === 'withdraw' ? 'vault shares' : kind === 'burn' ? 'tokens' : 'SOL'}, e.g. --amount 1.5`);
  let lamports: Lamports;
  try {
    lamports = parseSol(opts.amount);
  } catch (err) {
    throw new UsageError(`--amount: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (lamports <= 0n) throw new UsageError('--amount must be more than 0');
  return { op: kind, id: opts.id, symbol: opts.symbol, lamports };
}

function describe(r: Request, wallet: WalletConfig): string {
  const what = r.op === 'claim' ? 'claim what is pending' : `${r.op} ${amountText(r.op, r.symbol ?? '?', r.lamports ?? 0n)}`;
  return `${what} for wallet ${wallet.name} (${wallet.address}), id ${r.id}`;
}

function stepOf(r: Request): StepSpec {
  if (r.op === 'claim') return { kind: 'claim' };
  return { kind: r.op, symbol: r.symbol ?? '', amount: { kind: 'fixed', lamports: r.lamports ?? 0n } };
}

/**
 * The id was used before. With other parameters it is another action: reporting the recorded one's
 * outcome (exit 0 when it was applied) would read as "your action was applied" (issue 24, finding
 * 5), so it is a usage error naming the difference. With the same, the recorded outcome and its exit.
 */
function reportAgain(ctx: CommandContext, existing: PlanWithSteps, request: Request, wallet: WalletConfig, shared: boolean): ExitCode {
  const diff = differences(existing, request, wallet);
  if (diff.length > 0) {
    throw new UsageError(
      `--id ${request.id} was already used for another action (plan ${existing.id}: ${actionText(existing)} for wallet ${existing.wallet}); ` +
        `it differs in ${diff.join(', ')}. Nothing was sent: give this action an id of its own`,
    );
  }
  return reportPlan(ctx, existing, { again: true, shared });
}

/** How a recorded one-off plan differs from this request: op, wallet (its address), symbol, amount. */
function differences(plan: PlanWithSteps, r: Request, wallet: WalletConfig): string[] {
  const step = plan.steps[0];
  const out: string[] = [];
  if (step?.kind !== r.op) out.push(`OP (${step?.kind ?? '?'} recorded, ${r.op} now)`);
  if (plan.address !== wallet.address) out.push(`wallet (${plan.wallet} ${plan.address} recorded, ${wallet.name} ${wallet.address} now)`);
  const symbol = step?.symbol ?? undefined;
  if (symbol !== r.symbol) out.push(`--symbol (${symbol ?? 'none'} recorded, ${r.symbol ?? 'none'} now)`);
  const amount = step?.amountLamports ?? undefined;
  if (amount !== r.lamports) {
    const unit = step === undefined || movesSol(step.kind) ? 'SOL' : step.kind === 'withdraw' ? 'shares' : 'tokens';
    const text = (l: Lamports | undefined) => (l === undefined ? 'none' : `${formatSol(l)} ${unit}`);
    out.push(`--amount (${text(amount)} recorded, ${text(r.lamports)} now)`);
  }
  return out;
}

async function confirm(ctx: CommandContext, question: string): Promise<boolean> {
  const stdin = ctx.io.stdin;
  if (stdin?.isTTY !== true) return false;
  // terminal: false: the prompt is plain text, with none of readline's cursor escapes, which the
  // output's control-character guard (terminal-text.ts) would print as text.
  const rl = createInterface({ input: stdin, output: ctx.io.stdout, terminal: false });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

export async function sendCommand(ctx: CommandContext, op: string | undefined, opts: SendOptions): Promise<ExitCode> {
  if (opts.cancel === true) return cancelSend(ctx, op, opts);
  const request = parseSendArgs(op, opts);
  if (opts.yes !== true && opts.dryRun !== true && ctx.io.stdin?.isTTY !== true) {
    throw new UsageError('refusing to send without --yes: standard input is not a terminal, so nobody can confirm');
  }
  const { io, logger, redactor } = ctx;
  const events = createEvents({ logger });
  const waitMs = parseWait(opts.wait);
  // With shared state no lease is taken: the plan is recorded, and the daemon holding the wallet's
  // lease sends it (a recorded plan is finished before anything new is decided), fenced as ever.
  const runtime: Runtime = await openRuntime({ configPath: ctx.configPath, env: io.env, cwd: io.cwd, clock: io.clock, logger, redactor, lock: true, leases: false, events, configSetsLevel: ctx.configSetsLevel });
  let notices: CommandNotices | undefined;
  try {
    const wallet = runtime.config.wallets.find((w) => w.name === opts.wallet);
    if (wallet === undefined) {
      throw new UsageError(`no wallet named "${opts.wallet ?? ''}" in the config (wallets: ${runtime.config.wallets.map((w) => w.name).join(', ')})`);
    }
    const existing = await runtime.store.planByManualId(request.id);
    const shared = runtime.config.state.url !== undefined;
    if (existing !== undefined) return reportAgain(ctx, existing, request, wallet, shared);

    const text = describe(request, wallet);
    // The kill switch (`autoclaim pause` recorded beside the state, safety.paused, the wallet's
    // enabled: false) refuses a one-off before it is recorded: a plan queued now would be sent,
    // unasked, by whichever daemon signs after the switch is lifted. Asked again right before the
    // record: a pause may land during the prompt or the summary read below.
    const pauseRecord = pauseReader(runtime.config.state.path);
    const heldNow = () => killSwitchPause(runtime.config.safety, pauseRecord(), wallet, io.clock.now());
    const refused = (held: NonNullable<ReturnType<typeof heldNow>>): ExitCode => {
      logger.warn({ event: 'signing.kill_switch_on', reason: held.reason, since: new Date(held.since).toISOString(), wallet: wallet.name }, 'send refused: the kill switch holds signing');
      writeLine(io.stderr, `signing is paused: ${held.reason}. Refused: ${text}; nothing recorded, nothing sent. To lift it: ${held.fix ?? 'see autoclaim status'}`);
      return EXIT.FAILURE;
    };
    const held = heldNow();
    if (opts.dryRun === true) {
      writeLine(io.stdout, `dry run: would ${text}; nothing recorded, nothing sent${held === undefined ? '' : ` (signing is paused — ${held.reason} — so a real send is refused now)`}`);
      return EXIT.OK;
    }
    if (held !== undefined) return refused(held);
    if (opts.yes !== true && !(await confirm(ctx, `${text}?`))) {
      writeLine(io.stdout, 'not confirmed; nothing recorded, nothing sent');
      return EXIT.FAILURE;
    }

    const summary = await runtime.client.walletSummary(wallet.address);
    // The epoch keys the plan, and a signer service's one claim per epoch: believed only as a poll's is (SPEC §2).
    const last = await runtime.store.lastEpoch(wallet.address);
    const verdict = judgeEpoch({ epoch: summary.epoch, nowMs: io.clock.now(), last, exempt: runtimeEpochsExempt(runtime, runtime.config, io.env) });
    if (!verdict.ok) {
      const unbelieved = new EpochError(summary.epoch, verdict.why, verdict.detail);
      logger.warn({ event: 'poll.failed', wallet: wallet.name, err: errorSummary(unbelieved), epoch: summary.epoch, why: verdict.why }, 'send refused: the API epoch is not believed');
      writeLine(io.stderr, `${unbelieved.message}. Refused: ${text}; nothing recorded, nothing sent`);
      return EXIT.FAILURE;
    }
    const draft: PlanDraft = {
      wallet: wallet.name,
      address: wallet.address,
      rule: `${SEND_RULE_PREFIX}${request.id}`,
      epoch: summary.epoch,
      seq: 0,
      steps: [stepOf(request)],
      // What it expects to move in SOL: a withdraw's shares and a burn's tokens are not SOL, and
      // counted as SOL against the wallet's daily cap they held the rules' claims back.
      estimateLamports: estimatePlanLamports([stepOf(request)], summary.pendingLamports),
      manualId: request.id,
    };
    const heldLater = heldNow();
    if (heldLater !== undefined) return refused(heldLater);
    const plan = await runtime.store.insertPlan(draft, { dry: false, now: io.clock.now(), reason: `autoclaim send: ${text}` });
    // A concurrent `send` with the same id got there first: report what it recorded.
    if (plan === undefined) {
      const raced = await runtime.store.planByManualId(request.id);
      return raced === undefined ? EXIT.FAILURE : reportAgain(ctx, raced, request, wallet, shared);
    }
    logger.info({ event: 'plan.recorded', wallet: wallet.name, plan: plan.id, manual_id: request.id, epoch: plan.epoch }, `one-off plan recorded: ${text}`);
    if (runtime.config.state.url !== undefined) return await awaitHolder(ctx, runtime, plan, wallet, { waitMs, waitText: opts.wait ?? '2m' });
    // A pause recorded from here on is read at every ask of the gate: `pause` cannot signal this process.
    const daemon = new Daemon({ runtime, configPath: ctx.configPath, env: io.env, cwd: io.cwd, clock: io.clock, logger, redactor, dry: false, failpoint: failpointsFromEnv(io.env), events, pauseRecord });
    // The outcome is told as the daemon's would be, and delivered before the command exits (bounded).
    notices = await openNotices(ctx, runtime, events);
    await daemon.recover();
    await daemon.runPlan(plan.id);
    const after = (await runtime.store.getPlan(plan.id)) ?? plan;
    const pauses = daemon.signingPauses();
    const paused = (pauses.all ?? pauses.wallets.get(wallet.address) ?? daemon.killSwitch(wallet.address))?.reason;
    return reportPlan(ctx, after, { again: false, shared: false, held: await heldReason(runtime.store, after, paused) });
  } finally {
    try {
      await notices?.close();
    } finally {
      await runtime.close();
    }
  }
}

/** `--wait`: how long a send on shared state waits for the wallet's lease holder. */
function parseWait(text: string | undefined): number {
  const ms = parseDuration(text ?? '2m');
  if (ms === undefined || ms <= 0) throw new UsageError(`--wait must be a duration such as 30s or 2m, got "${text ?? ''}"`);
  return ms;
}

const WAIT_POLL_MS = 500;

/**
 * On shared state: the daemon holding the wallet's lease sends the recorded plan at its next poll
 * of the wallet. Waits for the step to leave `planned`/`sending` and reports it; past `waitMs` the
 * plan stays recorded (it is sent once, when a daemon holds the wallet) and the exit is 1.
 */
async function awaitHolder(
  ctx: CommandContext,
  runtime: Runtime,
  plan: PlanWithSteps,
  wallet: WalletConfig,
  opts: { waitMs: number; waitText: string },
): Promise<ExitCode> {
  writeLine(ctx.io.stdout, `plan ${plan.id} recorded; the daemon holding wallet ${wallet.name} sends it at its next poll`);
  const deadline = performance.now() + opts.waitMs;
  for (;;) {
    const now = (await runtime.store.getPlan(plan.id)) ?? plan;
    const state = now.steps[0]?.state;
    if ((state !== 'planned' && state !== 'sending') || now.cancelledAt !== null) return reportPlan(ctx, now, { again: false, shared: true });
    if (performance.now() >= deadline) {
      writeLine(ctx.io.stdout, `not sent within the wait (${opts.waitText}):`);
      return reportPlan(ctx, now, { again: false, shared: true });
    }
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}
