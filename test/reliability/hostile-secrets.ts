// Invariant 4's yardstick: every 10-character piece of every secret, in every form it could be
// written in (as is, JSON-escaped, percent-encoded). A cut secret is still a leak, so the check is
// on pieces, not whole values: a redactor that misses a truncated key shows here.
export const PIECE = 10;

function* pieces(text: string): Generator<string> {
  const forms = new Set([text, JSON.stringify(text).slice(1, -1), encodeURIComponent(text)]);
  for (const form of forms) for (let i = 0; i + PIECE <= form.length; i++) yield form.slice(i, i + PIECE);
}

export class SecretWindows {
  private readonly pieces = new Map<string, string>();
  /**
   * Pieces of public text that may be printed freely. A seed's number-array form has few bits a
   * character ("12,200,3,4" is about three bytes), so over thousands of wallets some of its pieces
   * also occur in public-key arrays (the second half of an echoed 64-byte key): such a piece is no
   * evidence of a leak and is not counted.
   */
  private readonly open = new Set<string>();

  /** Registers a secret under a name ("api key", "wallet 0 seed (hex)"), in every form it could be printed in. */
  add(name: string, secret: string): void {
    for (const piece of pieces(secret)) if (!this.pieces.has(piece)) this.pieces.set(piece, name);
  }

  /** Registers public text whose pieces are not to be counted as a secret's. */
  addPublic(text: string): void {
    for (const piece of pieces(text)) this.open.add(piece);
  }

  /** Adds every piece of another set, its names prefixed (one scan then serves many sequences). */
  merge(other: SecretWindows, prefix: string): void {
    for (const [piece, name] of other.pieces) if (!this.pieces.has(piece)) this.pieces.set(piece, `${name} of ${prefix}`);
    for (const piece of other.open) this.open.add(piece);
  }

  /** The first piece of a secret found in `text`, described, or undefined. */
  find(text: string): string | undefined {
    for (let i = 0; i + PIECE <= text.length; i++) {
      const piece = text.slice(i, i + PIECE);
      const name = this.pieces.get(piece);
      if (name !== undefined && !this.open.has(piece)) {
        const from = Math.max(0, i - 40);
        return `a piece of the ${name} ${JSON.stringify(text.slice(i, i + PIECE))} at offset ${i}: …${text.slice(from, i + PIECE + 40)}…`;
      }
    }
    return undefined;
  }
}
