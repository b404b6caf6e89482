// The crash tests' shared parts: a sandbox with a few funded wallets, a config with a claim-and-
// deposit or claim-and-mint rule, a read-only look at the state file after the process is dead,
// and the invariants of SPEC §2 checked against the sandbox ledger (the server's truth).
import Database from 'better-sqlite3';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSandbox, type LedgerEntry, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { heldForOperator } from '../../src/store/plan-status.js';
import type { StepState } from '../../src/domain.js';
import { CANARY_API_KEY, configYaml, makeWallets, runCli, tempDir, type TestWallet } from '../e2e/helpers.js';

export const SOL = 1_000_000_000n;

export type SecondStep = 'deposit' | 'mint';

/** Claim everything once pending reaches the threshold, then move half of it on. */
export function ruleYaml(second: SecondStep, threshold = '0.5'): string {
  const symbol = second === 'deposit' ? 'SOL2X' : 'SOL5X';
  return `  - name: compound_${second}
    when:
      pending_sol: { gte: ${threshold} }
    do:
      - claim
      - ${second}: { symbol: ${symbol}, amount: "50%" }
`;
}

export interface CrashWorld {
  dir: string;
  sandbox: Sandbox;
  wallets: TestWallet[];
  config: string;
  statePath: string;
  close(): Promise<void>;
}

export async function crashWorld(opts: {
  names: string[];
  rules: string;
  pendingLamports?: bigint;
  accrualLamportsPerSec?: bigint;
  sandbox?: Partial<SandboxOptions>;
  apiExtra?: string;
  /** The `rules:` list of each wallet; default every rule. */
  walletRules?: (name: string, index: number) => string[];
}): Promise<CrashWorld> {
  const { dir, cleanup } = tempDir('autoclaim-crash-');
  const wallets = makeWallets(dir, opts.names);
  const sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    // A service without replay protection (SPEC §6 documents none): a signed request sent twice is
    // two entries in the ledger here, not a 409 the daemon reads as a refusal.
    replays: 'apply',
    defaultAccrualLamportsPerSec: 0n,
    wallets: wallets.map((w) => ({
      address: w.address,
      pendingLamports: opts.pendingLamports ?? 1n * SOL,
      accrualLamportsPerSec: opts.accrualLamportsPerSec ?? 0n,
      balanceLamports: 0n,
    })),
    ...opts.sandbox,
  });
  // Immediate reconciliation unless a test asks for a settle window: the sandbox applies a claim
  // before it answers (or never), so "not visible" means "not applied" here.
  let yaml = configYaml({ baseUrl: sandbox.url, wallets, rules: opts.rules, apiExtra: opts.apiExtra ?? '  claim_settle: 0s\n' });
  wallets.forEach((w, i) => {
    const only = opts.walletRules?.(w.name, i);
    if (only === undefined) return;
    const keyLine = `    key: { file: ./keys/${w.name}.json }\n`;
    yaml = yaml.replace(keyLine, `${keyLine}    rules: [${only.join(', ')}]\n`);
  });
  const config = join(dir, 'autoclaim.yaml');
  writeFileSync(config, yaml);
  return {
    dir,
    sandbox,
    wallets,
    config,
    statePath: join(dir, 'state', 'autoclaim.db'),
    close: async () => {
      await sandbox.close();
      cleanup();
    },
  };
}

// ------------------------------------------------------------------------------------------------
// the state file, read behind the daemon's back

export interface PlanSnap {
  id: number;
  wallet: string;
  address: string;
  epoch: string;
  status: string;
}
export interface StepSnap {
  id: number;
  planId: number;
  idx: number;
  kind: string;
  state: string;
  /** The signature of the request the step last recorded, if any. */
  signature: string | undefined;
  /** An unknown claim the daemon gave up reconciling (claim_undetermined): an operator's to resolve. */
  held: boolean;
}
export interface AttemptSnap {
  id: number;
  stepId: number;
  signature: string | undefined;
  /** Wall ms when the attempt was recorded (just before its request went out). */
  startedAt: number;
}
export interface StateSnap {
  integrity: string;
  plans: PlanSnap[];
  steps: StepSnap[];
  attempts: AttemptSnap[];
}

