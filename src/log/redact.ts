// Secrets are redacted by value, not by key name: a key can end up in an error message, a URL or
// a nested object no path-based rule foresaw. Every secret autoclaim loads is registered here
// (in all the encodings it could be printed in) and scrubbed from every line before it is written.
//
// A fleet of 10,000 wallets registers ~130,000 secret strings, and every log line and every stored
// summary passes through redact(). One big alternation regex costs O(secrets) per character (and
// rebuilding it on each add made start-up quadratic), so secrets are indexed by a rolling hash of
// their first MIN_SECRET_LENGTH characters, then by length: a scan is O(text length × distinct
// secret lengths sharing a prefix), whatever the fleet size.

const MIN_SECRET_LENGTH = 8; // shorter "secrets" would scrub ordinary words out of logs
export const REDACTED = '[REDACTED]';

const WINDOW = MIN_SECRET_LENGTH;
const BASE = 257;
/** BASE^(WINDOW-1) mod 2^32: the weight of the character leaving the window. */
const LEAD_WEIGHT = (() => {
  let w = 1;
  for (let i = 1; i < WINDOW; i++) w = Math.imul(w, BASE);
  return w;
})();
/** Hashes are kept to 30 bits so Map keys stay small integers. */
const MASK = 0x3fffffff;

function windowHash(text: string, at: number): number {
  let h = 0;
  for (let i = at; i < at + WINDOW; i++) h = (Math.imul(h, BASE) + text.charCodeAt(i)) | 0;
  return h;
}

export class Redactor {
  private readonly secrets = new Set<string>();
  /** Secrets by the hash of their first WINDOW characters. */
  private readonly buckets = new Map<number, Bucket>();

  /** Registers a secret value. Returns this for chaining. */
  add(secret: string | undefined): this {
    if (secret === undefined) return this;
    const s = secret.trim();
    if (s.length < MIN_SECRET_LENGTH || this.secrets.has(s)) return this;
    this.secrets.add(s);
    const key = windowHash(s, 0) & MASK;
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { lengths: [], secrets: new Set() };
      this.buckets.set(key, bucket);
    }
    bucket.secrets.add(s);
    if (!bucket.lengths.includes(s.length)) {
      // Longest first, so a secret containing another is scrubbed whole.
      bucket.lengths.push(s.length);
      bucket.lengths.sort((a, b) => b - a);
    }
    return this;
  }

  /** Registers raw key bytes in every encoding a log line might carry them in. */
  addBytes(bytes: Uint8Array, encodeBase58: (b: Uint8Array) => string): this {
    const buf = Buffer.from(bytes);
    this.add(buf.toString('hex'));
    this.add(buf.toString('base64'));
    this.add(buf.toString('base64url'));
    this.add(encodeBase58(bytes));
    this.add(JSON.stringify([...bytes]));
    this.add([...bytes].join(','));
    return this;
  }

  get size(): number {
    return this.secrets.size;
  }

  /**
   * Every registered secret replaced by [REDACTED], scanning left to right and taking the longest
   * secret that starts at each position (what a longest-first alternation regex does).
   */
  redact(text: string): string {
    if (this.secrets.size === 0 || text.length < WINDOW) return text;
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
    const bucket = this.buckets.get(h & MASK);
    if (bucket === undefined) return 0;
    for (const len of bucket.lengths) {
      if (at + len <= text.length && bucket.secrets.has(text.slice(at, at + len))) return len;
    }
    return 0;
  }
}

interface Bucket {
  /** Distinct lengths of the secrets here, longest first. */
  lengths: number[];
  secrets: Set<string>;
}
