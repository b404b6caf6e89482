// One clock for the cluster (SPEC §2): the database's. Leases already expire by it (sql.ts), but a
// daemon signs requests with its own wall clock, and the claim-gap protocol judges a claim by its
// signing timestamp against the database's now: a daemon whose clock strays from the database's
// breaks that argument silently. So at every lease round the manager reads the database's
// clock_timestamp() in the heartbeat's own round trip, and this compares it with ours.
//
// One round trip: our wall clock read just before the query (t0), the monotonic time it took (rtt),
// and the database's clock read somewhere in between. The database's reading was taken at some
// instant in [t0, t0 + rtt], so our clock minus the database's is (t0 + rtt/2) − db, give or take
// rtt/2. A measurement counts as within bounds only if it is *certainly* within: |skew| + rtt/2 ≤
// cluster.max_clock_skew. A slow round trip can only make the daemon refuse, never sign wrongly.
//
// Out of bounds: `clock.skew` at error (once per episode), signing refused for every wallet
// (refusal(), which the executor's signing gate reads), readiness not ready and the `clock_skew`
// alert (service/alerts.ts). Back within bounds at a later round: `clock.skew_resolved` at info,
// and signing resumes by itself. No sample yet (the first round has not come back): nothing is
// refused here; the daemon holds no lease then, so it signs nothing anyway.
import type { Logger } from '../log/logger.js';

export interface SkewSample {
  /** Our wall clock minus the database's, at the middle of the round trip (ms). */
  skewMs: number;
  /** The round trip the reading came from: the measurement is good to ± half of it (ms). */
  rttMs: number;
}

/** Our clock minus the database's, from one round trip: our wall clock at its start, its length, and the database's reading. */
export function measureSkew(localStartMs: number, rttMs: number, dbMs: number): SkewSample {
  const rtt = Math.max(0, rttMs);
  return { skewMs: localStartMs + rtt / 2 - dbMs, rttMs: rtt };
}

/** Certainly within the bound: the worst case of the reading (|skew| + rtt/2) is not beyond it. */
export function withinBound(s: SkewSample, maxMs: number): boolean {
  return Math.abs(s.skewMs) + s.rttMs / 2 <= maxMs;
}

export interface ClockRefusal {
  skewMs: number;
  maxMs: number;
  /** Our wall clock when the episode opened. */
  since: number;
  /** For logs, readiness and the signing pause: what is wrong and what to do. */
  reason: string;
}

export class ClockBound {
  private last: SkewSample | undefined;
  private episode: ClockRefusal | undefined;

  constructor(
    private readonly maxMs: number,
    private readonly logger: Logger | undefined,
    private readonly self: string,
  ) {}

  /** Takes one round's sample; logs when an episode opens or closes. */
  observe(sample: SkewSample, now: number): void {
    this.last = sample;
    const fields = { daemon: this.self, against: 'database', skew_ms: Math.round(sample.skewMs), rtt_ms: Math.round(sample.rttMs), max_ms: this.maxMs };
    if (!withinBound(sample, this.maxMs)) {
      if (this.episode === undefined) {
        const reason = `this machine's clock is ${describe(sample.skewMs)} the database's (more than cluster.max_clock_skew ${this.maxMs / 1000}s)`;
        this.episode = { skewMs: sample.skewMs, maxMs: this.maxMs, since: now, reason };
        this.logger?.error({ event: 'clock.skew', ...fields }, `${reason}; signing stops until it is back within bounds: check NTP (timedatectl, chronyc tracking)`);
      } else {
        this.episode.skewMs = sample.skewMs;
      }
      return;
    }
    if (this.episode !== undefined) {
      this.episode = undefined;
      this.logger?.info({ event: 'clock.skew_resolved', ...fields }, `clock back within ${this.maxMs / 1000}s of the database's; signing resumes`);
    }
  }

  /** Why signing is refused now; undefined when the last reading was within bounds (or none came yet). */
  refusal(): ClockRefusal | undefined {
    return this.episode;
  }

  /** The last reading (status, tests). */
  lastSample(): SkewSample | undefined {
    return this.last;
  }
}

function describe(skewMs: number): string {
  const s = Math.abs(skewMs) / 1000;
  return `${s.toFixed(1)}s ${skewMs > 0 ? 'ahead of' : 'behind'}`;
}
