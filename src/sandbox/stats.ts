// What benchmarks read back: requests per op and outcome, every 429 served, and whether the client
// ever pushed past the published budget (the sandbox's own limiter and the busiest minute seen).
import type { Clock } from '../domain.js';
import type { FaultOp } from './faults.js';

export type StatOp = FaultOp | 'unknown';
/** An HTTP status, or what happened instead of one. */
export type Outcome = number | 'reset' | 'dropped' | 'hang' | 'truncated';

export interface StatsSnapshot {
  total: number;
  byOp: Record<string, Record<string, number>>;
  /** Every 429 answered: the limiter's and the rate_limit fault's. */
  served429: number;
  /** 429s of the sandbox's own limiter: each one is the client exceeding its budget. */
  limiter429: number;
  /** The most API requests that arrived within any 60 s (monotonic clock). */
  peakPerMinute: number;
  faultsFired: number;
}

const MINUTE_MS = 60_000;

export class Stats {
  private total = 0;
  private byOp = new Map<string, Map<string, number>>();
  private served429 = 0;
  private limiter429 = 0;
  private arrivals: number[] = [];
  private head = 0;
  private peak = 0;

  constructor(private readonly clock: Clock) {}

  arrive(): void {
    const now = this.clock.monotonic();
    this.arrivals.push(now);
    while ((this.arrivals[this.head] ?? now) <= now - MINUTE_MS) this.head += 1;
    if (this.head > 4096) {
      this.arrivals = this.arrivals.slice(this.head);
      this.head = 0;
    }
    this.peak = Math.max(this.peak, this.arrivals.length - this.head);
  }

  record(op: StatOp, outcome: Outcome, fromLimiter = false): void {
    this.total += 1;
    const counts = this.byOp.get(op) ?? new Map<string, number>();
    const key = String(outcome);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    this.byOp.set(op, counts);
    if (outcome === 429) this.served429 += 1;
    if (fromLimiter) this.limiter429 += 1;
  }

  snapshot(faultsFired: number): StatsSnapshot {
    const byOp: Record<string, Record<string, number>> = {};
    for (const [op, counts] of this.byOp) byOp[op] = Object.fromEntries(counts);
    return { total: this.total, byOp, served429: this.served429, limiter429: this.limiter429, peakPerMinute: this.peak, faultsFired };
  }

  reset(): void {
    this.total = 0;
    this.byOp = new Map();
    this.served429 = 0;
    this.limiter429 = 0;
    this.arrivals = [];
    this.head = 0;
    this.peak = 0;
  }
}

export interface RateLimitOptions {
  perMinute: number;
  burst: number;
}

/** A token bucket: `burst` at once, refilled at perMinute/60 a second. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly opts: RateLimitOptions,
    private readonly clock: Clock,
  ) {
    if (!(opts.perMinute > 0) || !(opts.burst >= 1)) throw new Error('rateLimit needs perMinute > 0 and burst >= 1');
    this.tokens = opts.burst;
    this.last = clock.monotonic();
  }

  /** Takes a token, or says how many whole seconds until one is there. */
  take(): { ok: true } | { ok: false; retryAfterSec: number } {
    const now = this.clock.monotonic();
    const perMs = this.opts.perMinute / MINUTE_MS;
    this.tokens = Math.min(this.opts.burst, this.tokens + Math.max(0, now - this.last) * perMs);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSec: Math.max(1, Math.ceil((1 - this.tokens) / perMs / 1000)) };
  }
}
