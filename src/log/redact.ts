// Secrets are redacted by value, not by key name: a key can end up in an error message, a URL or
// a nested object no path-based rule foresaw. Every secret autoclaim loads is registered here
// (in the encodings it could be printed in) and scrubbed from every line before it is written.
// Each registered text is also registered in the forms a line carries it in: JSON-escaped (a log
// line is JSON, and a stored body logged is JSON inside JSON) and URL-encoded, since a secret with
// a `"`, `\` or `&` in it would otherwise pass through in its escaped spelling.
//
// A fleet of 10,000 wallets registers ~90,000 secret strings, and every log line and every stored
// summary passes through redact(). One big alternation regex costs O(secrets) per character (and
// rebuilding it on each add made start-up quadratic), so secrets are indexed by a rolling hash of
// their first MIN_SECRET_LENGTH characters, then by length: a scan is O(text length × distinct
// secret lengths sharing a prefix), whatever the fleet size.
//
// The redactor keeps no copy of any secret, only its length and a 64-bit hash of its whole text
// (two independent 32-bit lanes): it holds no key material, and a secret costs a few dozen bytes of
// typed arrays instead of a string, a Set entry and a bucket object. Matching by hash cannot miss
// a secret: the same text always hashes the same. A different text would be taken for a secret
// only with the same prefix hash, the same length and the same 64-bit hash (a chance of about
// 2^-64 for each comparison, and comparisons only happen where a prefix hash matched); it would
// then be redacted too, which over-redacts, the safe direction, and never leaks.

// Shorter "secrets" would scrub ordinary words out of logs. The config refuses an API key shorter
// than 16 characters (src/config/secrets.ts), so no secret autoclaim loads falls below this.
const MIN_SECRET_LENGTH = 8;
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

/**
 * The full-text hash of text[at, end), as two 32-bit lanes left in laneA and laneB (one pass over
 * the text for both, and no pair allocated for them). Each lane's step (xor a character in,
 * multiply by an odd constant, xor-shift the high bits down) is a bijection of its state, so two
 * texts of the same length that differ in a single character never collide. The lanes differ in
 * seed, multiplier and shift, so that a text colliding in one is no likelier to collide in the other.
 */
function hashLanes(text: string, at: number, end: number): void {
  let a = 0x2545f491;
  let b = 0x6a09e667;
  for (let i = at; i < end; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0xcc9e2d51);
    a ^= a >>> 15;
    b = Math.imul(b ^ c, 0x1b873593);
    b ^= b >>> 13;
  }
  laneA = a | 0;
  laneB = b | 0;
}
/** What hashLanes left: read at once, before another call. */
let laneA = 0;
let laneB = 0;

// Two hash tables in Int32Arrays (no object, array or Set per secret):
// - `secrets`: every secret as a cell [window hash, length, hashA, hashB] (length 0: a free cell),
//   open addressing by its full hash. Probed only where a window matched, so it may be 3/4 full.
// - `lengths`: for each window hash, the distinct lengths of the secrets that start with it, as
//   entries [window hash, length, next] chained from `heads` longest first (most windows have
//   one). Probed at every position of every line, so `heads` stays at most half full: most probes
//   read one empty head.
// - `seen`: a bit per window hash bucket, 8 buckets per head, set for every window in `lengths`.
//   Read before `heads` at every position: with a large fleet `heads` is big enough that the rest
//   of a busy process evicts it between two lines, so nearly every probe missed the cache. `seen`
//   is a quarter of its size and at most 1/16 full, so most positions are answered there.
const CELL = 4;
const WIN = 0;
const LEN = 1;
const HASH_A = 2;
const HASH_B = 3;
const ENTRY = 3;
/** `seen` has 2^this as many bits as `heads` has slots. */
const SEEN_EXTRA_BITS = 3;
const NEXT = 2;

/** The top `bits` bits of x times the golden ratio (Fibonacci hashing: the polynomial window hash's low bits are weak). */
function spread(x: number, bits: number): number {
  return Math.imul(x, 0x9e3779b1) >>> (32 - bits);
}

function putCell(secrets: Int32Array, o: number, win: number, len: number, a: number, b: number): void {
  secrets[o + WIN] = win;
  secrets[o + LEN] = len;
  secrets[o + HASH_A] = a;
  secrets[o + HASH_B] = b;
}

