// Conditions of a rule's `when`, evaluated against one wallet summary. All must hold.
import type { Condition, Rule, WalletSummary } from '../domain.js';
import { sol } from './format.js';

interface ConditionResult {
  holds: boolean;
  /** e.g. "pending_sol 0.049999999 is not gte 0.05", "rank is missing from the summary". */
  detail: string;
}

type Scalar = bigint | number | string;

function actual(cond: Condition, summary: WalletSummary): Scalar | null {
  switch (cond.field) {
    case 'pending_sol':
      return summary.pendingLamports;
    case 'lifetime_sol':
      return summary.lifetimeLamports;
    case 'rank':
      return summary.rank;
    case 'tier':
      return summary.tier;
  }
}

function show(v: Scalar): string {
  if (typeof v === 'bigint') return sol(v);
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

/**
 * Tiers compare without regard to case: the real service writes "Gold", operators write `gold`, and
 * no service means two tiers by two spellings. Only the comparison folds; the text stays as written.
 */
function fold(v: Scalar, field: Condition['field']): Scalar {
  return field === 'tier' && typeof v === 'string' ? v.toLowerCase() : v;
}

function applyOp(a: Scalar, op: Condition['op'], expected: Scalar | readonly Scalar[]): boolean {
  if (op === 'in') return Array.isArray(expected) && expected.some((v) => v === a);
  if (Array.isArray(expected)) return false;
  const b = expected as Scalar;
  switch (op) {
    case 'eq':
      return a === b;
    case 'ne':
      return a !== b;
    case 'gt':
      return a > b;
    case 'gte':
      return a >= b;
    case 'lt':
      return a < b;
    case 'lte':
      return a <= b;
  }
}

/**
 * Lamports compare as bigint (exact to the lamport), rank as a number, tier as a string without
 * regard to case (the detail shows both texts as written).
 * A field the summary lacks (null) never satisfies a condition, not even `ne`: "unknown" is not
 * evidence, and a rule that moves money should not fire on missing data.
 */
export function evaluateCondition(cond: Condition, summary: WalletSummary): ConditionResult {
  const a = actual(cond, summary);
  if (a === null) return { holds: false, detail: `${cond.field} is missing from the summary` };
  const expected = cond.value;
  const shownExpected = Array.isArray(expected) ? `[${expected.map(show).join(', ')}]` : show(expected);
  const folded = Array.isArray(expected) ? expected.map((v) => fold(v, cond.field)) : fold(expected, cond.field);
  const holds = applyOp(fold(a, cond.field), cond.op, folded);
  return { holds, detail: `${cond.field} ${show(a)} is ${holds ? '' : 'not '}${cond.op} ${shownExpected}` };
}

/**
 * All conditions of `when`, in order. When one fails, detail names that one (the first that
 * failed); when all hold, detail lists them.
 */
export function evaluateConditions(when: readonly Condition[], summary: WalletSummary): ConditionResult {
  if (when.length === 0) return { holds: true, detail: 'no conditions' };
  const held: string[] = [];
  for (const cond of when) {
    const r = evaluateCondition(cond, summary);
    if (!r.holds) return r;
    held.push(r.detail);
  }
  return { holds: true, detail: held.join(' and ') };
}

/**
 * The worker's re-check right before it signs a claim, against a summary read just now: the
 * conditions still hold and, if the rule claims, there is still something to claim. Limits and
 * history are not re-judged here — the plan already exists and its UNIQUE key stands.
 */
export function stillHolds(rule: Rule, summary: WalletSummary): ConditionResult {
  const r = evaluateConditions(rule.when, summary);
  if (!r.holds) return r;
  if (rule.do.some((s) => s.kind === 'claim') && summary.pendingLamports <= 0n) {
    return { holds: false, detail: 'pending_sol is 0: nothing to claim' };
  }
  return r;
}
