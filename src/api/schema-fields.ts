// Field schemas shared by the response schemas. Input is lossless-parsed JSON, so numbers arrive
// as LosslessNumber (exact text); amounts may also arrive as decimal strings. Each schema names
// what it expected in one short phrase, which becomes "<path>: <phrase>" in ApiError.issues.
// Each is one z.transform that judges whatever it is given, a missing key (undefined) included:
// z.unknown().transform() would wrap it in a pipe behind a schema that accepts anything, a layer
// every field of every answer would pass through for nothing.
import { z } from 'zod';
import { AmountError, parseServerSol, type Lamports } from '../amount.js';
import { isLosslessNumber } from './json.js';

const AMOUNT_EXPECTED = 'expected a non-negative decimal amount';

/** The amount fields a server may write with digits below the lamport (they are rounded toward zero). */
const AMOUNT_FIELDS = ['pending_sol', 'lifetime_sol', 'claimed_sol', 'total_rewards_sol'] as const;

/** The text of a JSON number or a string, or undefined for anything else. */
function numericText(v: unknown): string | undefined {
  if (isLosslessNumber(v)) return v.value;
  if (typeof v === 'string') return v;
  return undefined;
}

function preview(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
}

type Ctx = z.RefinementCtx<unknown>;

function amountOf(v: unknown, ctx: Ctx): Lamports {
  const text = numericText(v);
  if (text === undefined) {
    ctx.addIssue({ code: 'custom', message: `${AMOUNT_EXPECTED}, got ${describe(v)}` });
    return z.NEVER;
  }
  try {
    // Lenient on purpose: a float-serialising server is not wrong about the amount, only noisy.
    return parseServerSol(text).lamports;
  } catch (err) {
    const why = err instanceof AmountError ? ` (${err.message})` : '';
    ctx.addIssue({ code: 'custom', message: `${AMOUNT_EXPECTED}, got ${preview(text)}${why}` });
    return z.NEVER;
  }
}

/** A SOL amount that must be present; becomes lamports. */
export const requiredAmount = z.transform((v, ctx): Lamports => {
  if (v === undefined || v === null) {
    ctx.addIssue({ code: 'custom', message: `required (${AMOUNT_EXPECTED})` });
    return z.NEVER;
  }
  return amountOf(v, ctx);
});

/** A SOL amount that may be missing or null (→ null). */
export const optionalAmount = z.transform((v, ctx): Lamports | null => (v === undefined || v === null ? null : amountOf(v, ctx)));

/**
 * The amount fields of a parsed answer (`raw`, numbers as exact text) whose value was rounded to
 * the lamport, e.g. `["pending_sol"]` for `"pending_sol": 0.30000000000000004`: for a debug event.
 * Fields that are missing or not amounts are not listed (the schema already judged them).
 */
export function roundedAmountFields(raw: unknown): string[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || isLosslessNumber(raw)) return [];
  const rec = raw as Record<string, unknown>;
  return AMOUNT_FIELDS.filter((key) => {
    const text = Object.hasOwn(rec, key) ? numericText(rec[key]) : undefined;
    if (text === undefined) return false;
    try {
      return parseServerSol(text).rounded;
    } catch {
      return false;
    }
  });
}

/** A positive integer's text (a rank): digits, at most a safe integer. */
function isPositiveIntText(text: string | undefined): text is string {
  return text !== undefined && /^[1-9][0-9]{0,15}$/.test(text) && Number(text) <= Number.MAX_SAFE_INTEGER;
}

/** A positive integer (rank): a JSON number, or a string of digits. */
function positiveIntOf(v: unknown, ctx: Ctx): number {
  const text = numericText(v);
  if (isPositiveIntText(text)) return Number(text);
  ctx.addIssue({ code: 'custom', message: `expected a positive integer, got ${describe(v)}` });
  return z.NEVER;
}

export const requiredPositiveInt = z.transform((v, ctx): number => {
  if (v === undefined || v === null) {
    ctx.addIssue({ code: 'custom', message: 'required (expected a positive integer)' });
    return z.NEVER;
  }
  return positiveIntOf(v, ctx);
});

