// JSON at the edge is parsed with lossless-json: JSON.parse turns 12345678.987654321 into
// 12345678.98765432, and an amount that is off by a lamport is a wrong amount. Numbers stay
// LosslessNumber (their exact text) until a schema turns them into lamports or integers.
import { isLosslessNumber, LosslessNumber, parse, stringify } from 'lossless-json';

export { isLosslessNumber, LosslessNumber } from 'lossless-json';

/**
 * Parses JSON keeping every number as a LosslessNumber (exact text). Throws SyntaxError on
 * malformed JSON and on duplicate keys with different values (which value would the server mean?).
 * A "__proto__" key is kept as an ordinary property, never as a prototype.
 */
export function parseJsonLossless(text: string): unknown {
  return parse(text);
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

/** The exact text of a JSON number that is to be written as-is (e.g. a signed amount). */
export function jsonNumber(text: string): LosslessNumber {
  return new LosslessNumber(text);
}
