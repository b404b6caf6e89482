// The four invariants of issue 11, judged against the hostile server's OWN ledger (what it really
// applied), never against what the product believes. The journal is used only to attribute a
// ledger entry to its plan, by the signature the journal recorded before sending; an applied
// request the journal cannot account for is itself a violation.
import type { AttemptRow, PlanWithSteps } from '../../src/store/index.js';
import { describeSequence } from './hostile-grammar.js';
import type { Outcome, WalletOutcome } from './hostile-harness.js';
import { DAY_MS, formatSol, type Applied } from './hostile-types.js';

export type InvariantId = 0 | 1 | 2 | 3 | 4 | 5 | 6;

export const INVARIANTS: ReadonlyArray<{ id: InvariantId; text: string }> = [
  { id: 0, text: 'no cycle throws, and the server never sees a malformed, unsigned or replayed request' },
  { id: 1, text: 'no (wallet, rule, epoch) action is applied twice' },
  { id: 2, text: 'the SOL moved never exceeds what the rules and caps allow given the pending actually seen' },
  { id: 3, text: 'no step is recorded acknowledged that the server did not apply' },
  { id: 4, text: 'no 10-character piece of a secret in any log line or in the rows of the state file' },
  { id: 5, text: 'no action for an epoch SPEC §2 refuses: not a real date, more than a day from the UTC date, or before an earlier plan of the address' },
  { id: 6, text: 'no step sized from a claim (N%, all) is applied unless the ledger shows that claim applied before it' },
];

export interface Violation {
  id: InvariantId;
  message: string;
}

const PPM = 1_000_000n;

function signatureOf(body: string | undefined): string | undefined {
  if (body === undefined) return undefined;
  try {
    const sig = (JSON.parse(body) as { signature?: unknown }).signature;
    return typeof sig === 'string' ? sig : undefined;
  } catch {
    return undefined;
  }
}

interface Attribution {
  plan: PlanWithSteps;
  step: PlanWithSteps['steps'][number];
  attempt: AttemptRow | undefined;
}

/** Signature → the plan, step and attempt the journal recorded it under. */
function journalIndex(w: WalletOutcome): Map<string, Attribution> {
  const index = new Map<string, Attribution>();
  for (const plan of w.plans) {
    for (const step of plan.steps) {
      const attempts = w.attempts.get(step.id) ?? [];
      for (const attempt of attempts) {
        const sig = signatureOf(attempt.request?.body);
        if (sig !== undefined) index.set(sig, { plan, step, attempt });
      }
      const last = signatureOf(step.request?.body);
      if (last !== undefined && !index.has(last)) index.set(last, { plan, step, attempt: undefined });
    }
  }
  return index;
}

const sol = (l: bigint | undefined): string => (l === undefined ? '?' : formatSol(l));
const entry = (e: Applied): string => `${e.op} ${sol(e.lamports)} SOL at ${new Date(e.at).toISOString()} in epoch ${e.epoch}`;

