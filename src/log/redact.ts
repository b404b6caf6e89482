// Secrets are redacted by value, not by key name: a key can end up in an error message, a URL or
// a nested object no path-based rule foresaw. Every secret autoclaim loads is registered here
// (in the encodings it could be printed in) and scrubbed from every line before it is written.
// Each registered text is also registered in the forms a line carries it in: JSON-escaped (a log
// line is JSON, and a stored body logged is JSON inside JSON) and URL-encoded, since a secret with
// a `"`, `\` or `&` in it would otherwise pass through in its escaped spelling.
//
// A fleet registers a secret per wallet in several spellings, and every log line passes through
// redact(), so one alternation regex over all of them (O(secrets) per character) will not do.
// Secrets are indexed by a hash of their first MIN_SECRET_LENGTH characters, rolled along the text:
// only where that window is one a secret starts with are the registered lengths (a handful: one
// per encoding) tried, longest first. A scan costs O(text length) plus that at a window's hit.
//
// The redactor keeps no copy of any secret, only the lengths and a 53-bit hash of each whole text:
// a heap snapshot or core dump of the daemon holds no extra spelling of a key (JS strings cannot
// be zeroed). Matching by hash cannot miss a secret: the same text always hashes the same. Another
// text is taken for a secret only with a registered window, a registered length and a registered
// 53-bit hash; it would then be redacted too, which over-redacts, the safe direction, and never
// leaks. The index is numbers in two Sets (for 10,000 wallets, 70,000 spellings: ~3 MB; it was
// ~14 MB keyed by strings, bench/RESULTS.md).

// Shorter "secrets" would scrub ordinary words out of logs. The config refuses an API key shorter
// than 16 characters, and a PostgreSQL password or a channel's secret shorter than this
// (src/config/secrets.ts), so no secret autoclaim sends anywhere falls below it. The one exception
// is a PKCS#11 PIN (often 4 digits): it goes only to the PKCS#11 library in this process, and no
// message carries it (src/keys/backends/pkcs11.ts).
export const MIN_SECRET_LENGTH = 8;
export const REDACTED = '[REDACTED]';

const WINDOW = MIN_SECRET_LENGTH;
const BASE = 257;
/** BASE^(WINDOW-1) mod 2^32: the weight of the character leaving the window. */
const LEAD_WEIGHT = (() => {
  let w = 1;
  for (let i = 1; i < WINDOW; i++) w = Math.imul(w, BASE);
  return w;
})();

function windowHash(text: string, at: number): number {
  let h = 0;
  for (let i = at; i < at + WINDOW; i++) h = (Math.imul(h, BASE) + text.charCodeAt(i)) | 0;
  return h;
}

/** The window hash of the next position, from this one's: the character at `at` leaves, the one at `at + WINDOW` comes in. */
function rollWindow(h: number, text: string, at: number): number {
  return (Math.imul(h - Math.imul(text.charCodeAt(at), LEAD_WEIGHT), BASE) + text.charCodeAt(at + WINDOW)) | 0;
}

/**
 * A 53-bit hash of text[at, end) (exact in a double). Two 32-bit lanes, each step a bijection of
 * the lane's state (xor a character in, multiply by an odd constant, xor-shift), so two texts of
 * one length that differ in a single character never collide; the lanes differ in seed, multiplier
 * and shift, so a text colliding in one is no likelier to collide in the other.
 */
function fullHash(text: string, at: number, end: number): number {
  let a = 0x2545f491;
  let b = 0x6a09e667;
  for (let i = at; i < end; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0xcc9e2d51);
    a ^= a >>> 15;
    b = Math.imul(b ^ c, 0x1b873593);
    b ^= b >>> 13;
  }
  return (a >>> 0) * 0x200000 + (b >>> 11);
}

/** The inside of a JSON string literal holding `s`. */
function jsonEscaped(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

/**
 * The spellings a secret can take in a line: itself, JSON-escaped once and twice, and URL-encoded
 * (percent-encoded, and form-encoded with `+` for spaces). Most secrets (hex, base58, base64url)
 * print as themselves in all of them: the set keeps one.
 */
function printedForms(s: string): Set<string> {
  const json = jsonEscaped(s);
  const forms = new Set([s, json, jsonEscaped(json)]);
  try {
    forms.add(encodeURIComponent(s)).add(new URLSearchParams([['', s]]).toString().slice(1));
  } catch {
    // a lone surrogate has no URL encoding, so it cannot appear URL-encoded either
  }
  return forms;
}

export class Redactor {
  /** The window hash of every registered spelling (its first WINDOW characters). */
  readonly #windows = new Set<number>();
  /** The fullHash of every registered spelling. */
  readonly #hashes = new Set<number>();
  /** The distinct lengths of the registered spellings, longest first. */
  #lengths: number[] = [];

  /** Registers a secret value, and its escaped forms (see printedForms). Returns this for chaining. */
  add(secret: string | undefined): this {
    if (secret === undefined) return this;
    const s = secret.trim();
    if (s.length < MIN_SECRET_LENGTH) return this;
    for (const form of printedForms(s)) this.#addForm(form);
    return this;
  }

  #addForm(s: string): void {
    this.#hashes.add(fullHash(s, 0, s.length));
    this.#windows.add(windowHash(s, 0));
    if (!this.#lengths.includes(s.length)) this.#lengths = [...this.#lengths, s.length].sort((x, y) => y - x);
  }

  /**
   * Registers raw secret bytes in the encodings a line could carry them in: Buffer's own (hex,
   * base64, base64url; what an error or a dependency writes bytes as), base58 (how Solana tools
   * print keys) and the number list (a solana-keygen JSON array, and JSON.stringify of a Buffer's
   * data). What none of these covers (util.inspect of a Buffer, JSON.stringify of a Uint8Array) is
   * closed structurally: key bytes live only in #private fields of objects whose toJSON shows the
   * address (src/keys/).
   */
  addBytes(bytes: Uint8Array, encodeBase58: (b: Uint8Array) => string): this {
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength); // a view: no copy of the secret to leave behind
    this.add(buf.toString('hex'));
    this.add(buf.toString('base64'));
    this.add(buf.toString('base64url'));
    this.add(encodeBase58(bytes));
    this.add(bytes.join(','));
    return this;
  }

  /** How many distinct texts are registered (a secret and each of its forms that differs from it). */
  get size(): number {
    return this.#hashes.size;
  }

  /**
   * Every registered secret replaced by [REDACTED], scanning left to right and taking the longest
   * secret that starts at each position (what a longest-first alternation regex does).
   */
  redact(text: string): string {
    if (this.#hashes.size === 0 || text.length < WINDOW) return text;
    let out = '';
    let copied = 0;
    let h = windowHash(text, 0);
    let i = 0;
    const last = text.length - WINDOW;
    const windows = this.#windows;
    while (i <= last) {
      const hit = windows.has(h) ? this.#matchAt(text, i) : 0;
      if (hit > 0) {
        out += text.slice(copied, i) + REDACTED;
        i += hit;
        copied = i;
        if (i <= last) h = windowHash(text, i);
        continue;
      }
      if (i < last) h = rollWindow(h, text, i);
      i++;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }

  /** Length of the longest secret starting at `at` (where a registered window starts), or 0. */
  #matchAt(text: string, at: number): number {
    for (const len of this.#lengths) {
      if (at + len <= text.length && this.#hashes.has(fullHash(text, at, at + len))) return len;
    }
    return 0;
  }
}
