// JSON in and out of the sandbox without a float ever touching an amount. Outgoing amounts are
// spliced in as raw number text (formatSol output); incoming numbers are kept as the exact text
// the client wrote, because SPEC §1 says that text must be byte-for-byte the signed string.
import { parse } from 'lossless-json';
import { formatSol, type Lamports } from '../amount.js';

const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/** A JSON number carried as its exact text, written out verbatim. */
export class RawNumber {
  constructor(readonly text: string) {
    if (!JSON_NUMBER.test(text)) throw new Error(`not JSON number text: ${text}`);
  }
}

export type JsonValue =
  | null
  | boolean
  | number
  | string
  | RawNumber
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue | undefined };

/** An amount as a JSON number whose text is formatSol(lamports). */
export function sol(lamports: Lamports): RawNumber {
  return new RawNumber(formatSol(lamports));
}

/** Serializes like JSON.stringify, but RawNumber text goes out untouched and undefined fields are dropped. */
export function writeJson(value: JsonValue): string {
  if (value === null) return 'null';
  if (value instanceof RawNumber) return value.text;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('non-finite number in a response');
    return JSON.stringify(value);
  }
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${(value as readonly JsonValue[]).map(writeJson).join(',')}]`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, JsonValue | undefined>)) {
    if (v !== undefined) parts.push(`${JSON.stringify(k)}:${writeJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

export class BodySyntaxError extends Error {}

/**
 * Parses a request body keeping every number as RawNumber. Duplicate keys are refused outright:
 * a body where "amount" appears twice could be read one way by the signer and another by us.
 */
export function parseLossless(text: string): unknown {
  try {
    return parse(text, null, {
      parseNumber: (t: string) => new RawNumber(t),
      onDuplicateKey: ({ key }) => {
        throw new BodySyntaxError(`duplicate key "${key}"`);
      },
    });
  } catch (err) {
    if (err instanceof BodySyntaxError) throw err;
    throw new BodySyntaxError(err instanceof Error ? err.message : 'invalid JSON');
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof RawNumber);
}

/** Own property only: a body key like "__proto__" must not reach the prototype chain. */
export function field(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}