function checkWallet(o: Outcome, w: WalletOutcome, out: Violation[]): void {
  const { rule, safety, seq } = o;
  const index = journalIndex(w);
  const claims = w.ledger.filter((e) => e.op === 'claim');
  const add = (id: InvariantId, message: string): void => void out.push({ id, message: `wallet ${w.names.join('/')}: ${message}` });

  // 0: every request the product signed was well formed, fresh and new.
  for (const r of w.refusals) add(0, `the server refused a request: ${r}`);

  // 1: nothing applied twice; everything applied is accounted for by the journal.
  const perStep = new Map<string, Applied[]>();
  for (const e of w.ledger) {
    const a = index.get(e.signature);
    if (a === undefined) {
      add(1, `the server applied ${entry(e)} but the journal has no record of that signed request`);
      continue;
    }
    // Keyed by address, rule, epoch, seq and step: a renamed wallet is the same wallet.
    const key = `${w.address}|${a.plan.rule}|${a.plan.epoch}|${rule.limits.oncePerEpoch ? 0 : a.plan.seq}|${a.step.idx}`;
    perStep.set(key, [...(perStep.get(key) ?? []), e]);
  }
  for (const [key, entries] of perStep) {
    if (entries.length > 1) add(1, `(wallet, rule, epoch${rule.limits.oncePerEpoch ? '' : ', seq'}, step) ${key} was applied ${entries.length} times: ${entries.map(entry).join('; ')}`);
  }
  if (rule.limits.oncePerEpoch) {
    const byEpoch = new Map<string, number>();
    for (const c of claims) byEpoch.set(c.epoch, (byEpoch.get(c.epoch) ?? 0) + 1);
    for (const [epoch, n] of byEpoch) if (n > 1) add(1, `once_per_epoch, yet ${n} claims were applied in epoch ${epoch}`);
  }

  // 2: amounts. Each transfer is bounded by its own plan's claim, as the ledger saw it.
  const hasClaim = rule.do.some((s) => s.kind === 'claim');
  let unpaired = 0;
  for (const e of w.ledger) {
    if (e.lamports > safety.maxLamportsPerAction) add(2, `${entry(e)} is above max_sol_per_action ${sol(safety.maxLamportsPerAction)}`);
    if (e.op === 'claim') {
      unpaired += 1;
      continue;
    }
    const spec = rule.do.find((s) => s.kind === e.op);
    if (spec === undefined || spec.kind === 'claim') {
      add(2, `${entry(e)} was applied but the rule has no ${e.op} step`);
      continue;
    }
    const a = index.get(e.signature);
    const planClaims = a === undefined ? [] : claims.filter((c) => index.get(c.signature)?.plan.id === a.plan.id);
    if (hasClaim) {
      // Paid from its own plan's claim (a second application of the same step is invariant 1's).
      if (a !== undefined && planClaims.length === 0) add(2, `${entry(e)} was applied, but no claim of its plan (${a.plan.id}) was: it was paid from the wallet's balance`);
      if (a === undefined && unpaired === 0) add(2, `${entry(e)} was applied with no applied claim before it that it could be paid from`);
      if (unpaired > 0) unpaired -= 1;
    }
    if (spec.amount.kind === 'fixed') {
      if (e.lamports > spec.amount.lamports) add(2, `${entry(e)} is more than the rule's fixed ${sol(spec.amount.lamports)}`);
      continue;
    }
    if (planClaims.length === 0) continue; // reported above
    const ppm = spec.amount.kind === 'all' ? PPM : BigInt(spec.amount.ppm);
    // Each applied claim of the plan counts for what was both shown before it and really claimed
    // (two of them is invariant 1's business, not this one's).
    const claimed = planClaims.reduce((s, c) => s + c.lamports, 0n);
    const shown = planClaims.reduce((s, c) => s + (c.shownBefore ?? c.lamports), 0n);
    const seen = planClaims.reduce((s, c) => s + (c.shownBefore !== undefined && c.shownBefore < c.lamports ? c.shownBefore : c.lamports), 0n);
    const bound = (seen * ppm) / PPM;
    if (e.lamports > bound) {
      add(
        2,
        `${entry(e)} exceeds ${spec.amount.kind === 'all' ? 'all' : `${spec.amount.ppm / 10_000}%`} of min(claimed in its plan per the ledger ${sol(claimed)}, ` +
          `pending shown before that claim ${sol(shown)}) = ${sol(bound)}`,
      );
    }
  }
  const maxDay = rule.limits.maxLamportsPerDay;
  if (maxDay !== undefined) {
    for (const c of claims) {
      const window = claims.filter((d) => d.at > c.at - DAY_MS && d.at <= c.at);
      const total = window.reduce((s, d) => s + d.lamports, 0n);
      if (total > maxDay) {
        add(2, `claims applied in the 24 h up to ${new Date(c.at).toISOString()} total ${sol(total)} SOL, above max_sol_per_day ${sol(maxDay)}: ${window.map(entry).join('; ')}`);
        break;
      }
    }
  }

  // 6: a step sized from a claim runs only on the ledger's evidence of that claim, not on what a
  // summary seemed to show (issue 24 finding 2: a pending drop alone funded a deposit).
  w.ledger.forEach((e, i) => {
    const spec = rule.do.find((s) => s.kind === e.op);
    if (spec === undefined || spec.kind === 'claim' || spec.amount.kind === 'fixed') return;
    const a = index.get(e.signature);
    const claimFirst = a !== undefined && w.ledger.slice(0, i).some((c) => c.op === 'claim' && index.get(c.signature)?.plan.id === a.plan.id);
    if (!claimFirst) add(6, `${entry(e)} is sized from its plan's claim, but the ledger shows no claim of plan ${a?.plan.id ?? '?'} applied before it`);
  });

  // 3: acknowledged means applied.
  const applied = new Set(w.ledger.map((e) => e.signature));
  for (const plan of w.plans) {
    for (const step of plan.steps) {
      if (step.state !== 'acknowledged') continue;
      const attempts = w.attempts.get(step.id) ?? [];
      const sigs = attempts.map((a) => signatureOf(a.request?.body)).filter((s): s is string => s !== undefined);
      const ackedButNot = attempts.filter((a) => a.outcome === 'acknowledged' && !applied.has(signatureOf(a.request?.body) ?? ''));
      if (ackedButNot.length > 0 || !sigs.some((s) => applied.has(s))) {
        add(3, `plan ${plan.id} (epoch ${plan.epoch}) step ${step.idx} ${step.kind} is acknowledged (response ${step.responseStatus ?? '-'} ${JSON.stringify((step.responseRaw ?? '').slice(0, 120))}) but the server applied none of its ${attempts.length} request(s)`);
      }
    }
  }
  // 5: every applied action's plan stands on an epoch the calendar check believes: a real date,
  // within a day of the (fake) UTC date when the plan was made, not before any earlier plan's.
  const isDate = (t: string): boolean => /^\d{4}-\d{2}-\d{2}$/.test(t) && new Date(`${t}T00:00:00Z`).toISOString().slice(0, 10) === t;
  const judged = new Set<number>();
  for (const e of w.ledger) {
    const plan = index.get(e.signature)?.plan;
    if (plan === undefined || judged.has(plan.id)) continue;
    judged.add(plan.id);
    if (!isDate(plan.epoch)) {
      add(5, `${entry(e)} was applied for plan ${plan.id}, whose epoch ${JSON.stringify(plan.epoch)} is not a real date`);
      continue;
    }
    const days = Date.parse(`${plan.epoch}T00:00:00Z`) / DAY_MS - Math.floor(plan.createdAt / DAY_MS);
    if (Math.abs(days) > 1) add(5, `${entry(e)} was applied for plan ${plan.id}, whose epoch ${plan.epoch} is ${days} days from its UTC date ${new Date(plan.createdAt).toISOString().slice(0, 10)}`);
    const later = w.plans.find((p) => p.id < plan.id && p.epoch > plan.epoch);
    if (later !== undefined) add(5, `${entry(e)} was applied for plan ${plan.id} in epoch ${plan.epoch}, after plan ${later.id} in epoch ${later.epoch}: the epoch went backward`);
  }
  void seq;
}

