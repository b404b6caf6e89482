// Spend the rate budget where it matters: a wallet about to cross its rule's threshold is polled
// soon after it does, one far below it waits. From successive summaries each wallet gets an
// accrual rate (lamports per ms, smoothed); its next crossing is projected from the last pending
// seen. A drop in pending (a claim, a new epoch) restarts the series but keeps the rate, since
// rewards go on accruing at the same pace after a claim.
//
// Each interval the planner takes, within the budget:
//   1. wallets never polled, then those last polled N intervals ago (the staleness bound: every
//      wallet is polled at least once every N intervals, whatever its projection says; this
//      needs N × budget ≥ fleet, else the oldest go first and the planner is round-robin);
//   2. then the rest by projected crossing time, soonest (or longest overdue) first;
// and orders them so that each lands in the interval after its projected crossing (inSlots). The
// budget is counted in requests: a wallet expected to cross this interval costs its poll and the
// requests of its claim, so the polls leave room for the claims they lead to.
// Wallets whose rules do not hang on a pending threshold, and wallets whose rate is not known
// yet, are due at the round-robin cadence, so they fare no worse than under round-robin.
//
// The ranking is kept between ticks, in heaps updated when a wallet is chosen or observed, so a
// tick costs what it takes (and what it passes over), not a sort of the whole fleet: a fleet far
// larger than the budget was otherwise re-ranked whole every interval. Cadence wallets all share
// one offset from their last choice, so a heap in order of last choice ranks them by due time too.
import type { Lamports, WalletConfig, WalletSummary } from '../domain.js';
import { MinHeap } from './heap.js';
import { POLL_WINDOW_SHARE, pruneTo, roundRobinIntervals, type BusyWallets, type PollPlanner } from './planner.js';

const DEFAULT_MAX_INTERVALS = 5;
const DEFAULT_SMOOTHING = 0.5;
const DEFAULT_REQUESTS_PER_CLAIM = 2;

interface AccrualPlannerOptions {
  /** The pending amount (lamports) at which the wallet's rules may fire; undefined: none known. */
  threshold: (wallet: WalletConfig) => Lamports | undefined;
  /** Every wallet is polled at least once every this many intervals (default 5, at least 1). */
  maxIntervals?: number;
  /** Weight of the newest rate sample in the moving average, in (0, 1] (default 0.5). */
  smoothing?: number;
  /**
   * Requests a claim costs beyond its poll (default 2: the fresh read before signing, and the
   * POST). The budget is in requests: a wallet expected to cross this interval is counted with its
   * claim, so polls do not crowd the claims they cause out of the rate limiter.
   */
  requestsPerClaim?: number;
}

interface Ranked {
  w: WalletConfig;
  /** Position in the configured list: the last tie-break, so choices are deterministic. */
  i: number;
  due: number;
}

/**
 * Orders an interval's picks for the scheduler, which polls the k of them at evenly spread times
 * now + j·(window/k). A wallet due within the window takes the first slot at or after its due
 * time, and wallets not due this interval pad the slots before, so a wallet that crosses its
 * threshold mid-interval is not polled just before it crosses (a wasted poll, then a wait).
 */
export function inSlots<T extends { due: number; i: number }>(picked: readonly T[], now: number, windowEnd: number): T[] {
  const urgent = picked.filter((p) => p.due <= windowEnd).sort((a, b) => a.due - b.due || a.i - b.i);
  const padding = picked.filter((p) => !(p.due <= windowEnd));
  const k = picked.length;
  const out: T[] = [];
  let u = 0;
  let r = 0;
  for (let j = 0; j < k; j++) {
    const slotAt = now + (j * (windowEnd - now)) / k;
    const next = urgent[u];
    if (next !== undefined && (next.due <= slotAt || r >= padding.length)) {
      out.push(next);
      u++;
    } else {
      const pad = padding[r++];
      if (pad !== undefined) out.push(pad);
    }
  }
  return out;
}

