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

export function createFleet(opts: FleetOptions = {}): Fleet {
  const byAddress = new Map<string, WalletView>();
  /** The configured wallets in scope. */
  function* inScope(): IterableIterator<WalletView> {
    const only = opts.scope?.();
    for (const w of byAddress.values()) if (only === undefined || only.has(w.address)) yield w;
  }
  return {
    configure(wallets) {
      const keep = new Set<string>();
      for (const w of wallets) {
        keep.add(w.address);
        const known = byAddress.get(w.address);
        // A rename keeps the history: the wallet is its address.
        if (known !== undefined) known.name = w.name;
        else byAddress.set(w.address, { name: w.name, address: w.address, lastOkAt: undefined, pendingLamports: undefined, lifetimeLamports: undefined });
      }
      for (const address of byAddress.keys()) if (!keep.has(address)) byAddress.delete(address);
    },
    restore(rows) {
      for (const r of rows) {
        const w = byAddress.get(r.address);
        if (w === undefined || r.lastOkAt === null) continue;
        // Never older than what this process has seen itself.
        if (w.lastOkAt !== undefined && w.lastOkAt >= r.lastOkAt) continue;
        w.lastOkAt = r.lastOkAt;
        w.pendingLamports = r.pendingLamports ?? undefined;
        w.lifetimeLamports = r.lifetimeLamports ?? undefined;
      }
    },
    pollOk(address, summary, atMs) {
      const w = byAddress.get(address);
      if (w === undefined) return;
      w.lastOkAt = atMs;
      w.pendingLamports = summary.pendingLamports;
      // A summary without lifetime keeps the last known one, as the state file does.
      if (summary.lifetimeLamports !== null) w.lifetimeLamports = summary.lifetimeLamports;
    },
    lastSuccessAt() {
      let last: number | undefined;
      for (const w of inScope()) if (w.lastOkAt !== undefined && (last === undefined || w.lastOkAt > last)) last = w.lastOkAt;
      return last;
    },
    staleCount(now, staleAfterMs, since) {
      let n = 0;
      for (const w of inScope()) if (now - (w.lastOkAt ?? since) > staleAfterMs) n++;
      return n;
    },
    pendingTotal: () => sum(inScope(), (w) => w.pendingLamports),
    lifetimeTotal: () => sum(inScope(), (w) => w.lifetimeLamports),
    topPending(k) {
      const known = [...inScope()].filter((w) => w.pendingLamports !== undefined);
      known.sort((a, b) => (a.pendingLamports === b.pendingLamports ? a.name.localeCompare(b.name) : (b.pendingLamports ?? 0n) > (a.pendingLamports ?? 0n) ? 1 : -1));
      return known.slice(0, Math.max(0, k));
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
