// JSON at the edge is parsed with lossless-json: JSON.parse turns 12345678.987654321 into
// 12345678.98765432, and an amount that is off by a lamport is a wrong amount. Numbers stay
// LosslessNumber (their exact text) until a schema turns them into lamports or integers.
import { isLosslessNumber, LosslessNumber, parse, stringify } from 'lossless-json';

export { isLosslessNumber, LosslessNumber } from 'lossless-json';

/** Deeper than any answer of the API (its shapes are 3 levels deep), unknown fields included. */
export const MAX_JSON_DEPTH = 64;

/**
 * Parses JSON keeping every number as a LosslessNumber (exact text). Throws SyntaxError on
 * malformed JSON, on duplicate keys with different values (which value would the server mean?)
 * and on nesting deeper than MAX_JSON_DEPTH: a few thousand levels in an unknown field parse
 * fine but overflow the stack later, when the summary is serialized to be stored.
 * A "__proto__" key is kept as an ordinary property, never as a prototype.
 */
export function parseJsonLossless(text: string): unknown {
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) throw new SyntaxError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  const plain = parsePlainJson(text, losslessNumber);
  return plain === NOT_PLAIN ? parse(text) : plain;
}

/**
 * The value of a JSON text without escapes, duplicate keys or a "__proto__" key, numbers made by
 * `number` from their text; undefined for any other text (valid or not), which the caller parses
 * with lossless-json. The same value lossless-json gives, with fewer allocations. Recursive: a
 * caller that does not bound the depth first catches the RangeError of a deeply nested text.
 */
export function parsePlain(text: string, number: (text: string) => unknown): unknown {
  const plain = parsePlainJson(text, number);
  return plain === NOT_PLAIN ? undefined : plain;
}

const NOT_PLAIN = Symbol('not plain');
const losslessNumber = (text: string): LosslessNumber => new LosslessNumber(text);

/**
 * lossless-json's parse for a text without escapes, duplicate keys or a "__proto__" key (what an
 * API answers), taking each string as a slice of the text: lossless-json builds every string a
 * character at a time, a tenth of what a poll allocated. NOT_PLAIN for anything else, valid or
 * not, which lossless-json then parses (or refuses, in its own words). test/api/json.test.ts
 * holds the two to the same value.
 */
function parsePlainJson(text: string, numberOf: (text: string) => unknown): unknown {
  let i = 0;
  const ws = (): void => {
    for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d; c = text.charCodeAt(++i));
  };
  const digits = (): number => {
    const start = i;
    for (let c = text.charCodeAt(i); c >= 0x30 && c <= 0x39; c = text.charCodeAt(++i));
    return i - start;
  };
  const string = (): string | typeof NOT_PLAIN => {
    const start = ++i;
    for (let c = text.charCodeAt(i); c !== 0x22; c = text.charCodeAt(++i)) {
      // A backslash (an escape), a control character, or the end of the text: not plain.
      if (c === 0x5c || c < 0x20 || Number.isNaN(c)) return NOT_PLAIN;
    }
    return text.slice(start, i++);
  };
  const number = (): unknown => {
    const start = i;
    if (text.charCodeAt(i) === 0x2d) i++;
    if (text.charCodeAt(i) === 0x30) i++;
    else if (digits() === 0) return NOT_PLAIN;
    if (text.charCodeAt(i) === 0x2e) {
      i++;
      if (digits() === 0) return NOT_PLAIN;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = text.charCodeAt(i);
      if (sign === 0x2b || sign === 0x2d) i++;
      if (digits() === 0) return NOT_PLAIN;
    }
    return numberOf(text.slice(start, i));
  };
  const value = (): unknown => {
    ws();
    const c = text.charCodeAt(i);
    let v: unknown = NOT_PLAIN;
    if (c === 0x22) v = string();
    else if (c === 0x7b) v = object();
    else if (c === 0x5b) v = array();
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) v = number();
    else if (text.startsWith('true', i)) [v, i] = [true, i + 4];
    else if (text.startsWith('false', i)) [v, i] = [false, i + 5];
    else if (text.startsWith('null', i)) [v, i] = [null, i + 4];
    ws();
    return v;
  };
  const object = (): Record<string, unknown> | typeof NOT_PLAIN => {
    i++;
    ws();
    const out: Record<string, unknown> = {};
    if (text.charCodeAt(i) === 0x7d) return (i++, out);
    for (;;) {
      if (text.charCodeAt(i) !== 0x22) return NOT_PLAIN;
      const key = string();
      if (key === NOT_PLAIN || key === '__proto__' || Object.hasOwn(out, key)) return NOT_PLAIN;
      ws();
      if (text.charCodeAt(i) !== 0x3a) return NOT_PLAIN;
      i++;
      const v = value();
      if (v === NOT_PLAIN) return NOT_PLAIN;
      out[key] = v;
      const c = text.charCodeAt(i++);
      if (c === 0x7d) return out;
      if (c !== 0x2c) return NOT_PLAIN;
      ws();
    }
  };
  const array = (): unknown[] | typeof NOT_PLAIN => {
    i++;
    ws();
    const out: unknown[] = [];
    if (text.charCodeAt(i) === 0x5d) return (i++, out);
    for (;;) {
      const v = value();
      if (v === NOT_PLAIN) return NOT_PLAIN;
      out.push(v);
      const c = text.charCodeAt(i++);
      if (c === 0x5d) return out;
      if (c !== 0x2c) return NOT_PLAIN;
    }
  };
  const v = value();
  return i === text.length ? v : NOT_PLAIN;
}

/** One pass over the text counting open brackets outside strings; no parse, no recursion. */
function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const numberStringifiers = [
  { test: (v: unknown) => isLosslessNumber(v), stringify: (v: unknown) => (v as LosslessNumber).value },
  { test: (v: unknown) => typeof v === 'bigint', stringify: (v: unknown) => (v as bigint).toString() },
];

/**
 * Serializes a value, writing each LosslessNumber byte-for-byte as it was received and bigints
 * as JSON integers. Throws when the value has no JSON form (undefined, a function).
 */
export function stringifyLossless(value: unknown): string {
  const text = stringify(value, null, undefined, numberStringifiers);
  if (text === undefined) throw new TypeError('value has no JSON representation');
  return text;
}
