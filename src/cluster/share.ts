// Which wallets this daemon should hold, decided from what every daemon can read: the live daemons,
// the wallet addresses and who holds each lease now. Pure and deterministic, so daemons that read
// the same rows compute the same split without talking to each other, and a split that is reached
// stays put (no wallet moves unless a daemon joins, leaves, or the wallet list changes).
//
// The split is computed for the whole cluster, then this daemon's part is taken from it:
// - every live daemon gets floor(n/k) wallets, and the n mod k extra ones go to the daemons that
//   hold the most now (ties by id), so a daemon already at the ceiling keeps its extra wallet
//   instead of passing it to a lower-ranked one; a balanced cluster is a fixed point;
// - each daemon keeps what it holds, up to its target (the first by address; the rest are excess);
// - the wallets nobody live holds, and the excess, are dealt out in address order to the daemons
//   below target, in id order.
// So a join moves only the new daemon's share, and a leave only the leaver's wallets.

export interface ShareInput {
  /** The live daemons' ids (any order; they are sorted here). */
  live: readonly string[];
  /** Every wallet address to split (any order; duplicates ignored). */
  addresses: readonly string[];
  /**
   * The holder of each address whose lease is unexpired. A holder that is not live, or an address
   * not in `addresses`, counts as nobody's.
   */
  owners: ReadonlyMap<string, string>;
}

/** The whole cluster's split: each live daemon's addresses, sorted. */
export function assignShares(input: ShareInput): Map<string, string[]> {
  const live = [...new Set(input.live)].sort(compare);
  const addresses = [...new Set(input.addresses)].sort(compare);
  const out = new Map<string, string[]>(live.map((d) => [d, []]));
  if (live.length === 0) return out;

  const holding = new Map<string, string[]>(live.map((d) => [d, []]));
  for (const a of addresses) {
    const owner = input.owners.get(a);
    if (owner !== undefined) holding.get(owner)?.push(a);
  }

  const base = Math.floor(addresses.length / live.length);
  const extra = addresses.length % live.length;
  // The extra slots go to those holding the most now; ties (and a fresh cluster) by id.
  const byHolding = live
    .map((d, rank) => ({ d, rank, held: holding.get(d)?.length ?? 0 }))
    .sort((x, y) => y.held - x.held || x.rank - y.rank);
  const target = new Map<string, number>(byHolding.map((x, i) => [x.d, base + (i < extra ? 1 : 0)]));

  const taken = new Set<string>();
  for (const d of live) {
    const keep = (holding.get(d) ?? []).slice(0, target.get(d) ?? 0);
    out.set(d, keep);
    for (const a of keep) taken.add(a);
  }
  const pool = addresses.filter((a) => !taken.has(a));
  let next = 0;
  for (const d of live) {
    const mine = out.get(d) ?? [];
    const want = target.get(d) ?? 0;
    while (mine.length < want && next < pool.length) mine.push(pool[next++] as string);
    mine.sort(compare);
  }
  return out;
}

/** This daemon's part of the split; empty when it is not among the live. */
export function shareFor(self: string, input: ShareInput): string[] {
  return assignShares(input).get(self) ?? [];
}

/** Code-unit order, the same on every machine (localeCompare is not). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