interface Track {
  name: string;
  /** When the planner last put this wallet in an interval. */
  chosenAt: number;
  /** The last pending seen, and when. */
  pending: Lamports | undefined;
  seenAt: number;
  /** Lamports per ms; undefined until two polls a measurable time apart. */
  rate: number | undefined;
  /** Position in the current list and the config read from it; -1 while not listed. */
  i: number;
  w: WalletConfig | undefined;
  threshold: Lamports | undefined;
  /**
   * Bumped when its last choice changes (vc: its entry in byChoice) and when its due time or kind
   * does (vk: its entry in the heap of its kind): entries of an older version are left behind.
   */
  vc: number;
  vk: number;
  kind: Kind;
  /** The tick that last picked it (a wallet is taken once a tick). */
  pickedIn: number;
}

/** A wallet's place in one heap, as ranked when it was pushed (k: chosenAt or due; c: chosenAt). */
interface Entry {
  t: Track;
  v: number;
  k: number;
  c: number;
  i: number;
}

const before = (a: Entry, b: Entry): boolean => (a.k !== b.k ? a.k < b.k : a.c !== b.c ? a.c < b.c : a.i < b.i);

/** How a wallet's due time is reckoned: the cadence, the staleness bound (not accruing), or its projection. */
type Kind = 'cadence' | 'idle' | 'projected';

export class AccrualPlanner implements PollPlanner {
  private readonly tracks = new Map<string, Track>();
  private readonly maxIntervals: number;
  private readonly smoothing: number;
  private readonly requestsPerClaim: number;
  /** The list the heaps were built from. */
  private listed: readonly WalletConfig[] | undefined;
  /** Every listed wallet by last choice (the staleness bound); then one heap per Kind. */
  private readonly byChoice = new MinHeap<Entry>(before);
  private readonly cadence = new MinHeap<Entry>(before);
  private readonly idle = new MinHeap<Entry>(before);
  private readonly projected = new MinHeap<Entry>(before);
  private ticks = 0;
  /** The picks of the last tick slotted after a crossing within its window, and when they are due. */
  private readonly slotted = new Map<WalletConfig, number>();

  constructor(private readonly opts: AccrualPlannerOptions) {
    this.maxIntervals = Math.max(1, Math.floor(opts.maxIntervals ?? DEFAULT_MAX_INTERVALS));
    const s = opts.smoothing ?? DEFAULT_SMOOTHING;
    this.smoothing = s > 0 && s <= 1 ? s : DEFAULT_SMOOTHING;
    this.requestsPerClaim = Math.max(0, opts.requestsPerClaim ?? DEFAULT_REQUESTS_PER_CLAIM);
  }

