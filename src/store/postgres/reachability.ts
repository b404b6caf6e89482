// Whether the state database answers, as the daemon last found out. A query that fails for want of
// the database (isConnectionLoss: a dropped connection, a reset, a deadline passed, a restart) marks
// it unreachable: from then on the store refuses at once (no write is tried, so nothing is signed
// while nothing can be recorded), readiness says so without waiting on a probe, and a probe
// (SELECT 1, under the pool's deadline) is tried with a growing backoff until one answers. Any
// query that goes through (the probe, or the lease manager's next round) marks it reachable again,
// and the daemon carries on by itself. Each change is logged once: `state.unreachable` at error,
// `state.reachable` at info; the supervisor raises the `state_unreachable` alert from `state()`.
import type { Clock } from '../../domain.js';
import { StateError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { isConnectionLoss } from './db.js';

/** First wait before a probe, doubled after each failed one up to MAX_BACKOFF_MS. No jitter: a handful of daemons per database. */
export const MIN_BACKOFF_MS = 250;
export const MAX_BACKOFF_MS = 5_000;

export type ReachabilityState = { reachable: true } | { reachable: false; since: number; error: string };

export interface ReachabilityOptions {
  /** One round trip under a deadline; throws when the database does not answer. */
  probe: () => Promise<void>;
  /** For messages: the redacted URL. */
  where: string;
  logger: Logger;
  clock: Pick<Clock, 'now'>;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export class Reachability {
  private down: { since: number; error: string } | undefined;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private closed = false;

  constructor(private readonly opts: ReachabilityOptions) {}

  state(): ReachabilityState {
    return this.down === undefined ? { reachable: true } : { reachable: false, ...this.down };
  }

  /** Throws STATE_IO without touching the database while it is known to be unreachable. */
  assertReachable(): void {
    const d = this.down;
    if (d === undefined) return;
    throw new StateError(
      'STATE_IO',
      `state database ${this.opts.where} is unreachable since ${new Date(d.since).toISOString()} (${d.error}); nothing is written or sent until it answers again`,
    );
  }

  /** The outcome of a query: undefined when it went through. Only a failure to reach the database counts. */
  observe(err?: unknown): void {
    if (err === undefined) {
      this.up();
      return;
    }
    if (!isConnectionLoss(err)) return;
    const error = message(err);
    if (this.down !== undefined) {
      this.down.error = error;
      return;
    }
    this.down = { since: this.opts.clock.now(), error };
    this.failures = 0;
    this.opts.logger.error(
      { event: 'state.unreachable', path: this.opts.where, err: error },
      'the state database is unreachable: not ready, nothing is signed or sent; reconnecting',
    );
    this.schedule();
  }

  /** Runs a query's promise through observe(), passing its outcome on. */
  track<T>(p: Promise<T>): Promise<T> {
    return p.then(
      (v) => {
        this.observe();
        return v;
      },
      (err: unknown) => {
        this.observe(err);
        throw err;
      },
    );
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private up(): void {
    const d = this.down;
    if (d === undefined) return;
    this.down = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.opts.logger.info(
      { event: 'state.reachable', path: this.opts.where, down_ms: Math.max(0, this.opts.clock.now() - d.since), probes: this.failures },
      'the state database answers again; carrying on',
    );
  }

  private schedule(): void {
    if (this.closed || this.down === undefined || this.timer !== undefined || this.probing) return;
    const min = this.opts.minBackoffMs ?? MIN_BACKOFF_MS;
    const wait = Math.min(this.opts.maxBackoffMs ?? MAX_BACKOFF_MS, min * 2 ** Math.min(this.failures, 20));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.probeOnce();
    }, wait);
    this.timer.unref();
  }

  private async probeOnce(): Promise<void> {
    if (this.closed || this.down === undefined) return;
    this.probing = true;
    try {
      await this.opts.probe();
      this.probing = false;
      this.up();
    } catch (err) {
      this.probing = false;
      this.failures++;
      if (this.down !== undefined) this.down.error = message(err);
      this.schedule();
    }
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
