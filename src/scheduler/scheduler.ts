// When each wallet is polled. The cron schedule says when a poll interval starts (its fire times as
// config/cron.ts computes them, on a timer of our own); within the interval the
// wallets are spread evenly (plus jitter), so a thousand wallets do not all hit the API at the top of
// the minute. A wallet whose previous turn is still running is skipped, never run twice at once.
// The API's rate budget is shared through the client's limiter; `concurrency` bounds sockets and memory.
// When the fleet outgrows the budget, a planner (planner.ts, priority.ts) picks each tick's wallets.
import type { Clock, WalletConfig } from '../domain.js';
import type { EventSink } from '../events.js';
import type { Logger } from '../log/logger.js';
import { nextCronTimes } from '../config/cron.js';
import { POLL_WINDOW_SHARE, type PollPlanner } from './planner.js';

/**
 * Polls due within the same second start together (see tick): the limiter lets a waiting queue go
 * at most once a second too (api/rate-limit.ts MIN_WAKE_MS), so a finer grid only adds wake-ups
 * that queue requests to wait for it. A poll starts at most this much after its spread time.
 */
const TIMER_GRID_MS = 1000;

/** The longest delay setTimeout takes (2^31 - 1 ms, 24.8 days); it fires a longer one after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The longest the schedule's timer sleeps before looking at the clock again (see arm). */
const MAX_SLEEP_MS = 60_000;

interface SchedulerOptions {
  cron: string;
  /** IANA zone the cron fields are read in (schedule.timezone); the process's own when absent. */
  timezone?: string | undefined;
  jitterMs: number;
  wallets: () => readonly WalletConfig[];
  runWallet: (wallet: WalletConfig) => Promise<unknown>;
  clock: Clock;
  logger: Logger;
  /** At most this many wallet turns run at once. */
  concurrency: number;
  random?: () => number;
  /** `cycle:done` goes out on it after every tick's wallets were all handled (readiness, alerts, metrics). */
  events?: EventSink;
  /**
   * Chooses, each tick, which wallets spend the interval's budget and in what order. Without one,
   * every wallet is polled every tick and the rate limiter queues what does not fit.
   */
  planner?: PollPlanner;
  /** Polls an interval of this length may spend (see pollBudget); default unlimited. Used with a planner. */
  budget?: (intervalMs: number) => number;
  /** The turns of the scheduler this one replaces (see Turns); a fresh set when absent. */
  turns?: Turns;
}

/**
 * The wallet turns running and the slots they hold. A reload that changes the schedule replaces
 * the scheduler while the old one's turns still run: the new one takes them over, so that a wallet
 * never has two turns at once, the fleet never more than `concurrency`, and a stop waits for all.
 */
export class Turns {
  /** By wallet name: what the planner passes over. */
  readonly running = new Map<string, Promise<unknown>>();
  /**
   * By address, which decides whether a turn may start: a reload that renames a wallet (or swaps two
   * wallets' addresses) while its turn runs must not give its address a second turn under the new
   * name, two turns deciding and signing for one address side by side.
   */
  readonly addresses = new Set<string>();
  constructor(readonly slots: Semaphore) {}
}

/**
 * Bounded parallelism without a dependency: a counting semaphore. Waiters sit in an array read
 * from a moving head, because `once` queues every wallet at once and Array#shift is O(n): the
 * shifts alone were quadratic in the fleet.
 */
export class Semaphore {
  private active = 0;
  private waiters: Array<() => void> = [];
  private head = 0;
  constructor(private readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.wakeNext();
    }
  }

  /** Turns waiting right now. */
  get waiting(): number {
    return this.waiters.length - this.head;
  }

  private wakeNext(): void {
    if (this.head >= this.waiters.length) return;
    const next = this.waiters[this.head];
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.waiters.length) {
      this.waiters = this.waiters.slice(this.head);
      this.head = 0;
    }
    next?.();
  }
}

