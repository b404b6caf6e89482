// The accrual planner as it was before it kept its ranking between ticks: a sort of the whole
// list every tick. Kept here, word for word, as the rule the incremental planner must agree with
// (priority-differential.test.ts); not used by the daemon.
import type { Lamports, WalletConfig, WalletSummary } from '../../src/domain.js';
import { POLL_WINDOW_SHARE, pruneTo, type PollPlanner } from '../../src/scheduler/planner.js';
// inSlots is the one the planner uses: the ordering within an interval did not change with the heaps.
import { inSlots, type AccrualPlanner } from '../../src/scheduler/priority.js';

const DEFAULT_MAX_INTERVALS = 5;
const DEFAULT_SMOOTHING = 0.5;
const DEFAULT_REQUESTS_PER_CLAIM = 2;

interface Ranked {
  w: WalletConfig;
  /** Position in the configured list: the last tie-break, so choices are deterministic. */
  i: number;
  t: Track;
  forced: boolean;
  due: number;
  /** `due` is a projected crossing (not a cadence), so a poll at it should lead to a claim. */
  projected: boolean;
}

interface Track {
  /** When the planner last put this wallet in an interval. */
  chosenAt: number;
  /** The last pending seen, and when. */
  pending: Lamports | undefined;
  seenAt: number;
  /** Lamports per ms; undefined until two polls a measurable time apart. */
  rate: number | undefined;
}

// revisitIntervals came after the ranking this reference holds the planner to; it is tested on its own.
export class ReferenceAccrualPlanner implements Omit<PollPlanner, 'revisitIntervals'> {
  private readonly tracks = new Map<string, Track>();
  private readonly maxIntervals: number;
  private readonly smoothing: number;
  private readonly requestsPerClaim: number;

  constructor(private readonly opts: ConstructorParameters<typeof AccrualPlanner>[0]) {
    this.maxIntervals = Math.max(1, Math.floor(opts.maxIntervals ?? DEFAULT_MAX_INTERVALS));
    const s = opts.smoothing ?? DEFAULT_SMOOTHING;
    this.smoothing = s > 0 && s <= 1 ? s : DEFAULT_SMOOTHING;
    this.requestsPerClaim = Math.max(0, opts.requestsPerClaim ?? DEFAULT_REQUESTS_PER_CLAIM);
  }

  choose(wallets: readonly WalletConfig[], budget: number, now: number, intervalMs: number): WalletConfig[] {
    pruneTo(this.tracks, wallets);
    if (wallets.length <= budget) {
      for (const w of wallets) this.track(w).chosenAt = now;
      return [...wallets];
    }
    const take = Math.max(0, Math.floor(budget));
    const roundRobinMs = Math.ceil(wallets.length / Math.max(1, take)) * intervalMs;
    // A wallet chosen N ticks ago must go now (a gap of N intervals, the bound). Not earlier: with
    // n/N of the fleet forced each tick, only the rest of the budget is free to follow accrual.
    // A little slack, so timer jitter in the interval length cannot push a wallet past its bound.
    const staleMs = this.maxIntervals * intervalMs * 0.999;
    const windowEnd = now + POLL_WINDOW_SHARE * intervalMs;
    const ranked: Ranked[] = wallets.map((w, i) => {
      const t = this.track(w);
      const never = t.chosenAt === Number.NEGATIVE_INFINITY;
      const forced = never || now - t.chosenAt >= staleMs;
      const { due, projected } = never ? { due: Number.NEGATIVE_INFINITY, projected: false } : this.dueAt(w, t, roundRobinMs);
      return { w, i, t, forced, due, projected };
    });
    ranked.sort((a, b) =>
      a.forced !== b.forced ? (a.forced ? -1 : 1) : a.forced ? a.t.chosenAt - b.t.chosenAt || a.i - b.i : a.due - b.due || a.t.chosenAt - b.t.chosenAt || a.i - b.i,
    );
    // Spend the budget in rank order. A forced wallet counts as its poll alone (the bound comes
    // first); another one due to cross in this window counts with its claim, and is passed over
    // for cheaper ones when that no longer fits (it goes first next interval).
    const picked: Ranked[] = [];
    let spent = 0;
    for (const r of ranked) {
      if (spent >= take) break;
      const cost = 1 + (!r.forced && r.projected && r.due <= windowEnd ? this.requestsPerClaim : 0);
      if (spent + cost > take) continue;
      picked.push(r);
      spent += cost;
    }
    for (const p of picked) p.t.chosenAt = now;
    return inSlots(picked, now, windowEnd).map((p) => p.w);
  }

  observe(wallet: WalletConfig, summary: Pick<WalletSummary, 'pendingLamports'>, now: number): void {
    const t = this.track(wallet);
    const pending = summary.pendingLamports;
    if (t.pending !== undefined && pending >= t.pending && now > t.seenAt) {
      const sample = Number(pending - t.pending) / (now - t.seenAt);
      t.rate = t.rate === undefined ? sample : t.rate + this.smoothing * (sample - t.rate);
    }
    // A drop (pending < before) is a claim or a new epoch: no sample across it, the rate stays.
    t.pending = pending;
    t.seenAt = now;
  }

  /**
   * When polling this wallet next becomes worthwhile (ms, same clock as `now`), and whether that is
   * a projected crossing rather than a cadence.
   */
  private dueAt(wallet: WalletConfig, t: Track, roundRobinMs: number): { due: number; projected: boolean } {
    const threshold = this.opts.threshold(wallet);
    if (threshold === undefined || t.pending === undefined || t.rate === undefined) return { due: t.chosenAt + roundRobinMs, projected: false };
    // Not accruing: the staleness bound will fetch it.
    if (!(t.rate > 0)) return { due: t.chosenAt + this.maxIntervals * roundRobinMs, projected: false };
    // At or over the threshold when last seen: the rule fired (or a limit held it); either way the
    // next crossing is a whole threshold's accrual after that poll.
    const missing = t.pending >= threshold ? threshold : threshold - t.pending;
    return { due: t.seenAt + Number(missing) / t.rate, projected: true };
  }

  private track(wallet: WalletConfig): Track {
    let t = this.tracks.get(wallet.name);
    if (t === undefined) {
      t = { chosenAt: Number.NEGATIVE_INFINITY, pending: undefined, seenAt: Number.NEGATIVE_INFINITY, rate: undefined };
      this.tracks.set(wallet.name, t);
    }
    return t;
  }

  /** What the planner believes about a wallet, for logs and tests. */
  snapshot(wallet: WalletConfig): { ratePerSec: number | undefined; pending: Lamports | undefined; chosenAt: number } | undefined {
    const t = this.tracks.get(wallet.name);
    return t && { ratePerSec: t.rate === undefined ? undefined : t.rate * 1000, pending: t.pending, chosenAt: t.chosenAt };
  }
}
