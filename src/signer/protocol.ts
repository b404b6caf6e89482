// The signer service's wire protocol (SPEC §7): one JSON object per line, each way.
//   request  {"id":"…","key":"treasury","op":"deposit","wallet":"<address>","symbol":"SOL2X","amount":"0.5","ts":1764000000,"epoch":"2026-11-25"}
//            optional "plan" and "step" (the daemon's ids, journalled); {"op":"public_keys"} (an "id" optional)
//   answer   {"id":"…","signature":"<base58>","message":"<the exact signed text>"}
//            {"id":"…","error":{"code":"POLICY_DAY_CAP","message":"…"}}
//            {"id":"…","keys":[{"key":"treasury","address":"…"}]}
// Shared by the service (parse requests) and the daemon's client (write requests, read answers).
// A request is an action, never bytes: any field not listed here refuses the whole request.
import { isCanonicalSol, parseCanonicalSol } from '../amount.js';
import { SIGNED_OPS, type SignedOp } from '../domain.js';
import type { SignAction } from '../keys/port.js';

/** Refusal codes: SPEC §7's, then this implementation's own. */
export const SIGNER_CODES = [
  'POLICY_OP',
  'POLICY_SYMBOL',
  'POLICY_ACTION_CAP',
  'POLICY_DAY_CAP',
  'ALREADY_SIGNED_EPOCH',
  'TS_SKEW',
  'UNKNOWN_KEY',
  /** A claim's epoch (or one its op's template signs) is not a real date, or lies more than a day from the signer's UTC date. */
  'EPOCH_INVALID',
  /** Not a request: not JSON, an unknown field (bare bytes), a missing or ill-typed field, too long. */
  'BAD_REQUEST',
  /** The key's backend answered wrongly (another key's signature, a PKCS#11 error): nothing was handed out. */
  'INTERNAL',
  /**
   * The key's backend (PKCS#11, Vault, KMS) did not answer in time or is unavailable, or the journal
   * could not commit: nothing was handed out, nothing judged; the daemon signs the step afresh later
   * (keys/port.ts SIGNER_UNAVAILABLE).
   */
  'SIGNER_UNAVAILABLE',
] as const;
export type SignerCode = (typeof SIGNER_CODES)[number];

/** A line longer than this is not a request (and the connection is closed: no unbounded buffer). */
export const MAX_LINE_BYTES = 4096;

export type SignerRequest = { kind: 'public_keys'; id: string | undefined } | { kind: 'sign'; id: string; key: string; action: SignAction };

export type ParseResult = { ok: true; request: SignerRequest } | { ok: false; id: string | null; message: string };

const FIELDS = new Set(['id', 'key', 'op', 'wallet', 'symbol', 'amount', 'ts', 'epoch', 'plan', 'step']);
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const SYMBOL = /^[A-Za-z0-9._-]{1,32}$/;
const EPOCH_SHAPE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const ID = /^[\x21-\x7e]{1,128}$/;

export function parseRequest(line: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, id: null, message: 'not a JSON object' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, id: null, message: 'not a JSON object' };
  const o = value as Record<string, unknown>;
  const id = typeof o.id === 'string' && ID.test(o.id) ? o.id : null;
  const bad = (message: string): ParseResult => ({ ok: false, id, message });
  for (const k of Object.keys(o)) if (!FIELDS.has(k)) return bad(`unknown field ${JSON.stringify(k.slice(0, 32))}: a request is an action, never bytes`);
  if (o.id !== undefined && id === null) return bad('id must be 1 to 128 printable ASCII characters');
  if (o.op === 'public_keys') {
    if (Object.keys(o).some((k) => k !== 'op' && k !== 'id')) return bad('public_keys takes no other field');
    return { ok: true, request: { kind: 'public_keys', id: id ?? undefined } };
  }
  if (id === null) return bad('id is required');
  if (typeof o.op !== 'string' || !(SIGNED_OPS as readonly string[]).includes(o.op)) return bad(`op must be one of public_keys, ${SIGNED_OPS.join(', ')}`);
  const op = o.op as SignedOp;
  if (typeof o.key !== 'string' || o.key.length === 0 || o.key.length > 64) return bad('key must be a key name');
  if (typeof o.wallet !== 'string' || !BASE58_ADDRESS.test(o.wallet)) return bad('wallet must be a base58 address');
  if (typeof o.ts !== 'number' || !Number.isSafeInteger(o.ts) || o.ts <= 0) return bad('ts must be a positive integer (Unix seconds)');
  if (o.epoch !== undefined && (typeof o.epoch !== 'string' || !EPOCH_SHAPE.test(o.epoch))) return bad('epoch must be YYYY-MM-DD');
  for (const k of ['plan', 'step'] as const) {
    if (o[k] !== undefined && (typeof o[k] !== 'string' || !ID.test(o[k]))) return bad(`${k} must be 1 to 128 printable ASCII characters`);
  }
  const action: SignAction = { op, wallet: o.wallet, ts: o.ts };
  if (typeof o.epoch === 'string') action.epoch = o.epoch;
  if (typeof o.plan === 'string') action.planId = o.plan;
  if (typeof o.step === 'string') action.stepId = o.step;
  if (op === 'claim') {
    if (o.symbol !== undefined || o.amount !== undefined) return bad('a claim takes no symbol or amount');
    if (action.epoch === undefined) return bad('a claim needs its epoch');
  } else {
    if (typeof o.symbol !== 'string' || !SYMBOL.test(o.symbol)) return bad(`${op} needs a symbol (1 to 32 letters, digits, ".", "_" or "-")`);
    // The canonical text only (SPEC §1): the bytes signed are exactly the amount checked.
    if (typeof o.amount !== 'string' || !isCanonicalSol(o.amount) || !isPositiveLamports(o.amount)) {
      return bad(`${op} needs a positive amount as canonical decimal SOL text, e.g. "0.5"`);
    }
    action.symbol = o.symbol;
    action.amount = o.amount;
  }
  return { ok: true, request: { kind: 'sign', id, key: o.key, action } };
}

/**
 * Canonical text of more than u64 lamports is no amount: parseCanonicalSol throws for it, and a
 * throw here would fail the whole batch (every client's line in it unanswered) instead of this line.
 */
function isPositiveLamports(text: string): boolean {
  try {
    return parseCanonicalSol(text) > 0n;
  } catch {
    return false;
  }
}

/** The request line the daemon writes for an action. */
export function requestLine(id: string, key: string, action: SignAction): string {
  const o: Record<string, unknown> = { id, key, op: action.op, wallet: action.wallet };
  if (action.symbol !== undefined) o.symbol = action.symbol;
  if (action.amount !== undefined) o.amount = action.amount;
  o.ts = action.ts;
  if (action.epoch !== undefined) o.epoch = action.epoch;
  if (action.planId !== undefined) o.plan = action.planId;
  if (action.stepId !== undefined) o.step = action.stepId;
  return `${JSON.stringify(o)}\n`;
}

export function errorLine(id: string | null | undefined, code: SignerCode, message: string): string {
  return `${JSON.stringify({ id: id ?? null, error: { code, message } })}\n`;
}
