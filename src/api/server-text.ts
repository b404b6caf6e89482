// What a server said, made safe to keep. The client scrubs every body of registered secrets the
// moment it is read, before anything here cuts or escapes it: a key cut in half no longer matches
// the redactor, so redacting after a cut leaks most of the key (issue 11). Everything here takes
// text that is already scrubbed, and only bounds it. Decoding JSON is one more way to spell a
// secret (a server can write each character as \u00XX), so decoded strings are scrubbed again.
import { oneLine } from './classify.js';
import { isLosslessNumber, parseJsonLossless } from './json.js';
import { parseErrorBody } from './schemas.js';

const MAX_SERVER_CODE = 64;
const MAX_SERVER_MESSAGE = 200;

interface ServerErrorText {
  /** The server's `error.code` / `code`, bounded to one short line. */
  serverCode: string | undefined;
  /** The server's message (or the body, when it is not JSON), bounded to one line of ~200 characters. */
  serverMessage: string | undefined;
  /** "code: message" for an ApiError message, or '' when the body says nothing. */
  detail: string;
}

/** The parsed error code and message of a response body that is already scrubbed. */
export function describeServerError(scrubbed: string, scrub: (text: string) => string): ServerErrorText {
  if (scrubbed.trim() === '') return { serverCode: undefined, serverMessage: undefined, detail: '' };
  let parsed: unknown;
  try {
    parsed = scrubDecoded(parseJsonLossless(scrubbed), scrub);
  } catch {
    // Quoted as text: its JSON escapes written out first, or a secret in them would be quoted.
    const kept = keptText(scrubbed, scrub);
    return { serverCode: undefined, serverMessage: oneLine(kept, MAX_SERVER_MESSAGE), detail: oneLine(kept, 120) };
  }
  const { code, message } = parseErrorBody(parsed);
  const serverCode = code === undefined || code.trim() === '' ? undefined : oneLine(code, MAX_SERVER_CODE);
  const serverMessage = message === undefined || message.trim() === '' ? undefined : oneLine(message, MAX_SERVER_MESSAGE);
  const text = [code, message].filter((s) => s !== undefined && s !== '').join(': ');
  return { serverCode, serverMessage, detail: text === '' ? '' : oneLine(text, 160) };
}

/**
 * Scrubs every string (and object key) of a parsed JSON value in place and returns it. Objects
 * are edited with defineProperty, so a "__proto__" key stays an ordinary property.
 */
export function scrubDecoded(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = scrubDecoded(value[i], scrub);
    return value;
  }
  if (typeof value !== 'object' || value === null || isLosslessNumber(value)) return value;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const clean = scrubDecoded(record[key], scrub);
    const name = scrub(key);
    // Nothing of this entry was a secret (the usual case): it stays as the parser made it, an
    // ordinary data property, which is what defineProperty below would write again.
    if (name === key && clean === record[key]) continue;
    if (name !== key) delete record[key];
    Object.defineProperty(record, name, { value: clean, writable: true, enumerable: true, configurable: true });
  }
  return record;
}

// A JSON escape: \uXXXX, or a backslash and the one character it escapes (\\ \" \/ \n ...).
const JSON_ESCAPE = /\\(?:u([0-9a-fA-F]{4})|([\s\S]))/g;

/**
 * A body as kept for the record (a step's response in the state file, an ApiError's rawBody), from
 * its scrubbed text. The scrub of the text sees a secret only in the spellings the redactor knows
 * (as is, and as JSON.stringify escapes it), and a server can write any character of one as a
 * \uXXXX escape (or `/` as `\/`), which every JSON reader spells out again, a lenient one even in a
 * body the strict parser refused (a key given twice). So each escape is rewritten as JSON.stringify
 * writes that character, and the text scrubbed again: a body that was JSON still is, and reads the
 * same.
 */
export function keptText(scrubbed: string, scrub: (text: string) => string): string {
  if (!scrubbed.includes('\\')) return scrubbed;
  return scrub(
    scrubbed.replace(JSON_ESCAPE, (escape: string, hex: string | undefined, char: string | undefined) => {
      if (hex !== undefined) return JSON.stringify(String.fromCharCode(parseInt(hex, 16))).slice(1, -1);
      return char === '/' ? '/' : escape;
    }),
  );
}

// The end of a body cut off mid-stream can hold the first part of a secret, which no longer
// matches the redactor; this much of the end of such a text is never kept.
const CUT_TAIL_CHARS = 1_024;

/** The part of a scrubbed body that was cut off mid-stream that is safe to keep, at most `max` characters. */
export function keepOfCutBody(scrubbed: string, max: number): string {
  return scrubbed.slice(0, Math.max(0, Math.min(max, scrubbed.length - CUT_TAIL_CHARS)));
}