/**
 * Offsets (ms) at which each of n wallets is polled within a window: even spread plus jitter,
 * wrapping at the window's end. Wrapped, the polls stay evenly dense over the whole window; added
 * without wrapping, jitter thins the window's first seconds (a poll is due at t only if its jitter
 * is under t), and a fleet that fills the rate budget left the limiter idle there at every tick
 * while its bucket was full: ~4% of the budget unspent (bench/RESULTS.md).
 * A poll with a floor (ms into the window; the planner slotted it after its wallet's expected
 * crossing) does not wrap to before it: it stays at the window's end, where a wrap would have
 * polled it before it crossed (a wasted poll, and its claim left to the next tick).
 */
export function spreadOffsets(n: number, windowMs: number, jitterMs: number, random: () => number, floors?: (i: number) => number | undefined): number[] {
  const step = n > 0 ? windowMs / n : 0;
  return Array.from({ length: n }, (_, i) => {
    const at = i * step + random() * jitterMs;
    if (windowMs <= 0 || at < windowMs) return Math.floor(at);
    const wrapped = at % windowMs;
    return Math.floor(wrapped >= (floors?.(i) ?? 0) ? wrapped : windowMs);
  });
}

/**
 * The floors spreadOffsets keeps each pick of `planner.choose(…, now, …)` behind: ms from `now` to
 * when the planner expects it to cross, for a pick it slotted after its crossing. Undefined for a
 * planner that slots nothing.
 */
export function slotFloors(planner: PollPlanner, picks: readonly WalletConfig[], now: number): ((i: number) => number | undefined) | undefined {
  const notBefore = planner.notBefore?.bind(planner);
  if (notBefore === undefined) return undefined;
  return (i) => {
    const pick = picks[i];
    const due = pick === undefined ? undefined : notBefore(pick);
    return due === undefined ? undefined : due - now;
  };
}

/** The most of an interval a fleet that fills its rate budget is spread over (see pollWindowMs). */
const PACED_WINDOW_SHARE = 0.98;

/**
 * The part of an interval its `polls` are spread over. Within the rate budget, the first 80% (or
 * all but the jitter), so that the last wallet finishes before the next tick. A tick that spends
 * the budget is spread at the pace the limiter grants tokens (up to 98% of the interval): over
 * 80%, the tick's last fifth only waited in the limiter's queue, up to ~8 s, each turn holding
 * what it had read (bench/RESULTS.md, "A tick spread at the pace of its budget").
 */
export function pollWindowMs(intervalMs: number, jitterMs: number, polls: number, budget: number | undefined): number {
  const slack = Math.max(0, Math.min(intervalMs * POLL_WINDOW_SHARE, intervalMs - jitterMs));
  if (budget === undefined || !Number.isFinite(budget) || budget <= 0) return slack;
  return Math.max(slack, intervalMs * Math.min(PACED_WINDOW_SHARE, polls / budget));
}

/**
 * The time between two polls under a schedule: the gap between its next two times. Read again only
 * once the first of them has come, the schedule changed (a reload) or the clock went back: alerts,
 * probes and the watchdog ask often, and reading a cron schedule is not free.
 */
export class PollInterval {
  private known: { schedule: object; from: number; until: number; ms: number } | undefined;

  ms(schedule: { poll: string; timezone?: string | undefined }, now: number): number {
    const known = this.known;
    if (known?.schedule === schedule && now >= known.from && now < known.until) return known.ms;
    const [a, b] = nextCronTimes(schedule.poll, new Date(now), 2, { timezone: schedule.timezone });
    const ms = a !== undefined && b !== undefined ? b.getTime() - a.getTime() : 60_000;
    this.known = { schedule, from: now, until: a?.getTime() ?? now, ms };
    return ms;
  }
}

export class PollScheduler {
  /** The next fire time of the schedule (Unix ms) while started. */
  private nextAt: number | undefined;
  private sleep: NodeJS.Timeout | undefined;
  /** The polls of the tick not yet started, by their timer: when they are due (monotonic) and the wallets. */
  private readonly timers = new Map<NodeJS.Timeout, { at: number; wallets: readonly WalletConfig[] }>();
  readonly turns: Turns;
  private readonly random: () => number;
  private stopped = false;
  private cycle = 0;