/** The inside of a JSON string literal holding `s`. */
function jsonEscaped(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

/**
 * Characters that JSON escaping, percent-encoding and form-encoding all leave as they are (form
 * encoding escapes `~`, `!`, `'`, `(` and `)`; JSON only quotes, backslashes and controls).
 */
const PRINTS_AS_ITSELF = /^[A-Za-z0-9._-]*$/;
/** What JSON.stringify escapes inside a string (a quote, a backslash, a control, a lone surrogate), and DEL to C1 with the controls. */
const JSON_ESCAPES = /["\\\p{Cc}\p{Cs}]/u;
/** Where form encoding and encodeURIComponent differ: form encoding escapes these too (and a space as `+`). */
const FORM_ONLY = /[ ~!'()*]/;

/**
 * The spellings a secret can take in a line: itself, JSON-escaped once and twice, and URL-encoded
 * (percent-encoded, and form-encoded with `+` for spaces), for a secret that does not print as
 * itself in all of them (add() registers such a one alone).
 */
function printedForms(s: string): Set<string> {
  const forms = new Set([s]);
  // Escaping a text JSON leaves as it is gives the text again: computed only when it would differ.
  if (JSON_ESCAPES.test(s)) {
    const json = jsonEscaped(s);
    forms.add(json).add(jsonEscaped(json));
  }
  try {
    const uri = encodeURIComponent(s);
    forms.add(uri);
    // Base64 and a key file's number list hold none of FORM_ONLY: their form encoding is their
    // percent-encoding, and building a URLSearchParams for each was a fifth of a key's cost.
    forms.add(FORM_ONLY.test(s) ? new URLSearchParams([['', s]]).toString().slice(1) : uri);
  } catch {
    // a lone surrogate has no URL encoding, so it cannot appear URL-encoded either
  }
  return forms;
}

export class Redactor {
  private count = 0;
  private secretBits = 6;
  private secrets = new Int32Array(CELL << this.secretBits);
  private entries = 0;
  private lengths = new Int32Array(ENTRY * 64);
  private headBits = 7;
  private heads = new Int32Array(1 << this.headBits).fill(-1);
  /** 2^(headBits + SEEN_EXTRA_BITS) bits; a window's bit is the top bits of its spread hash. */
  private seen = new Int32Array(1 << (this.headBits + SEEN_EXTRA_BITS - 5));

  /** Registers a secret value, and its escaped forms (see printedForms). Returns this for chaining. */
  add(secret: string | undefined): this {
    if (secret === undefined) return this;
    const s = secret.trim();
    if (s.length < MIN_SECRET_LENGTH) return this;
    // Hex, base58 and base64url (most of what a fleet's keys register) print as themselves in all
    // five spellings: nothing to escape, no set of forms to build (~half of what loading a key cost).
    if (PRINTS_AS_ITSELF.test(s)) this.addForm(s);
    else for (const form of printedForms(s)) this.addForm(form);
    return this;
  }

  private addForm(s: string): void {
    const win = windowHash(s, 0);
    hashLanes(s, 0, s.length);
    if (!this.insertSecret(win, s.length, laneA, laneB)) return;
    this.count++;
    if (this.count * 4 > (this.secrets.length / CELL) * 3) this.growSecrets();
    this.addLength(win, s.length);
  }

  /**
   * Registers raw secret bytes in every encoding a log line might carry them in. A JSON array
   * of the numbers contains the comma list, whose match scrubs everything inside the brackets.
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
    return this.count;
  }

  /**
   * Every registered secret replaced by [REDACTED], scanning left to right and taking the longest
   * secret that starts at each position (what a longest-first alternation regex does).
   */
  redact(text: string): string {
    if (this.count === 0 || text.length < WINDOW) return text;
    let out = '';
    let copied = 0;
    let h = windowHash(text, 0);
    let i = 0;
    const last = text.length - WINDOW;
    while (i <= last) {
      const hit = this.matchAt(text, i, h);
      if (hit > 0) {
        out += text.slice(copied, i) + REDACTED;
        i += hit;
        copied = i;
        if (i <= last) h = windowHash(text, i);
        continue;
      }
      if (i < last) h = (Math.imul(h - Math.imul(text.charCodeAt(i), LEAD_WEIGHT), BASE) + text.charCodeAt(i + WINDOW)) | 0;
      i++;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }

  /** Length of the longest secret starting at `at` (whose window hashes to h), or 0. */
  private matchAt(text: string, at: number, h: number): number {
    const bit = spread(h, this.headBits + SEEN_EXTRA_BITS);
    if (((this.seen[bit >>> 5] ?? 0) & (1 << (bit & 31))) === 0) return 0;
    const { lengths } = this;
    // spread(h, b) is the top b bits of one product: the head is the bit's top headBits bits.
    for (let e = this.heads[bit >>> SEEN_EXTRA_BITS] ?? -1; e >= 0; e = lengths[e * ENTRY + NEXT] ?? -1) {
      if (lengths[e * ENTRY + WIN] !== h) continue;
      const end = at + (lengths[e * ENTRY + LEN] ?? 0);
      if (end > text.length) continue;
      hashLanes(text, at, end);
      if (this.hasSecret(h, end - at, laneA, laneB)) return end - at;
    }
    return 0;
  }

  /** The cell of (win, len, a, b) in `secrets`, or the free cell where it would go. */
  private cellOf(secrets: Int32Array, bits: number, win: number, len: number, a: number, b: number): number {
    const mask = (1 << bits) - 1;
    for (let i = spread(a ^ Math.imul(b, 0x85ebca6b), bits); ; i = (i + 1) & mask) {
      const o = i * CELL;
      const l = secrets[o + LEN] ?? 0;
      if (l === 0) return o;
      if (l === len && secrets[o + WIN] === win && secrets[o + HASH_A] === a && secrets[o + HASH_B] === b) return o;
    }
  }

  private hasSecret(win: number, len: number, a: number, b: number): boolean {
    return this.secrets[this.cellOf(this.secrets, this.secretBits, win, len, a, b) + LEN] !== 0;
  }

  /** False when the secret is already there. */
  private insertSecret(win: number, len: number, a: number, b: number): boolean {
    const o = this.cellOf(this.secrets, this.secretBits, win, len, a, b);
    if (this.secrets[o + LEN] !== 0) return false;
    putCell(this.secrets, o, win, len, a, b);
    return true;
  }

  private growSecrets(): void {
    const old = this.secrets;
    this.secretBits++;
    this.secrets = new Int32Array(CELL << this.secretBits);
    for (let o = 0; o < old.length; o += CELL) {
      const len = old[o + LEN] ?? 0;
      if (len === 0) continue;
      const win = old[o + WIN] ?? 0;
      const a = old[o + HASH_A] ?? 0;
      const b = old[o + HASH_B] ?? 0;
      putCell(this.secrets, this.cellOf(this.secrets, this.secretBits, win, len, a, b), win, len, a, b);
    }
  }

  /** Adds `len` to the lengths of window `win`, unless it is there already. */
  private addLength(win: number, len: number): void {
    for (let e = this.heads[spread(win, this.headBits)] ?? -1; e >= 0; e = this.lengths[e * ENTRY + NEXT] ?? -1) {
      if (this.lengths[e * ENTRY + WIN] === win && this.lengths[e * ENTRY + LEN] === len) return;
    }
    if ((this.entries + 1) * ENTRY > this.lengths.length) {
      const grown = new Int32Array(this.lengths.length * 2);
      grown.set(this.lengths);
      this.lengths = grown;
    }
    const e = this.entries++;
    this.lengths[e * ENTRY + WIN] = win;
    this.lengths[e * ENTRY + LEN] = len;
    if (this.entries * 2 > this.heads.length) {
      this.headBits++;
      this.heads = new Int32Array(1 << this.headBits).fill(-1);
      this.seen = new Int32Array(1 << (this.headBits + SEEN_EXTRA_BITS - 5));
      for (let i = 0; i < this.entries; i++) this.link(i);
    } else {
      this.link(e);
    }
  }

  /** Puts an entry into its window's chain after the longer ones, so the first match is the longest. */
  private link(e: number): void {
    const { lengths, heads, seen } = this;
    const bit = spread(lengths[e * ENTRY + WIN] ?? 0, this.headBits + SEEN_EXTRA_BITS);
    seen[bit >>> 5] = (seen[bit >>> 5] ?? 0) | (1 << (bit & 31));
    const bucket = bit >>> SEEN_EXTRA_BITS;
    const len = lengths[e * ENTRY + LEN] ?? 0;
    let prev = -1;
    let cur = heads[bucket] ?? -1;
    while (cur >= 0 && (lengths[cur * ENTRY + LEN] ?? 0) >= len) {
      prev = cur;
      cur = lengths[cur * ENTRY + NEXT] ?? -1;
    }
    lengths[e * ENTRY + NEXT] = cur;
    if (prev < 0) heads[bucket] = e;
    else lengths[prev * ENTRY + NEXT] = e;
  }
}