  choose(
    wallets: readonly WalletConfig[],
    budget: number,
    now: number,
    intervalMs: number,
    busy?: BusyWallets,
    windowMs = POLL_WINDOW_SHARE * intervalMs,
  ): WalletConfig[] {
    pruneTo(this.tracks, wallets);
    if (wallets !== this.listed) this.rebuild(wallets);
    const tick = ++this.ticks;
    this.slotted.clear();
    const isBusy = (t: Track): boolean => busy !== undefined && busy.has(t.name);
    let idleCount = wallets.length;
    if (busy !== undefined) for (const name of busy.keys()) if (this.isListed(this.tracks.get(name))) idleCount--;
    if (idleCount <= budget) {
      const all = wallets.filter((w) => !(busy?.has(w.name) ?? false));
      for (const w of all) this.chosen(this.track(w), now);
      return all;
    }
    const take = Math.max(0, Math.floor(budget));
    const roundRobinMs = Math.ceil(idleCount / Math.max(1, take)) * intervalMs;
    // A wallet chosen N ticks ago must go now (a gap of N intervals, the bound). Not earlier: with
    // n/N of the fleet forced each tick, only the rest of the budget is free to follow accrual.
    // A little slack, so timer jitter in the interval length cannot push a wallet past its bound.
    const staleMs = this.maxIntervals * intervalMs * 0.999;
    const windowEnd = now + windowMs;
    const forced = (t: Track): boolean => t.chosenAt === Number.NEGATIVE_INFINITY || now - t.chosenAt >= staleMs;
    const picked: Array<Ranked & { t: Track }> = [];
    const passed: Array<[MinHeap<Entry>, Entry]> = [];
    let spent = 0;
    // Spend the budget in rank order. Forced wallets first, oldest choice first, each counting as
    // its poll alone (the bound comes first).
    while (spent < take) {
      const e = this.top(this.byChoice);
      if (e === undefined || !forced(e.t)) break;
      this.byChoice.pop();
      passed.push([this.byChoice, e]);
      if (isBusy(e.t)) continue;
      e.t.pickedIn = tick;
      picked.push({ w: e.t.w as WalletConfig, i: e.t.i, t: e.t, due: this.dueAt(e.t, roundRobinMs).due });
      spent++;
    }
    // Then the rest by due time (the three heaps merged). One due to cross in this window counts
    // with its claim, and is passed over for cheaper ones when that no longer fits (it goes first
    // next interval).
    const heaps = [this.cadence, this.idle, this.projected] as const;
    while (spent < take) {
      let best: { heap: MinHeap<Entry>; e: Entry; due: number } | undefined;
      for (const heap of heaps) {
        const e = this.top(heap, (t) => t.pickedIn === tick || isBusy(t), passed);
        if (e === undefined) continue;
        const due = heap === this.projected ? e.k : heap === this.cadence ? e.c + roundRobinMs : e.c + this.maxIntervals * roundRobinMs;
        if (best === undefined || due < best.due || (due === best.due && (e.c !== best.e.c ? e.c < best.e.c : e.i < best.e.i))) best = { heap, e, due };
      }
      if (best === undefined) break;
      best.heap.pop();
      passed.push([best.heap, best.e]);
      const t = best.e.t;
      if (forced(t)) continue; // taken above, or busy
      const cost = 1 + (best.heap === this.projected && best.due <= windowEnd ? this.requestsPerClaim : 0);
      if (spent + cost > take) continue;
      t.pickedIn = tick;
      picked.push({ w: t.w as WalletConfig, i: t.i, t, due: best.due });
      spent += cost;
    }
    for (const p of picked) this.chosen(p.t, now);
    // What was looked at and not taken keeps its place.
    for (const [heap, e] of passed) if (this.live(heap, e)) heap.push(e);
    for (const p of picked) if (p.due > now && p.due <= windowEnd) this.slotted.set(p.w, p.due);
    return inSlots(picked, now, windowEnd).map((p) => p.w);
  }

  notBefore(wallet: WalletConfig): number | undefined {
    return this.slotted.get(wallet);
  }

  /** Over budget, a wallet waits up to the staleness bound, or a whole round-robin when that is longer. */
  revisitIntervals(fleet: number, budget: number): number {
    const rounds = roundRobinIntervals(fleet, budget);
    return rounds === 1 ? 1 : Math.max(this.maxIntervals, rounds);
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
    // Its last choice is unchanged; its due time moves only if it accrues toward a threshold (or
    // starts or stops doing so).
    if (this.isListed(t) && (t.kind === 'projected' || this.kindOf(t) !== t.kind)) this.rankKind(t);
  }

  /** A new list: thresholds read again and every ranking rebuilt from the tracks. */
  private rebuild(wallets: readonly WalletConfig[]): void {
    for (const t of this.tracks.values()) {
      t.i = -1;
      t.w = undefined;
    }
    for (const heap of [this.byChoice, this.cadence, this.idle, this.projected]) heap.clear();
    this.listed = wallets;
    wallets.forEach((w, i) => {
      const t = this.track(w);
      t.i = i;
      t.w = w;
      t.threshold = this.opts.threshold(w);
      this.rank(t);
    });
  }