  constructor(private readonly opts: SchedulerOptions) {
    this.turns = opts.turns ?? new Turns(new Semaphore(opts.concurrency));
    this.random = opts.random ?? Math.random;
  }

  start(): void {
    this.stopped = false;
    this.nextAt = this.firstAfter(this.opts.clock.now());
    this.arm();
  }

  nextRun(): Date | undefined {
    return this.nextAt === undefined ? undefined : new Date(this.nextAt);
  }

  /** The schedule's first fire time after `now`; undefined when it never fires again. */
  private firstAfter(now: number): number | undefined {
    return nextCronTimes(this.opts.cron, new Date(now), 1, { timezone: this.opts.timezone })[0]?.getTime();
  }

  /**
   * Sleeps until the next fire time, then ticks. Not node-cron's runner: it skips the hour the
   * clocks go back in a zone with daylight saving (config/cron.ts nextMatch), an hour with no poll
   * every year. The sleep is at most a minute, and each wake asks the schedule again from the
   * clock: a clock set back meets its earlier fire times, and a fire time months away is not left
   * to one timer (setTimeout's limit is 24.8 days).
   */
  private arm(): void {
    if (this.stopped || this.nextAt === undefined) return;
    const now = this.opts.clock.now();
    const due = this.nextAt;
    this.nextAt = this.firstAfter(now);
    if (now >= due) this.tick();
    if (this.nextAt === undefined || this.stopped) return;
    this.sleep = setTimeout(() => this.arm(), Math.max(0, Math.min(this.nextAt - now, MAX_SLEEP_MS)));
  }

  /** Starts one interval's worth of polls now; also used for the first poll at start-up. */
  tick(): void {
    if (this.stopped) return;
    const now = this.opts.clock.now();
    const next = this.nextAt;
    const interval = next !== undefined && next > now ? next - now : 60_000;
    const { wallets, windowMs, floors } = this.plan(interval, this.opts.budget?.(interval));
    const offsets = spreadOffsets(wallets.length, windowMs, Math.min(this.opts.jitterMs, interval * 0.2), this.random, floors);
    const cycle = ++this.cycle;
    // One timer for the wallets due in each second, not one per wallet: every timer is a wake-up of
    // the process, and on a small VM a wake-up costs more than the little these do before their
    // turns queue for the limiter (bench/RESULTS.md).
    const due = new Map<number, WalletConfig[]>();
    wallets.forEach((wallet, i) => {
      const at = Math.ceil((offsets[i] ?? 0) / TIMER_GRID_MS) * TIMER_GRID_MS;
      const group = due.get(at);
      if (group === undefined) due.set(at, [wallet]);
      else group.push(wallet);
    });
    const turns: Array<Promise<unknown>> = [];
    for (const [at, group] of due) turns.push(new Promise<void>((resolve) => this.later(at, group, resolve)));
    void Promise.all(turns).then(() => {
      if (!this.stopped) this.opts.events?.emit('cycle:done', { at: this.opts.clock.now(), wallets: wallets.length });
      this.opts.logger.debug({ event: 'cycle.done', cycle, wallets: wallets.length }, 'poll cycle done');
    });
  }

