// What the failover test (failover.test.ts) checks against the sandbox's ledger, the truth of what
// was applied, kept pure so each rule is shown on small cases before it judges a chaotic run.
//
// - Every applied action is one a daemon recorded as `sending` before it went out: its signature
//   is in a step's stored request (or an earlier attempt's). An applied action no step explains
//   would be a send that no lease fenced.
// - No step was applied twice, and no (wallet, plan epoch) had two claims or two deposits applied.
//   Plan epoch, not the epoch the sandbox applied it in: a plan recorded in epoch N by a daemon
//   paused before it could send is finished by the wallet's next owner early in N+1, beside N+1's
//   own plan. Two actions, two epochs' plans: correct, though the ledger dates both N+1.
// - Every wallet was claimed (and compounded) in every epoch that qualifies (qualifyingEpochs).
import type { LedgerEntry } from '../../src/sandbox/server.js';

/** A span of time in which the cluster was being disturbed (wall ms, the sandbox's clock). */
export interface Disruption {
  from: number;
  to: number;
  what: string;
}

/** The sandbox's epochs: epoch i is [origin + i·epochMs, origin + (i+1)·epochMs). */
export interface EpochGeometry {
  origin: number;
  epochMs: number;
}

const DAY_MS = 86_400_000;

export function epochIndexAt(g: EpochGeometry, ts: number): number {
  return Math.floor((ts - g.origin) / g.epochMs);
}

/** The label the sandbox gives epoch i (one calendar day per epoch, see sandbox/world.ts). */
export function epochLabel(g: EpochGeometry, i: number): string {
  return new Date(g.origin + i * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The epochs in which every wallet must be claimed: wholly inside [from, to) (the daemons up, not
 * yet told to stop), with no disruption overlapping [start − settleMs, end). settleMs is how long
 * the cluster may take to re-own every wallet after a disruption ends (the caller says why); an
 * epoch touched by a disruption may legitimately miss a wallet whose owner died before its turn.
 */
export function qualifyingEpochs(g: EpochGeometry, disruptions: readonly Disruption[], range: { from: number; to: number }, settleMs: number): number[] {
  const out: number[] = [];
  for (let i = epochIndexAt(g, range.from); g.origin + i * g.epochMs < range.to; i++) {
    const start = g.origin + i * g.epochMs;
    const end = start + g.epochMs;
    if (start < range.from || end > range.to) continue;
    if (disruptions.some((d) => d.from < end && d.to >= start - settleMs)) continue;
    out.push(i);
  }
  return out;
}

/** A signed step as the state database has it: which plan it belongs to and what it signed. */
export interface RecordedStep {
  stepId: number;
  address: string;
  kind: string;
  planEpoch: string;
  /** Every signature it was sent with (one per attempt). */
  signatures: readonly string[];
}

export interface LedgerVerdict {
  /** Applied actions whose signature no recorded step carries. */
  unexplained: LedgerEntry[];
  /** "wallet op epoch: n" for each (wallet, op, plan epoch) applied more than once, and each step applied twice. */
  doubles: string[];
  /** "wallet op epoch" for each qualifying epoch a wallet was not claimed (or compounded) in. */
  missing: string[];
}

export function checkLedger(input: {
  ledger: readonly LedgerEntry[];
  steps: readonly RecordedStep[];
  geometry: EpochGeometry;
  qualifying: readonly number[];
  addresses: readonly string[];
  ops: readonly string[];
}): LedgerVerdict {
  const bySignature = new Map<string, RecordedStep>();
  for (const s of input.steps) for (const sig of s.signatures) bySignature.set(sig, s);
  const unexplained: LedgerEntry[] = [];
  const perStep = new Map<number, number>();
  const perPlanEpoch = new Map<string, number>();
  for (const e of input.ledger) {
    const step = bySignature.get(e.signature);
    if (step === undefined || step.address !== e.wallet || step.kind !== e.op) {
      unexplained.push(e);
      continue;
    }
    perStep.set(step.stepId, (perStep.get(step.stepId) ?? 0) + 1);
    const key = `${e.wallet} ${e.op} ${step.planEpoch}`;
    perPlanEpoch.set(key, (perPlanEpoch.get(key) ?? 0) + 1);
  }
  const doubles = [
    ...[...perPlanEpoch].filter(([, n]) => n > 1).map(([k, n]) => `${k}: ${n}`),
    ...[...perStep].filter(([, n]) => n > 1).map(([id, n]) => `step ${id} applied ${n} times`),
  ];

  const applied = new Set(input.ledger.map((e) => `${e.wallet} ${e.op} ${epochIndexAt(input.geometry, e.ts)}`));
  const missing: string[] = [];
  for (const i of input.qualifying) {
    for (const address of input.addresses) {
      for (const op of input.ops) {
        if (!applied.has(`${address} ${op} ${i}`)) missing.push(`${address} ${op} ${epochLabel(input.geometry, i)}`);
      }
    }
  }
  return { unexplained, doubles, missing };
}
