// Invariant 4's yardstick: every 10-character piece of every secret, in every form it could be
// written in (as is, JSON-escaped, percent-encoded). A cut secret is still a leak, so the check is
// on pieces, not whole values: a redactor that misses a truncated key shows here.
export const PIECE = 10;

export class SecretWindows {
  private readonly pieces = new Map<string, string>();

  /** Registers a secret under a name ("api key", "wallet 0 seed (hex)"). */
  add(name: string, secret: string): void {
    const forms = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]);
    for (const form of forms) {
      for (let i = 0; i + PIECE <= form.length; i++) {
        const piece = form.slice(i, i + PIECE);
        if (!this.pieces.has(piece)) this.pieces.set(piece, name);
      }
    }
  }

  /** Adds every piece of another set, its names prefixed (one scan then serves many sequences). */
  merge(other: SecretWindows, prefix: string): void {
    for (const [piece, name] of other.pieces) if (!this.pieces.has(piece)) this.pieces.set(piece, `${name} of ${prefix}`);
  }

  /** The first piece of a secret found in `text`, described, or undefined. */
  find(text: string): string | undefined {
    for (let i = 0; i + PIECE <= text.length; i++) {
      const name = this.pieces.get(text.slice(i, i + PIECE));
      if (name !== undefined) {
        const from = Math.max(0, i - 40);
        return `a piece of the ${name} ${JSON.stringify(text.slice(i, i + PIECE))} at offset ${i}: …${text.slice(from, i + PIECE + 40)}…`;
      }
    }
    return undefined;
  }
}
