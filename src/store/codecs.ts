// Codecs between store shapes and SQLite columns. Lamports are bigint outside and decimal TEXT
// inside (see migrations.ts); JSON columns are checked on the way out, because a row that does not
// decode must stop the daemon rather than steer it.
import { MAX_LAMPORTS, type Lamports } from '../amount.js';
import type { AmountSpec, PlanHistoryEntry, StepSpec, WalletSummary } from '../domain.js';
import { stringifyLossless } from '../api/json.js';
import { StateError } from '../errors.js';
import { claimDayLamports } from '../rules/amounts.js';
import { toJson } from '../json.js';
import type {
  AttemptRow,
  ClaimBaseline,
  OkPollRow,
  PlanRow,
  RawAttempt,
  RawHistory,
  RawPlan,
  RawStep,
  RawWalletState,
  StepRow,
  StoredRequest,
  WalletStateRow,
} from './rows.js';

export function lamportsText(v: Lamports, what: string): string {
  if (v < 0n || v > MAX_LAMPORTS) throw new StateError('STATE_INVALID', `${what}: ${v} lamports is out of range`);
  return v.toString();
}

export function lamportsTextOrNull(v: Lamports | null | undefined, what: string): string | null {
  return v === null || v === undefined ? null : lamportsText(v, what);
}

function lamportsOrNull(text: string | null): Lamports | null {
  return text === null ? null : BigInt(text);
}

function corrupt(where: string, what: string): StateError {
  return new StateError('STATE_CORRUPT', `${where}: stored ${what} does not decode`);
}

function parseObject(text: string, where: string, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw corrupt(where, what);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw corrupt(where, what);
  return v as Record<string, unknown>;
}

export function encodeAmountSpec(spec: AmountSpec): string {
  switch (spec.kind) {
    case 'fixed':
      return JSON.stringify({ kind: 'fixed', lamports: lamportsText(spec.lamports, 'fixed amount') });
    case 'percent':
      return JSON.stringify({ kind: 'percent', ppm: spec.ppm });
    case 'all':
      return JSON.stringify({ kind: 'all' });
  }
}

function decodeAmountSpec(text: string, stepId: number): AmountSpec {
  const where = `step ${stepId}`;
  const o = parseObject(text, where, 'amount');
  if (o.kind === 'all') return { kind: 'all' };
  if (o.kind === 'percent' && typeof o.ppm === 'number' && Number.isInteger(o.ppm)) return { kind: 'percent', ppm: o.ppm };
  if (o.kind === 'fixed' && typeof o.lamports === 'string' && /^[0-9]+$/.test(o.lamports)) {
    return { kind: 'fixed', lamports: BigInt(o.lamports) };
  }
  throw corrupt(where, 'amount');
}

/** Serializes a request for the record, refusing one that carries a credential. */
export function encodeRequest(req: StoredRequest, stepId: number): string {
  const found = findCredential(req, 'request');
  if (found !== undefined) {
    // Name the place, never the value.
    throw new StateError('STATE_SECRET', `step ${stepId}: refusing to store a request carrying a credential at ${found}`);
  }
  return toJson(req);
}

function decodeRequest(text: string, where: string): StoredRequest {
  const o = parseObject(text, where, 'request');
  const { method, url, ts, message, body, headers, before } = o;
  if (typeof method !== 'string' || typeof url !== 'string' || typeof ts !== 'number') throw corrupt(where, 'request');
  if (typeof message !== 'string' || typeof body !== 'string') throw corrupt(where, 'request');
  const req: StoredRequest = { method, url, ts, message, body };
  if (headers !== undefined) req.headers = decodeHeaders(headers, where);
  if (before !== undefined) req.before = decodeBaseline(before, where);
  return req;
}

function decodeHeaders(v: unknown, where: string): Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw corrupt(where, 'request headers');
  const out: Record<string, string> = {};
  for (const [k, h] of Object.entries(v)) {
    if (typeof h !== 'string') throw corrupt(where, 'request headers');
    out[k] = h;
  }
  return out;
}