  /**
   * Turns for these wallets in `delayMs`; `done` when they are all handled. A delay past what
   * setTimeout takes is waited in steps: setTimeout fires a longer one after 1 ms, and a tick of an
   * interval over 31 days (quarterly, yearly) polled every wallet spread past 24.8 days at once.
   */
  private later(delayMs: number, wallets: readonly WalletConfig[], done: () => void): void {
    const at = this.opts.clock.monotonic() + delayMs;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (delayMs > MAX_TIMER_MS) this.later(Math.max(0, at - this.opts.clock.monotonic()), wallets, done);
      else void Promise.all(wallets.map((wallet) => this.turn(wallet))).finally(done);
    }, Math.min(delayMs, MAX_TIMER_MS));
    this.timers.set(timer, { at, wallets });
  }

  /**
   * Stops this scheduler and starts `next`, which replaces it (a reload that changes the schedule)
   * and holds its turns: the polls of this one's tick not yet started go on under `next`, at their
   * times. Dropped, those wallets skipped the interval, and over the rate budget a whole round
   * more, since the planner counted them as polled when it chose them.
   */
  replaceBy(next: PollScheduler): void {
    const left = [...this.timers.values()];
    void this.stop(0);
    next.start();
    const now = this.opts.clock.monotonic();
    for (const { at, wallets } of left) next.later(Math.max(0, at - now), wallets, () => {});
  }

  /**
   * Turns for these wallets now, off the schedule (`autoclaim poll`, a reload that lifted a pause):
   * no spread, no planner; a wallet whose turn is running is skipped as on a tick. Resolves when done.
   */
  async pollNow(wallets: readonly WalletConfig[]): Promise<void> {
    if (this.stopped) return;
    await Promise.all(wallets.map((w) => this.turn(w)));
  }

  /**
   * This tick's wallets. A planner passes over the wallets still busy from an earlier tick, and is
   * given a budget net of those turns, which will spend tokens of this interval too. It is given
   * the whole list (the same array until it changes) and the busy ones apart, so that it need not
   * look at every wallet each tick. It is given the monotonic clock: a wall-clock step must not
   * make every wallet look overdue.
   *
   * The window the picks are spread over is set first, from the most the planner may pick, and the
   * planner is told it: a wallet it expects to cross its threshold within the window is slotted
   * after its crossing and counted with its claim, and one crossing later is not (priority.ts).
   * The planner says when each slotted pick crosses (ms into the window: its floor), so that
   * jitter does not wrap it to before.
   */
  private plan(intervalMs: number, intervalBudget: number | undefined): { wallets: readonly WalletConfig[]; windowMs: number; floors?: (i: number) => number | undefined } {
    const all = this.opts.wallets();
    const planner = this.opts.planner;
    const budget = Math.max(0, (intervalBudget ?? Number.POSITIVE_INFINITY) - this.turns.running.size);
    const most = planner === undefined ? all.length : Math.min(all.length, Math.floor(budget));
    const windowMs = pollWindowMs(intervalMs, this.opts.jitterMs, most, intervalBudget);
    if (planner === undefined) return { wallets: all, windowMs };
    const now = this.opts.clock.monotonic();
    const wallets = planner.choose(all, budget, now, intervalMs, this.turns.running, windowMs);
    return { wallets, windowMs, floors: slotFloors(planner, wallets, now) };
  }

  private async turn(wallet: WalletConfig): Promise<void> {
    if (this.stopped) return;
    if (this.turns.running.has(wallet.name) || this.turns.addresses.has(wallet.address)) {
      this.opts.logger.warn({ event: 'poll.overlap', wallet: wallet.name }, 'previous turn of this wallet still running; skipping this one');
      return;
    }
    const run = this.turns.slots.run(async () => {
      if (this.stopped) return;
      try {
        await this.opts.runWallet(wallet);
      } catch (err) {
        this.opts.logger.error({ event: 'wallet.failed', wallet: wallet.name, err }, 'wallet turn failed unexpectedly');
      }
    });
    this.turns.running.set(wallet.name, run);
    this.turns.addresses.add(wallet.address);
    try {
      await run;
    } finally {
      this.turns.running.delete(wallet.name);
      this.turns.addresses.delete(wallet.address);
    }
  }

  /** Stops taking new work and waits (up to timeoutMs) for turns in flight to finish or record. */
  async stop(timeoutMs: number): Promise<boolean> {
    this.stopped = true;
    clearTimeout(this.sleep);
    this.nextAt = undefined;
    for (const t of this.timers.keys()) clearTimeout(t);
    this.timers.clear();
    const pending = [...this.turns.running.values()];
    if (pending.length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const done = await Promise.race([Promise.allSettled(pending).then(() => true as const), timedOut]);
    clearTimeout(timer);
    return done;
  }
}
