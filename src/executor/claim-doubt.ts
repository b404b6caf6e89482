// Since when each wallet's claims have been held back as "claim in doubt" (an earlier claim of the
// wallet is sending or unknown, and is settled first). A short hold is routine (a claim reconciled
// at the next poll); a long one means a claim nobody settles — a summary that cannot tell, an
// operator's `actions resolve` awaited — and the wallet claims nothing meanwhile. Past the bound
// (alerts.unknown_step_after) the decision is logged at warn, and the supervisor raises the
// `claim_in_doubt` alert for the wallet (alerts.ts). Episode state only, kept per process.

export interface DoubtEpisode {
  wallet: string;
  address: string;
  since: number;
}

export class ClaimDoubtWatch {
  private readonly episodes = new Map<string, DoubtEpisode>();

  /** Records this turn's verdict; returns since when the wallet has been in doubt (undefined: it is not). */
  observe(wallet: { name: string; address: string }, inDoubt: boolean, now: number): number | undefined {
    if (!inDoubt) {
      this.episodes.delete(wallet.address);
      return undefined;
    }
    const open = this.episodes.get(wallet.address);
    if (open !== undefined) return open.since;
    this.episodes.set(wallet.address, { wallet: wallet.name, address: wallet.address, since: now });
    return now;
  }

  /** The wallets in doubt now, with since when. */
  open(): DoubtEpisode[] {
    return [...this.episodes.values()];
  }
}