const DIGITS = /^[0-9]+$/;

function decodeBaseline(v: unknown, where: string): ClaimBaseline {
  if (typeof v !== 'object' || v === null) throw corrupt(where, 'claim baseline');
  const { epoch, pendingLamports, lifetimeLamports } = v as Record<string, unknown>;
  const okLifetime = lifetimeLamports === null || (typeof lifetimeLamports === 'string' && DIGITS.test(lifetimeLamports));
  if (typeof epoch !== 'string' || typeof pendingLamports !== 'string' || !DIGITS.test(pendingLamports) || !okLifetime) {
    throw corrupt(where, 'claim baseline');
  }
  return { epoch, pendingLamports, lifetimeLamports };
}

const CREDENTIAL_KEY = /^(proxy-)?authorization$/i;
const BEARER_VALUE = /^\s*bearer\s/i;
// A body passed as JSON text is a string to the walk above; look inside it for the key too.
const CREDENTIAL_IN_TEXT = /"(proxy-)?authorization"\s*:/i;

/** The path of the first Authorization key or bearer-token value anywhere inside `v`. */
function findCredential(v: unknown, path: string, seen = new Set<object>()): string | undefined {
  if (typeof v === 'string') return BEARER_VALUE.test(v) || CREDENTIAL_IN_TEXT.test(v) ? path : undefined;
  if (typeof v !== 'object' || v === null || seen.has(v)) return undefined;
  seen.add(v);
  for (const [k, child] of Object.entries(v)) {
    const at = Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`;
    if (CREDENTIAL_KEY.test(k)) return at;
    const inner = findCredential(child, at, seen);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Raw rows to what the store hands out

export function walletStateFromRaw(r: RawWalletState): WalletStateRow {
  return {
    wallet: r.wallet,
    address: r.address,
    lastPollAt: r.last_poll_at,
    lastOkAt: r.last_ok_at,
    lastError: r.last_error,
    epoch: r.epoch,
    pendingLamports: lamportsOrNull(r.pending_lamports),
    lifetimeLamports: lamportsOrNull(r.lifetime_lamports),
    rank: r.rank,
    tier: r.tier,
    summaryRaw: r.summary_raw,
    updatedAt: r.updated_at,
  };
}

export function planFromRaw(r: RawPlan): PlanRow {
  return {
    id: r.id,
    wallet: r.wallet,
    address: r.address,
    rule: r.rule,
    epoch: r.epoch,
    seq: r.seq,
    dry: r.dry === 1,
    status: r.status,
    estimateLamports: BigInt(r.estimate_lamports),
    claimedLamports: lamportsOrNull(r.claimed_lamports),
    claimedProved: r.claimed_proved === 1,
    reason: r.reason,
    manualId: r.manual_id,
    cancelledAt: r.cancelled_at ?? null,
    cancelledBy: r.cancelled_by ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** An attempt that went out, or may have: in flight, applied, or unknown (not refused, not held back). */
const MOVED = "(a.outcome IS NULL OR a.outcome IN ('acknowledged', 'unknown'))";

/**
 * What a history row adds from its plan's steps (`plan` is the plans table's alias), in the SQL
 * both adapters speak: its fixed SOL amounts — a deposit's or mint's; a withdraw's shares and a
 * burn's tokens are not SOL (rules/amounts.ts movesSol) — (as text, comma-separated: summed here, exactly, where a
 * SQL sum would overflow 64 bits or lose digits), whether it claims, and
 * whether a step of it was applied or may have been. The amounts are the step rows' own, so a plan
 * counts for what it was recorded to move, whatever the config says now.
 */
export function historyStepColumns(plan: string): string {
  return `(SELECT string_agg(CAST(s.amount_lamports AS TEXT), ',') FROM steps s
            WHERE s.plan_id = ${plan}.id AND s.kind IN ('deposit', 'mint') AND s.amount_spec LIKE '%"kind":"fixed"%') AS fixed_lamports,
          CASE WHEN EXISTS (SELECT 1 FROM steps s WHERE s.plan_id = ${plan}.id AND s.kind = 'claim') THEN 1 ELSE 0 END AS claims,
          CASE WHEN EXISTS (
            SELECT 1 FROM steps s WHERE s.plan_id = ${plan}.id AND s.state IN ('acknowledged', 'sending', 'unknown')
          ) THEN 1 ELSE 0 END AS spent,
          (SELECT MAX(a.started_at) FROM steps s JOIN attempts a ON a.step_id = s.id
            WHERE s.plan_id = ${plan}.id AND ${MOVED}) AS moved_at`;
}

/**
 * The history's window, besides the plans recorded since `since` or in the epoch: a plan recorded
 * earlier whose request went out since (a plan resumed after a day down, a deposit held behind an
 * unknown one until an operator resolved it) moved its money in the window, and counts in it.
 * Asked only of plans updated since (a request going out updates its plan: step-machine.ts
 * planSending), so a turn does not look up the attempts of every plan the address ever had.
 */
function movedSince(plan: string, since: string): string {
  return `(${plan}.updated_at >= ${since} AND EXISTS (SELECT 1 FROM steps s JOIN attempts a ON a.step_id = s.id
            WHERE s.plan_id = ${plan}.id AND a.started_at >= ${since} AND ${MOVED}))`;
}

/**
 * Each rule id's newest plan (one-off sends left out), read at every start and reload. Asked as a
 * GROUP BY over every plan, it read the whole table each time (a year of 10,000 wallets: 3.65
 * million rows, seconds, while turns wait for it). Here a skip along the index plans_by_rule
 * (rule, id): one step per rule that ever planned, and a rule's newest plan the last entry up to
 * it in that index's order. (Asked as MAX(id) of the rule's plans, PostgreSQL walked the primary
 * key back from the newest plan on a table not vacuumed lately, through every plan newer than the
 * rule's: the whole table for a rule retired long ago.) A one-off send's plan is the only one with a
 * manual_id, and its rule (`@send:<id>`) is no configured rule's (a rule id starts with a letter
 * or digit), so a rule's newest plan is a one-off send's only for such a rule, which the last
 * line leaves out. (Asked with manual_id IS NULL inside, SQLite searched the manual_id index for
 * NULL instead: every plan again.)
 * `has_real`: whether the rule id ever planned for real. Dry plans (a rule watched with `enabled:
 * false`, a paused fleet) are no history the limits count, so a rule with only those is one
 * without plans of its own (rules/rule-ids.ts). Asked only where the newest plan is dry: at once
 * for a rule with a real past; for a rule that never planned for real, through all its dry plans
 * on SQLite and the whole table on PostgreSQL, as no index holds rule and dry together
 * (docs/reliability.md, helper h28f, measures it and proposes that index).
 */
export const LATEST_RULE_PLANS_SQL = `
  WITH RECURSIVE r (rule) AS (
    SELECT MIN(rule) FROM plans
    UNION ALL
    SELECT (SELECT MIN(n.rule) FROM plans n WHERE n.rule > r.rule) FROM r WHERE r.rule IS NOT NULL
  )
  SELECT p.*, CASE WHEN p.dry = 0 OR EXISTS (SELECT 1 FROM plans e WHERE e.rule = p.rule AND e.dry = 0) THEN 1 ELSE 0 END AS has_real
  FROM plans p
  WHERE p.id IN (SELECT (SELECT q.id FROM plans q WHERE q.rule <= r.rule ORDER BY q.rule DESC, q.id DESC LIMIT 1) FROM r WHERE r.rule IS NOT NULL)
    AND p.manual_id IS NULL
  ORDER BY p.id`;

/**
 * The ids of an address's history (`address`, `since`, `epoch` are the statement's parameters):
 * its plans recorded since `since`, or in `epoch`, or that moved money since (movedSince). One
 * branch per reason, each a range of its own index (plans_by_address_time, plans_by_address_epoch,
 * plans_by_address_updated), so a turn reads the few plans of its window however many the address
 * ever had. Asked as one OR over the address's plans, it read all of them on every poll: a year
 * of a daily rule made each poll ~10 times dearer (docs/reliability.md, "Months of running review").
 */
export function historyPlanIds(address: string, since: string, epoch: string): string {
  return `SELECT id FROM plans WHERE address = ${address} AND created_at >= ${since}
          UNION SELECT id FROM plans WHERE address = ${address} AND epoch = ${epoch}
          UNION SELECT m.id FROM plans m WHERE m.address = ${address} AND ${movedSince('m', since)}`;
}

function sumLamports(list: string | null): Lamports {
  return (list ?? '').split(',').reduce((sum, t) => (t === '' ? sum : sum + BigInt(t)), 0n);
}

/**
 * A plan as the rules read their history: what it claimed, or what it expected to, and its fixed
 * amounts, which a claim does not pay for (rules/amounts.ts planDayLamports); a plan without a
 * claim, its estimate (the sum of its fixed amounts).
 */
export function historyFromRaw(r: RawHistory): PlanHistoryEntry {
  // A claim counts the larger of what it says it claimed and what it expected (the pending it was
  // signed against, step-machine.ts planSending): the one rule, in rules/amounts.ts.
  const estimate = BigInt(r.estimate_lamports);
  const claimPart = claimDayLamports({ claimedLamports: r.claimed_lamports === null ? null : BigInt(r.claimed_lamports), estimateLamports: estimate });
  return {
    id: r.id,
    rule: r.rule,
    epoch: r.epoch,
    seq: r.seq,
    createdAt: r.created_at,
    dry: r.dry === 1,
    status: r.status,
    lamports: Number(r.claims) === 1 ? claimPart + sumLamports(r.fixed_lamports) : estimate,
    spent: Number(r.spent) === 1,
    movedAt: r.moved_at === null ? undefined : Number(r.moved_at),
  };
}

export function stepFromRaw(r: RawStep): StepRow {
  return {
    id: r.id,
    planId: r.plan_id,
    idx: r.idx,
    kind: r.kind,
    symbol: r.symbol,
    amountSpec: r.amount_spec === null ? null : decodeAmountSpec(r.amount_spec, r.id),
    amountLamports: lamportsOrNull(r.amount_lamports),
    state: r.state,
    attempts: r.attempts,
    request: r.request === null ? null : decodeRequest(r.request, `step ${r.id}`),
    responseStatus: r.response_status,
    responseRaw: r.response_raw,
    requestId: r.request_id,
    error: r.error,
    resolution: r.resolution,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function attemptFromRaw(r: RawAttempt): AttemptRow {
  return {
    id: r.id,
    stepId: r.step_id,
    n: r.n,
    request: r.request === null ? null : decodeRequest(r.request, `attempt ${r.id}`),
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    outcome: r.outcome,
    status: r.status,
    requestId: r.request_id,
    error: r.error,
  };
}

/** A poll's record for wallet_state and epochs_seen, as both adapters write it; free text scrubbed. */
export function okPollRow(wallet: string, address: string, at: number, s: WalletSummary, scrub: (text: string) => string): OkPollRow {
  return {
    wallet,
    address,
    at,
    epoch: s.epoch,
    pending: lamportsText(s.pendingLamports, 'pending'),
    lifetime: lamportsTextOrNull(s.lifetimeLamports, 'lifetime'),
    rank: s.rank,
    tier: s.tier,
    // The answer's numbers are LosslessNumbers: written as their exact text, not as objects.
    raw: s.raw === undefined ? null : scrub(stringifyLossless(s.raw)),
  };
}

/** A plan step's columns, as both adapters insert them. */
export function stepColumns(spec: StepSpec): { kind: string; symbol: string | null; spec: string | null; lamports: string | null } {
  if (spec.kind === 'claim') return { kind: 'claim', symbol: null, spec: null, lamports: null };
  return {
    kind: spec.kind,
    symbol: spec.symbol,
    spec: encodeAmountSpec(spec.amount),
    lamports: spec.amount.kind === 'fixed' ? lamportsText(spec.amount.lamports, `${spec.kind} amount`) : null,
  };
}
