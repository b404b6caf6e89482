// JSON at the edge is parsed with lossless-json: JSON.parse turns 12345678.987654321 into
// 12345678.98765432, and an amount that is off by a lamport is a wrong amount. Numbers stay
// LosslessNumber (their exact text) until a schema turns them into lamports or integers.
import { parse, stringify } from 'lossless-json';

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
  return parse(text);
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

/**
 * Serializes a value, writing each LosslessNumber byte-for-byte as it was received and bigints
 * as JSON integers: lossless-json's stringify does both itself (a LosslessNumber is valid JSON
 * number text by construction). Throws when the value has no JSON form (undefined, a function).
 */
export function stringifyLossless(value: unknown): string {
  const text = stringify(value);
  if (text === undefined) throw new TypeError('value has no JSON representation');
  return text;
}
