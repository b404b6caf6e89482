// What the operator signals know about every configured wallet: the last good poll and its amounts.
// Seeded from the state file at start, so a restart (even with the API down) still knows when each
// wallet last polled well; kept current by the poll events. Readiness, the aggregate metrics and
// the per-wallet gauges are all read from here, so they cannot disagree.
//
// In a cluster (several daemons on one PostgreSQL state) each daemon answers only for the wallets
// it holds leases on: `scope` names them, and every read below (staleness, last success, totals,
// the per-wallet views) looks at those alone. Otherwise each daemon would report the others'
// wallets as stale (it does not poll them), and a sum over instances would count every wallet once
// per daemon. What is remembered (configure, restore, pollOk) still covers every configured
// wallet, so a wallet taken over arrives with its history.
import type { Lamports } from '../amount.js';

export interface FleetWallet {
  name: string;
  address: string;
}

export interface WalletView {
  name: string;
  address: string;
  /** Unix ms of the last successful poll; undefined when none is recorded. */
  lastOkAt: number | undefined;
  pendingLamports: Lamports | undefined;
  lifetimeLamports: Lamports | undefined;
}

/** A wallet's record as the state file has it (the store's WalletStateRow fits). */
interface StoredWalletState {
  address: string;
  lastOkAt: number | null;
  pendingLamports: Lamports | null;
  lifetimeLamports: Lamports | null;
}

export interface Fleet {
  /** The configured wallets (at start and after each reload); others are forgotten. */
  configure(wallets: readonly FleetWallet[]): void;
  /** What the state file remembers; only configured wallets are taken. */
  restore(rows: Iterable<StoredWalletState>): void;
  pollOk(address: string, summary: { pendingLamports: Lamports; lifetimeLamports: Lamports | null }, atMs: number): void;
  /** The newest successful poll of any wallet in scope (Unix ms), if one was ever recorded. */
  lastSuccessAt(): number | undefined;
  /** Wallets in scope with no successful poll for more than staleAfterMs (never-polled ones count from `since`). */
  staleCount(now: number, staleAfterMs: number, since: number): number;
  /**
   * The wallets in scope the stale alert must look at: those stale now (as staleCount counts them)
   * and those of the given names, in the fleet's order. The others are fresh and not named: their
   * state cannot have changed, so the alert need not read them.
   */
  staleOrNamed(now: number, staleAfterMs: number, since: number, names: Iterable<string>): WalletView[];
  pendingTotal(): Lamports;
  lifetimeTotal(): Lamports;
  /** The k wallets with the most pending (of those polled well once), most first; ties by name, so the set is stable. */
  topPending(k: number): WalletView[];
  /** The configured wallets, in scope or not. */
  size(): number;
  /** The wallets in scope. */
  wallets(): IterableIterator<WalletView>;
}

export interface FleetOptions {
  /**
   * The addresses this daemon answers for now, asked at each read; undefined (or a scope that
   * answers undefined) for every configured wallet, as a daemon alone on its state does.
   */
  scope?: () => ReadonlySet<string> | undefined;
}

/**
 * A wallet and its place in the fleet's order (`seq`: configured order, as listed) and, once polled
 * well, in the list of polled wallets from the oldest success to the newest (prev/next). Reads of
 * staleness and of the last success walk that list from its ends, so they cost what they find, not
 * a scan of every wallet at each cycle, scrape and probe.
 */
interface Node {
  w: WalletView;
  seq: number;
  prev: Node | undefined;
  next: Node | undefined;
}

