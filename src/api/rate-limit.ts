// One token bucket shared by every request autoclaim makes, so that the published limit of the
// service (500 a minute, burst 100) holds across wallets and operations. Waiters are served in
// arrival order; a 429 or 503 pauses everyone, since the limit is per client, not per request.
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../domain.js';

export type Sleep = (ms: number) => Promise<void>;

export const defaultSleep: Sleep = (ms) => delay(ms);

const DEFAULT_HEADROOM = 0.02;
/**
 * How late a burst of ours may reach the server's bucket and still find its tokens. A bucket fills
 * only to its size: while the server's is full and our burst is still on its way (our connection
 * queue, the wire, a busy server), the refill of that time is lost to the server's cap, yet our
 * own bucket counted it, and the burst lands on top of the requests we let go at our rate
 * meanwhile. So our burst is smaller than the server's by what our rate brings in this long (20
 * of 100 at 2,500 a minute). Measured: with only the 2% headroom (2 of 100), the first seconds
 * of a 10,000-wallet `run` drew 1–8 429s on a loaded machine, each pausing every request ≥ 1 s.
 */
const DEFAULT_ARRIVAL_SLACK_MS = 500;
/**
 * A waiting queue is woken at most this often, not once per token: a fleet larger than the budget
 * keeps the queue full all day, and the requests let go together are answered together, so their
 * answers are decoded, checked and recorded back to back while the process's caches are warm
 * rather than each after an idle spell. At 2,500 a minute a wake-up lets ~40 go, half the server's
 * burst; a request waits at most this much longer.
 */
const MIN_WAKE_MS = 1_000;

interface RateLimiterOptions {
  /** Sustained requests per minute; 0 or Infinity means unlimited. */
  perMinute: number;
  /** Requests that may go at once after an idle spell. */
  burst: number;
  clock: Clock;
  sleep?: Sleep;
  /** Pause when a 429/503 gives no Retry-After (default 2000 ms). */
  defaultPauseMs?: number;
  /** A Retry-After longer than this is capped, so one odd header cannot stall the daemon (default 5 min). */
  maxPauseMs?: number;
  /**
   * Share of the budget (rate and burst) left unused, default 0.02. A server bucket of exactly our
   * size sees our requests a varying few ms late, so a limiter that spends every token the moment
   * it refills draws an occasional 429 (and its pause costs far more than 2%).
   */
  headroom?: number;
  /** Our burst is the server's less the tokens our rate refills in this long (DEFAULT_ARRIVAL_SLACK_MS); tests pass 0. */
  arrivalSlackMs?: number;
}

interface Waiter {
  resolve: () => void;
  since: number;
}

export class RateLimiter {
  /** Acquisitions that had to wait. */
  waits = 0;
  /** Total time spent waiting, in ms. */
  waitedMs = 0;
  /** Pauses requested by the server (429/503). */
  pauses = 0;

  private readonly unlimited: boolean;
  private readonly capacity: number;
  private readonly msPerToken: number;
  /**
   * MIN_WAKE_MS, or half the time the bucket takes to refill whole when that is less: a wake-up
   * finds less than a token left, so a sleep of half the refill can never reach the cap and lose
   * tokens to it (a sleep of the whole refill lost the fraction at every wake-up).
   */
  private readonly minWakeMs: number;
  private readonly clock: Clock;
  private readonly sleep: Sleep;
  private readonly defaultPauseMs: number;
  private readonly maxPauseMs: number;
  private tokens: number;
  private refilledAt: number;
  private pausedUntil = Number.NEGATIVE_INFINITY;
  private readonly queue: Waiter[] = [];
  private pumping = false;

  constructor(opts: RateLimiterOptions) {
    this.unlimited = !(opts.perMinute > 0) || !Number.isFinite(opts.perMinute);
    const headroom = Math.min(0.5, Math.max(0, opts.headroom ?? DEFAULT_HEADROOM));
    this.msPerToken = this.unlimited ? 0 : 60_000 / (opts.perMinute * (1 - headroom));
    const slackTokens = this.unlimited ? 0 : Math.max(0, opts.arrivalSlackMs ?? DEFAULT_ARRIVAL_SLACK_MS) / this.msPerToken;
    this.capacity = Math.max(1, Math.floor(opts.burst) * (1 - headroom) - slackTokens);
    this.minWakeMs = Math.min(MIN_WAKE_MS, Math.floor((this.capacity * this.msPerToken) / 2));
    this.clock = opts.clock;
    this.sleep = opts.sleep ?? defaultSleep;
    this.defaultPauseMs = opts.defaultPauseMs ?? 2_000;
    this.maxPauseMs = opts.maxPauseMs ?? 300_000;
    this.tokens = this.capacity;
    this.refilledAt = this.clock.monotonic();
  }

  /** Resolves when one request may go. FIFO: a later caller never overtakes an earlier one. */
  acquire(): Promise<void> {
    if (this.queue.length === 0 && this.delayUntilToken() === 0) {
      this.take();
      return Promise.resolve();
    }
    this.waits += 1;
    return new Promise<void>((resolve) => {
      this.queue.push({ resolve, since: this.clock.monotonic() });
      void this.pump();
    });
  }

  /**
   * Holds every request for `ms` (the server's Retry-After), or the default pause when the
   * server gave none. After the pause the bucket restarts nearly empty: the server has just said
   * we were going too fast, so the burst is not spent again at once.
   */
  pauseFor(ms?: number): void {
    const wait = Math.min(this.maxPauseMs, Math.max(0, ms ?? this.defaultPauseMs));
    const until = this.clock.monotonic() + wait;
    this.pauses += 1;
    if (until > this.pausedUntil) this.pausedUntil = until;
    if (!this.unlimited) {
      this.tokens = 0;
      this.refilledAt = this.pausedUntil - this.msPerToken;
    }
  }

  /** Requests waiting right now. */
  get queued(): number {
    return this.queue.length;
  }

  private refill(now: number): void {
    if (this.unlimited || now <= this.refilledAt) return;
    this.tokens = Math.min(this.capacity, this.tokens + (now - this.refilledAt) / this.msPerToken);
    this.refilledAt = now;
  }

  /** Milliseconds until a token is available and no pause holds (0 = now). */
  private delayUntilToken(): number {
    const now = this.clock.monotonic();
    const pause = Math.max(0, this.pausedUntil - now);
    if (pause > 0) return pause;
    if (this.unlimited) return 0;
    this.refill(now);
    if (this.tokens >= 1) return 0;
    return (1 - this.tokens) * this.msPerToken;
  }

  private take(): void {
    if (!this.unlimited) this.tokens -= 1;
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0) {
        const wait = this.delayUntilToken();
        if (wait > 0) {
          try {
            await this.sleep(Math.max(this.minWakeMs, Math.ceil(wait)));
          } catch {
            // a sleep that fails must not strand the queue; re-check the clock and go on
          }
          continue;
        }
        this.take();
        const next = this.queue.shift();
        if (next) {
          this.waitedMs += this.clock.monotonic() - next.since;
          next.resolve();
        }
      }
    } finally {
      this.pumping = false;
    }
  }
}

/**
 * Parses a Retry-After header: delay-seconds or an HTTP-date (relative to `nowMs`, wall clock).
 * Returns undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (v === undefined || v === '') return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (/^\d+\.\d+$/.test(v)) return Math.ceil(Number(v) * 1000); // not RFC, but seen in the wild
  if (!/^[A-Za-z]{3},/.test(v)) return undefined; // an HTTP-date starts with the day name
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
