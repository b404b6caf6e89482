// Which wallets a poll interval spends the rate budget on, when the budget is smaller than the
// fleet. A planner only orders and trims the list the scheduler hands it; it never polls, sleeps
// or reads a clock (the scheduler passes `now`), so it is tested with tables in virtual time.
import type { Lamports, Rule, WalletConfig, WalletSummary } from '../domain.js';

/**
 * The share of an interval the scheduler spreads a tick within its rate budget over (the rest is
 * slack before the next tick); a tick that spends the budget is spread wider (scheduler.ts
 * pollWindowMs), and the planner is told the window its picks will have.
 */
export const POLL_WINDOW_SHARE = 0.8;

/** Wallets (by name) whose turn is still running: the planner passes them over this tick. */
export interface BusyWallets {
  has(name: string): boolean;
  keys(): Iterable<string>;
}

export interface PollPlanner {
  /**
   * The wallets to poll in the interval starting at `now`: at most `budget` of `wallets` not in
   * `busy`, in the order they should go (the scheduler spreads them over the interval in this
   * order). `wallets` is the same array from tick to tick until the fleet changes (a reload, a
   * lease round): a planner may keep what it derived from it (thresholds, rankings) until then.
   * The scheduler spreads the picks over the first `windowMs` of the interval (by default
   * POLL_WINDOW_SHARE of it): a wallet due within it is due this interval.
   */
  choose(wallets: readonly WalletConfig[], budget: number, now: number, intervalMs: number, busy?: BusyWallets, windowMs?: number): WalletConfig[];
  /**
   * For a wallet of the last `choose`: the time (the clock of its `now`) before which polling it is
   * wasted, when the planner slotted it after its expected crossing within the window; else
   * undefined. The scheduler's jitter never moves such a poll before it (scheduler.ts spreadOffsets).
   */
  notBefore?(wallet: WalletConfig): number | undefined;
  /** A successful poll's summary, seen at `now`. */
  observe(wallet: WalletConfig, summary: Pick<WalletSummary, 'pendingLamports'>, now: number): void;
  /**
   * The most intervals this planner may leave one of `fleet` wallets unpolled with `budget` polls an
   * interval: 1 within budget. A wallet's staleness is judged against it, so that one waiting its
   * planned turn in a fleet larger than the budget is not reported stale (at 10,000 wallets, 2,500
   * requests a minute and a 1-minute schedule a turn comes every 4 minutes: 3 one-minute intervals
   * reported every wallet each round).
   */
  revisitIntervals(fleet: number, budget: number): number;
}

/** Intervals a plain round-robin over `fleet` wallets takes with `budget` polls an interval. */
export function roundRobinIntervals(fleet: number, budget: number): number {
  return fleet <= budget ? 1 : Math.ceil(fleet / Math.max(1, Math.floor(budget)));
}

/**
 * Plain round-robin: the `budget` wallets chosen least recently, in the order they were last
 * chosen (configured order for the never-chosen), so the fleet is walked as a cycle. Every wallet
 * gets one poll per ceil(n / budget) intervals, whatever it is doing.
 */
export class RoundRobinPlanner implements PollPlanner {
  /** When each wallet was last chosen, as a sequence number of picks. */
  private readonly lastPick = new Map<string, number>();
  private picks = 0;

  choose(all: readonly WalletConfig[], budget: number, _now?: number, _intervalMs?: number, busy?: BusyWallets): WalletConfig[] {
    const wallets = busy === undefined ? all : all.filter((w) => !busy.has(w.name));
    pruneTo(this.lastPick, wallets);
    const picked =
      wallets.length <= budget
        ? [...wallets]
        : wallets
            .map((w, i) => ({ w, i, seq: this.lastPick.get(w.name) ?? Number.NEGATIVE_INFINITY }))
            .sort((a, b) => a.seq - b.seq || a.i - b.i)
            .slice(0, Math.max(0, Math.floor(budget)))
            .map((x) => x.w);
    for (const w of picked) this.lastPick.set(w.name, this.picks++);
    return picked;
  }

  observe(): void {
    // round-robin ignores what it sees
  }

  revisitIntervals(fleet: number, budget: number): number {
    return roundRobinIntervals(fleet, budget);
  }
}

/** Drops entries of wallets no longer configured, once the map has grown well past the fleet. */
export function pruneTo<V>(map: Map<string, V>, wallets: readonly WalletConfig[]): void {
  if (map.size <= 2 * wallets.length + 64) return;
  const keep = new Set(wallets.map((w) => w.name));
  for (const name of map.keys()) if (!keep.has(name)) map.delete(name);
}

/**
 * The pending amount at which one of the wallet's rules can start to fire: the lowest
 * `pending_sol` gte (or gt, plus one lamport) among its rules. Undefined when any of its rules can
 * fire without such a lower bound (a tier, rank or lifetime rule), because then pending alone does
 * not say when the wallet needs a poll.
 */
export function lowestPendingThreshold(wallet: WalletConfig, rules: readonly Rule[]): Lamports | undefined {
  const mine = rules.filter((r) => wallet.rules.includes(r.name));
  let lowest: Lamports | undefined;
  for (const rule of mine) {
    let bound: Lamports | undefined;
    for (const c of rule.when) {
      if (c.field !== 'pending_sol' || (c.op !== 'gte' && c.op !== 'gt')) continue;
      const v = c.op === 'gt' ? c.value + 1n : c.value;
      // All conditions must hold: the rule's bound is the highest of its lower bounds.
      if (bound === undefined || v > bound) bound = v;
    }
    if (bound === undefined) return undefined;
    if (lowest === undefined || bound < lowest) lowest = bound;
  }
  return lowest;
}

/**
 * Requests one interval may spend: the tokens the rate limiter refills over it, less a share
 * (default 2%, the limiter's own headroom) so the planner never plans more than the limiter
 * grants. The accrual planner keeps, out of this, the requests of the claims it expects.
 */
export function pollBudget(rateLimit: { perMinute: number }, intervalMs: number, reserveShare = 0.02): number {
  if (!(rateLimit.perMinute > 0) || !Number.isFinite(rateLimit.perMinute)) return Number.POSITIVE_INFINITY;
  const refill = (rateLimit.perMinute * intervalMs) / 60_000;
  return Math.max(1, Math.floor(refill * (1 - reserveShare)));
}
