// Secrets are redacted by value, not by key name: a key can end up in an error message, a URL or
// a nested object no path-based rule foresaw. Every secret autoclaim loads is registered here
// (in all the encodings it could be printed in) and scrubbed from every line before it is written.

const MIN_SECRET_LENGTH = 8; // shorter "secrets" would scrub ordinary words out of logs
export const REDACTED = '[REDACTED]';

export class Redactor {
  private readonly secrets = new Set<string>();
  private pattern: RegExp | undefined;

  /** Registers a secret value. Returns this for chaining. */
  add(secret: string | undefined): this {
    if (secret === undefined) return this;
    const s = secret.trim();
    if (s.length < MIN_SECRET_LENGTH || this.secrets.has(s)) return this;
    this.secrets.add(s);
    // Longest first, so a secret containing another is scrubbed whole.
    const alternatives = [...this.secrets].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.pattern = new RegExp(alternatives.join('|'), 'g');
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

  redact(text: string): string {
    return this.pattern === undefined ? text : text.replace(this.pattern, REDACTED);
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