/**
 * A wallet's rank in its summary: missing, null or 0 (how the real service writes "unranked") is
 * null; otherwise a positive integer as above. The leaderboard keeps requiredPositiveInt: a row on
 * it is ranked by definition.
 */
export const optionalRank = z.transform((v, ctx): number | null => {
    if (v === undefined || v === null) return null;
    const text = numericText(v);
    if (text !== undefined && /^0+$/.test(text)) return null;
    return positiveIntOf(v, ctx);
  });

/** Decimal text kept as sent (scores, volumes, share counts): not used for decisions. */
export const optionalDecimalText = z.transform((v, ctx): string | null => {
    if (v === undefined || v === null) return null;
    const text = numericText(v);
    if (text !== undefined) return text;
    ctx.addIssue({ code: 'custom', message: `expected a number, got ${describe(v)}` });
    return z.NEVER;
  });

// A JSON number's text, or a string spelling one; at most 64 characters like an amount.
const NUMBER_TEXT = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?$/;

function isNumberText(text: string | undefined): text is string {
  return text !== undefined && text.length <= 64 && NUMBER_TEXT.test(text);
}

/**
 * Like optionalDecimalText, but a string must spell a number: for what a read reports (scores,
 * volumes), where "high", "NaN" or a 100 kB string means the answer is not what we think it is.
 * Answers to signed requests keep the tolerant form: an applied deposit must not turn `unknown`
 * over a cosmetic field.
 */
export const optionalNumberText = z.transform((v, ctx): string | null => {
    if (v === undefined || v === null) return null;
    const text = numericText(v);
    if (isNumberText(text)) return text;
    ctx.addIssue({ code: 'custom', message: `expected a number, got ${describe(v)}` });
    return z.NEVER;
  });

/**
 * A field of a signed request's answer said for the reader (tx, mint, vault, received, ...), read
 * with `field`; of another shape (an object, a number where the examples write a string) it reads
 * as absent, and stays in `raw`. Whether the action was applied is the body's status and error
 * (SPEC §2): refused as unreadable over such a field, an applied mint or burn turned `unknown` and
 * held every transfer of its wallet until an operator resolved it (docs/reliability.md, helper h29e).
 */
export function said<T>(field: z.ZodType<T | null>) {
  return z.transform((v): T | null => {
    const r = field.safeParse(v);
    return r.success ? r.data : null;
  });
}

export const requiredString = z.transform((v, ctx): string => {
  if (typeof v === 'string' && v.length > 0) return v;
  ctx.addIssue({
    code: 'custom',
    message: v === undefined || v === null ? 'required (expected a string)' : `expected a non-empty string, got ${describe(v)}`,
  });
  return z.NEVER;
});

export const optionalString = z.transform((v, ctx): string | null => {
    if (v === undefined || v === null) return null;
    if (typeof v === 'string') return v;
    ctx.addIssue({ code: 'custom', message: `expected a string, got ${describe(v)}` });
    return z.NEVER;
  });

/** "YYYY-MM-DD" naming a real calendar date. */
export function isEpochDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

export const requiredEpoch = z.transform((v, ctx): string => {
  if (typeof v === 'string' && isEpochDate(v)) return v;
  ctx.addIssue({
    code: 'custom',
    message:
      v === undefined || v === null
        ? 'required (expected a date YYYY-MM-DD)'
        : `expected a date YYYY-MM-DD, got ${describe(v)}`,
  });
  return z.NEVER;
});

const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

export function looksLikeAddress(text: string): boolean {
  return BASE58_ADDRESS.test(text);
}

export const requiredAddress = z.transform((v, ctx): string => {
  if (typeof v === 'string' && looksLikeAddress(v)) return v;
  ctx.addIssue({
    code: 'custom',
    message:
      v === undefined || v === null
        ? 'required (expected a base58 address)'
        : `expected a base58 address, got ${describe(v)}`,
  });
  return z.NEVER;
});

/** A short description of an unexpected value for an issue message (never the whole value). */
export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (isLosslessNumber(v)) return `the number ${v.value.length > 40 ? `${v.value.slice(0, 40)}...` : v.value}`;
  if (typeof v === 'string') return `the string ${preview(v)}`;
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}