export function createFleet(opts: FleetOptions = {}): Fleet {
  const byAddress = new Map<string, Node>();
  const byName = new Map<string, Node>();
  /** Never polled well; in configured order. */
  const never = new Set<Node>();
  let head: Node | undefined;
  let tail: Node | undefined;
  /** A restore set old successes out of order: the list is sorted again before it is read. */
  let unsorted = false;
  let seq = 0;
  /** Sums over every configured wallet, kept as polls come in (read as is when there is no scope). */
  let pendingSum = 0n;
  let lifetimeSum = 0n;

  function unlink(n: Node): void {
    if (n.prev === undefined) head = n.next;
    else n.prev.next = n.next;
    if (n.next === undefined) tail = n.prev;
    else n.next.prev = n.prev;
    n.prev = undefined;
    n.next = undefined;
  }
  /** Links a node by its last success, from the newest end: a success just seen goes last. */
  function link(n: Node): void {
    const at = n.w.lastOkAt ?? Number.NEGATIVE_INFINITY;
    let after = tail;
    while (after !== undefined && (after.w.lastOkAt ?? Number.NEGATIVE_INFINITY) > at) after = after.prev;
    n.prev = after;
    n.next = after === undefined ? head : after.next;
    if (n.prev === undefined) head = n;
    else n.prev.next = n;
    if (n.next === undefined) tail = n;
    else n.next.prev = n;
  }
  function sorted(): void {
    if (!unsorted) return;
    unsorted = false;
    const polled: Node[] = [];
    for (let n = head; n !== undefined; n = n.next) polled.push(n);
    polled.sort((a, b) => (a.w.lastOkAt ?? 0) - (b.w.lastOkAt ?? 0) || a.seq - b.seq);
    head = polled[0];
    tail = polled.at(-1);
    polled.forEach((n, i) => {
      n.prev = polled[i - 1];
      n.next = polled[i + 1];
    });
  }
  function setAmounts(w: WalletView, pending: Lamports | undefined, lifetime: Lamports | undefined): void {
    pendingSum += (pending ?? 0n) - (w.pendingLamports ?? 0n);
    lifetimeSum += (lifetime ?? 0n) - (w.lifetimeLamports ?? 0n);
    w.pendingLamports = pending;
    w.lifetimeLamports = lifetime;
  }
  /** The configured wallets in scope. */
  function* inScope(): IterableIterator<WalletView> {
    const only = opts.scope?.();
    for (const { w } of byAddress.values()) if (only === undefined || only.has(w.address)) yield w;
  }
  /** Stale wallets in scope, as nodes. */
  function stale(now: number, staleAfterMs: number, since: number): Node[] {
    sorted();
    const only = opts.scope?.();
    const out: Node[] = [];
    if (now - since > staleAfterMs) for (const n of never) if (only === undefined || only.has(n.w.address)) out.push(n);
    for (let n = head; n !== undefined && now - (n.w.lastOkAt ?? since) > staleAfterMs; n = n.next) if (only === undefined || only.has(n.w.address)) out.push(n);
    return out;
  }
  return {
    configure(wallets) {
      const keep = new Set<string>();
      byName.clear();
      for (const w of wallets) {
        keep.add(w.address);
        let n = byAddress.get(w.address);
        // A rename keeps the history: the wallet is its address.
        if (n !== undefined) n.w.name = w.name;
        else {
          n = { w: { name: w.name, address: w.address, lastOkAt: undefined, pendingLamports: undefined, lifetimeLamports: undefined }, seq: seq++, prev: undefined, next: undefined };
          byAddress.set(w.address, n);
          never.add(n);
        }
        byName.set(w.name, n);
      }
      for (const [address, n] of byAddress) {
        if (keep.has(address)) continue;
        byAddress.delete(address);
        setAmounts(n.w, undefined, undefined);
        if (!never.delete(n)) unlink(n);
      }
    },
    restore(rows) {
      for (const r of rows) {
        const n = byAddress.get(r.address);
        if (n === undefined || r.lastOkAt === null) continue;
        const w = n.w;
        // Never older than what this process has seen itself.
        if (w.lastOkAt !== undefined && w.lastOkAt >= r.lastOkAt) continue;
        w.lastOkAt = r.lastOkAt;
        setAmounts(w, r.pendingLamports ?? undefined, r.lifetimeLamports ?? undefined);
        // Put last for now (walking to its place would cost the list's length for each row); the
        // list is sorted once before it is next read.
        if (never.delete(n)) {
          n.prev = tail;
          if (tail === undefined) head = n;
          else tail.next = n;
          tail = n;
        }
        unsorted = true;
      }
    },
    pollOk(address, summary, atMs) {
      const n = byAddress.get(address);
      if (n === undefined) return;
      const w = n.w;
      if (!never.delete(n)) unlink(n);
      w.lastOkAt = atMs;
      // A summary without lifetime keeps the last known one, as the state file does.
      setAmounts(w, summary.pendingLamports, summary.lifetimeLamports ?? w.lifetimeLamports);
      link(n);
    },
    lastSuccessAt() {
      sorted();
      const only = opts.scope?.();
      for (let n = tail; n !== undefined; n = n.prev) if (only === undefined || only.has(n.w.address)) return n.w.lastOkAt;
      return undefined;
    },
    staleCount: (now, staleAfterMs, since) => stale(now, staleAfterMs, since).length,
    staleOrNamed(now, staleAfterMs, since, names) {
      const found = new Set(stale(now, staleAfterMs, since));
      const only = opts.scope?.();
      for (const name of names) {
        const n = byName.get(name);
        if (n !== undefined && (only === undefined || only.has(n.w.address))) found.add(n);
      }
      return [...found].sort((a, b) => a.seq - b.seq).map((n) => n.w);
    },
    pendingTotal: () => (opts.scope === undefined ? pendingSum : sum(inScope(), (w) => w.pendingLamports)),
    lifetimeTotal: () => (opts.scope === undefined ? lifetimeSum : sum(inScope(), (w) => w.lifetimeLamports)),
    topPending(k) {
      // A selection, not a sort of the fleet: the k best kept in order as the fleet is read once.
      const top: WalletView[] = [];
      const ahead = (a: WalletView, b: WalletView): boolean =>
        a.pendingLamports === b.pendingLamports ? a.name.localeCompare(b.name) < 0 : (a.pendingLamports ?? 0n) > (b.pendingLamports ?? 0n);
      const want = Math.max(0, k);
      if (want === 0) return top;
      for (const w of inScope()) {
        if (w.pendingLamports === undefined) continue;
        const last = top.at(-1);
        if (top.length >= want && last !== undefined && !ahead(w, last)) continue;
        let i = top.length;
        while (i > 0 && ahead(w, top[i - 1] as WalletView)) i--;
        top.splice(i, 0, w);
        if (top.length > want) top.pop();
      }
      return top;
    },
    size: () => byAddress.size,
    wallets: () => inScope(),
  };
}

function sum(items: Iterable<WalletView>, of: (w: WalletView) => Lamports | undefined): Lamports {
  let total = 0n;
  for (const w of items) total += of(w) ?? 0n;
  return total;
}