function signatureOf(requestJson: string | null): string | undefined {
  if (requestJson === null) return undefined;
  const request = JSON.parse(requestJson) as { body?: string };
  // An empty body is a step recorded `sending` before its signer answered (SPEC §7): nothing signed.
  if (request.body === undefined || request.body === '') return undefined;
  return (JSON.parse(request.body) as { signature?: string }).signature;
}

/** Opens the state file read-only (the process that wrote it is dead) and reads everything. */
export function readState(statePath: string): StateSnap {
  // A kill during the very first start can come before the file, or its schema, exists.
  if (!existsSync(statePath)) return { integrity: 'ok', plans: [], steps: [], attempts: [] };
  const db = new Database(statePath, { readonly: true, fileMustExist: true });
  try {
    const integrity = (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('\n');
    if (db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'attempts'").get() === undefined) return { integrity, plans: [], steps: [], attempts: [] };
    const plans = db.prepare<[], PlanSnap>('SELECT id, wallet, address, epoch, status FROM plans WHERE dry = 0 ORDER BY id').all();
    const steps = db
      .prepare<[], { id: number; plan_id: number; idx: number; kind: string; state: string; request: string | null; resolution: string | null }>(
        'SELECT id, plan_id, idx, kind, state, request, resolution FROM steps ORDER BY id',
      )
      .all()
      .map((s) => ({ id: s.id, planId: s.plan_id, idx: s.idx, kind: s.kind, state: s.state, signature: signatureOf(s.request), held: heldForOperator({ state: s.state as StepState, resolution: s.resolution }) }));
    const attempts = db
      .prepare<[], { id: number; step_id: number; request: string | null; started_at: number }>(
        'SELECT id, step_id, request, started_at FROM attempts ORDER BY id',
      )
      .all()
      .map((a) => ({ id: a.id, stepId: a.step_id, signature: signatureOf(a.request), startedAt: a.started_at }));
    return { integrity, plans, steps, attempts };
  } finally {
    db.close();
  }
}

// ------------------------------------------------------------------------------------------------
// invariants

export interface Audit {
  violations: string[];
  /** Ledger entries matched to the step whose recorded attempt carried their signature. */
  stepOf: Map<number, StepSnap>;
  claims: number;
  transfers: number;
}

/**
 * Checks the ledger against the state file:
 * - every applied request was recorded (as an attempt) before it was sent;
 * - at most one application per step, and at most one claim per wallet and epoch (the ledger's
 *   epoch and the plan's);
 * - an acknowledged step was applied exactly once; a planned, skipped or rejected one never.
 * With `settled`, also: every plan is finished, or its first open step is `unknown`.
 */
export function audit(ledger: LedgerEntry[], state: StateSnap, opts: { settled: boolean }): Audit {
  const violations: string[] = [];
  if (state.integrity !== 'ok') violations.push(`integrity_check: ${state.integrity}`);
  const steps = new Map(state.steps.map((s) => [s.id, s]));
  const plans = new Map(state.plans.map((p) => [p.id, p]));
  const attemptBySig = new Map<string, AttemptSnap[]>();
  for (const a of state.attempts) {
    if (a.signature === undefined) continue;
    attemptBySig.set(a.signature, [...(attemptBySig.get(a.signature) ?? []), a]);
  }

  const stepOf = new Map<number, StepSnap>();
  const appliedPerStep = new Map<number, number>();
  const claimsPerLedgerEpoch = new Map<string, number>();
  const claimsPerPlanEpoch = new Map<string, number>();
  for (const e of ledger) {
    const attempts = attemptBySig.get(e.signature) ?? [];
    if (attempts.length !== 1) {
      violations.push(`ledger #${e.seq} ${e.op} matches ${attempts.length} recorded attempts (must be exactly 1: recorded before sent)`);
      continue;
    }
    const step = steps.get(attempts[0]!.stepId);
    const plan = step === undefined ? undefined : plans.get(step.planId);
    if (step === undefined || plan === undefined || step.kind !== e.op || plan.address !== e.wallet) {
      violations.push(`ledger #${e.seq} ${e.op} maps to step ${attempts[0]!.stepId}, which is not a ${e.op} of that wallet`);
      continue;
    }
    stepOf.set(e.seq, step);
    appliedPerStep.set(step.id, (appliedPerStep.get(step.id) ?? 0) + 1);
    if (e.op === 'claim') {
      const k1 = `${e.wallet} ${e.epoch}`;
      claimsPerLedgerEpoch.set(k1, (claimsPerLedgerEpoch.get(k1) ?? 0) + 1);
      const k2 = `${plan.wallet} ${plan.epoch}`;
      claimsPerPlanEpoch.set(k2, (claimsPerPlanEpoch.get(k2) ?? 0) + 1);
    }
  }
  for (const [k, n] of claimsPerLedgerEpoch) if (n > 1) violations.push(`${n} claims applied for wallet/ledger epoch ${k}`);
  for (const [k, n] of claimsPerPlanEpoch) if (n > 1) violations.push(`${n} claims applied for wallet/plan epoch ${k}`);

  for (const s of state.steps) {
    if (!plans.has(s.planId)) continue; // a dry plan's step
    const n = appliedPerStep.get(s.id) ?? 0;
    if (n > 1) violations.push(`step ${s.id} (${s.kind}) applied ${n} times`);
    if (s.state === 'acknowledged' && n !== 1) violations.push(`step ${s.id} (${s.kind}) is acknowledged but applied ${n} times`);
    if ((s.state === 'planned' || s.state === 'skipped' || s.state === 'rejected' || s.state === 'failed') && n !== 0) {
      violations.push(`step ${s.id} (${s.kind}) is ${s.state} but was applied`);
    }
  }

  if (opts.settled) {
    for (const p of state.plans) {
      if (p.status === 'done' || p.status === 'rejected' || p.status === 'failed') continue;
      const open = state.steps.filter((s) => s.planId === p.id && s.state !== 'acknowledged' && s.state !== 'skipped').sort((a, b) => a.idx - b.idx)[0];
      if (open?.state !== 'unknown') violations.push(`plan ${p.id} is ${p.status} and its open step is ${open?.state ?? 'missing'}, not unknown`);
    }
  }
  return {
    violations,
    stepOf,
    claims: ledger.filter((e) => e.op === 'claim').length,
    transfers: ledger.filter((e) => e.op !== 'claim').length,
  };
}

/**
 * SPEC §2: once a deposit or mint of a wallet may have gone out without an answer (`sending` or
 * `unknown`), no other deposit or mint of that wallet is attempted until an operator resolves it.
 * Attempt ids grow with time, so "later" is "a larger attempt id".
 */
export function heldBack(state: StateSnap): string[] {
  const violations: string[] = [];
  const plans = new Map(state.plans.map((p) => [p.id, p]));
  const walletOf = (stepId: number) => plans.get(state.steps.find((s) => s.id === stepId)?.planId ?? -1)?.wallet;
  const transfer = new Set(state.steps.filter((s) => s.kind !== 'claim').map((s) => s.id));
  for (const u of state.steps) {
    if (u.kind === 'claim' || (u.state !== 'unknown' && u.state !== 'sending') || !plans.has(u.planId)) continue;
    const last = Math.max(...state.attempts.filter((a) => a.stepId === u.id).map((a) => a.id));
    const wallet = walletOf(u.id);
    for (const a of state.attempts) {
      if (a.id > last && a.stepId !== u.id && transfer.has(a.stepId) && walletOf(a.stepId) === wallet) {
        violations.push(`step ${a.stepId} of ${wallet} was attempted while ${u.kind} step ${u.id} was ${u.state}`);
      }
    }
  }
  return violations;
}

// ------------------------------------------------------------------------------------------------
// the operator's side, through the CLI

export interface ListedStep {
  id: number;
  kind: string;
  state: string;
}
export interface ListedPlan {
  id: number;
  wallet: string;
  status: string;
  steps: ListedStep[];
}

/** `autoclaim actions --json`: what an operator sees. */
export async function listActions(world: Pick<CrashWorld, 'config' | 'dir'>): Promise<ListedPlan[]> {
  const r = await runCli(['actions', '--json', '--limit', '100000', '--config', world.config], { cwd: world.dir });
  if (r.code !== 0) throw new Error(`actions failed (${r.code}): ${r.stderr}`);
  return (JSON.parse(r.stdout) as { plans: ListedPlan[] }).plans;
}

/** Plans `actions --json` shows neither finished nor with their open step `unknown`. */
export function unreported(listed: ListedPlan[]): string[] {
  return listed
    .filter((p) => p.status !== 'done' && p.status !== 'rejected' && p.status !== 'failed')
    .filter((p) => p.steps.find((s) => s.state !== 'acknowledged' && s.state !== 'skipped')?.state !== 'unknown')
    .map((p) => `plan ${p.id} of ${p.wallet} is ${p.status}: ${p.steps.map((s) => `${s.kind} ${s.state}`).join(', ')}`);
}

/**
 * Resolves every unknown deposit or mint, and every claim the daemon held for an operator (an
 * epoch rollover or a summary that moved without proving it: claim_undetermined), as the operator
 * would after looking the request up on the service: applied when the ledger holds its signature.
 * Returns how many were resolved.
 */
export async function resolveUnknown(
  world: Pick<CrashWorld, 'config' | 'dir' | 'statePath' | 'sandbox'>,
  mayResolve: (step: StepSnap) => boolean = () => true,
): Promise<{ applied: number; notApplied: number }> {
  const applied = new Set(world.sandbox.ledger().map((e) => e.signature));
  const out = { applied: 0, notApplied: 0 };
  for (const s of readState(world.statePath).steps) {
    if (s.state !== 'unknown' || (s.kind === 'claim' && !s.held) || !mayResolve(s)) continue;
    const wasApplied = s.signature !== undefined && applied.has(s.signature);
    // The ledger is the service's own word: not there is not applied, window or not (--force).
    const r = await runCli(['actions', 'resolve', String(s.id), ...(wasApplied ? ['--applied'] : ['--not-applied', '--force']), '--config', world.config], { cwd: world.dir });
    if (r.code !== 0) throw new Error(`resolve ${s.id} failed (${r.code}): ${r.stderr}`);
    if (wasApplied) out.applied++;
    else out.notApplied++;
  }
  return out;
}

/** `once` in-process until the ledger and the recorded states stop changing; returns its events. */
export async function settle(
  world: Pick<CrashWorld, 'config' | 'dir' | 'statePath' | 'sandbox'>,
  maxRounds = 6,
): Promise<Array<Record<string, unknown>>> {
  const events: Array<Record<string, unknown>> = [];
  let before = fingerprint(world);
  for (let round = 1; round <= maxRounds; round++) {
    // Tests here move the sandbox's epoch a day at a time, past tomorrow: its fast epochs (SPEC §2's exemption).
    const r = await runCli(['once', '--config', world.config], { cwd: world.dir, env: { AUTOCLAIM_SANDBOX_EPOCHS: 'fast' } });
    events.push(...r.events);
    const after = fingerprint(world);
    if (after === before) return events;
    before = after;
  }
  throw new Error(`state still changing after ${maxRounds} rounds of once`);
}

function fingerprint(world: Pick<CrashWorld, 'statePath' | 'sandbox'>): string {
  if (!existsSync(world.statePath)) return 'no state yet';
  const s = readState(world.statePath);
  return JSON.stringify([world.sandbox.ledger().length, s.plans.map((p) => p.status), s.steps.map((x) => [x.state, x.signature])]);
}