export function checkInvariants(o: Outcome): Violation[] {
  const out: Violation[] = [];
  for (const c of o.crashes) out.push({ id: 0, message: c });
  for (const w of o.wallets) checkWallet(o, w, out);
  const inLogs = o.secrets.find(o.lines.join('\n'));
  if (inLogs !== undefined) out.push({ id: 4, message: `log line holds ${inLogs}` });
  const inState = o.secrets.find(o.stateText);
  if (inState !== undefined) out.push({ id: 4, message: `state file rows hold ${inState}` });
  return out;
}

function describePlans(w: WalletOutcome): string[] {
  return w.plans.map((p) => {
    const steps = p.steps.map((s) => {
      const attempts = (w.attempts.get(s.id) ?? []).map((a) => `${a.outcome ?? 'open'}${a.status === null ? '' : `/${a.status}`}`);
      return `${s.kind}${s.amountLamports === null ? '' : ` ${sol(s.amountLamports)}`} ${s.state} [${attempts.join(', ')}]${s.resolution ? ` (${s.resolution})` : ''}`;
    });
    return `    plan ${p.id} ${p.wallet} epoch ${p.epoch} seq ${p.seq} ${p.status}${p.claimedLamports === null ? '' : ` claimed ${sol(p.claimedLamports)}`}: ${steps.join(' → ')}`;
  });
}

/** Everything needed to read a failure: the sequence, the violations, and per wallet what the server did and what the journal holds. */
export function explain(o: Outcome, violations: Violation[]): string {
  const parts = [
    'violations:',
    ...violations.map((v) => `  [${v.id}] ${v.message}`),
    'sequence:',
    describeSequence(o.seq),
  ];
  o.wallets.forEach((w, i) => {
    parts.push(`wallet ${i} (${w.names.join(' → ')}, ${w.address}):`, '  server transcript:', ...w.transcript.map((t) => `    ${t}`));
    parts.push('  ledger:', ...w.ledger.map((e) => `    ${entry(e)}${e.shownBefore === undefined ? '' : ` (pending shown before: ${sol(e.shownBefore)})`}`));
    parts.push('  journal:', ...describePlans(w));
  });
  return parts.join('\n');
}