  private isListed(t: Track | undefined): t is Track {
    return t !== undefined && t.i >= 0 && this.listed?.[t.i] === t.w;
  }

  private chosen(t: Track, now: number): void {
    t.chosenAt = now;
    this.rank(t);
  }

  /** Pushes the wallet's current place into its heaps; its older entries are dropped as met. */
  private rank(t: Track): void {
    t.vc++;
    this.push(this.byChoice, { t, v: t.vc, k: t.chosenAt, c: t.chosenAt, i: t.i });
    this.rankKind(t);
  }

  private rankKind(t: Track): void {
    t.vk++;
    t.kind = this.kindOf(t);
    const heap = t.kind === 'projected' ? this.projected : t.kind === 'idle' ? this.idle : this.cadence;
    this.push(heap, { t, v: t.vk, k: t.kind === 'projected' ? this.crossing(t) : t.chosenAt, c: t.chosenAt, i: t.i });
  }

  private push(heap: MinHeap<Entry>, e: Entry): void {
    heap.push(e);
    if (heap.size > 2 * (this.listed?.length ?? 0) + 64) heap.retain((x) => this.live(heap, x));
  }

  /** Whether an entry is the wallet's current one in that heap. */
  private live(heap: MinHeap<Entry>, e: Entry): boolean {
    return e.v === (heap === this.byChoice ? e.t.vc : e.t.vk);
  }

  /**
   * The first current entry of a heap, dropping outdated ones; entries `skip` says are not for
   * this tick are taken off and remembered in `passed`, to be put back.
   */
  private top(heap: MinHeap<Entry>, skip?: (t: Track) => boolean, passed?: Array<[MinHeap<Entry>, Entry]>): Entry | undefined {
    for (let e = heap.peek(); e !== undefined; e = heap.peek()) {
      if (!this.live(heap, e)) heap.pop();
      else if (skip?.(e.t) === true) {
        heap.pop();
        passed?.push([heap, e]);
      } else return e;
    }
    return undefined;
  }

  /**
   * When polling this wallet next becomes worthwhile (ms, same clock as `now`), and how that is
   * reckoned: a projected crossing, or a cadence from its last choice.
   */
  private dueAt(t: Track, roundRobinMs: number): { due: number; kind: Kind } {
    const kind = this.kindOf(t);
    if (t.chosenAt === Number.NEGATIVE_INFINITY) return { due: Number.NEGATIVE_INFINITY, kind };
    if (kind === 'cadence') return { due: t.chosenAt + roundRobinMs, kind };
    // Not accruing: the staleness bound will fetch it.
    if (kind === 'idle') return { due: t.chosenAt + this.maxIntervals * roundRobinMs, kind };
    return { due: this.crossing(t), kind };
  }

  /** The projected crossing of an accruing wallet with a threshold: it does not move until the wallet is seen again. */
  private crossing(t: Track): number {
    const threshold = t.threshold as Lamports;
    const pending = t.pending as Lamports;
    // At or over the threshold when last seen: the rule fired (or a limit held it); either way the
    // next crossing is a whole threshold's accrual after that poll.
    const missing = pending >= threshold ? threshold : threshold - pending;
    return t.seenAt + Number(missing) / (t.rate as number);
  }

  private kindOf(t: Track): Kind {
    if (t.threshold === undefined || t.pending === undefined || t.rate === undefined) return 'cadence';
    return t.rate > 0 ? 'projected' : 'idle';
  }

  private track(wallet: WalletConfig): Track {
    let t = this.tracks.get(wallet.name);
    if (t === undefined) {
      t = { name: wallet.name, chosenAt: Number.NEGATIVE_INFINITY, pending: undefined, seenAt: Number.NEGATIVE_INFINITY, rate: undefined, i: -1, w: undefined, threshold: undefined, vc: 0, vk: 0, kind: 'cadence', pickedIn: 0 };
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
