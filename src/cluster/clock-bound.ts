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
//
// The daemon's decision clock (executor/decision-clock.ts: the wall clock at start plus monotonic
// time since) judges cooldowns and day windows and dates the plans every daemon reads; it keeps an
// error it started with (a wall clock NTP had not set yet at boot) or gathered since (a step, a
// suspended host), for the process's life. A daemon whose decision clock ran 90 min ahead judged a
// plan another daemon made a moment ago 90 min old, and claimed again inside a 1 h cooldown. So it
// is measured at the same round: when the wall clock is within bounds and the decision clock is
// not, the decision clock follows the wall clock again (`clock.decision_reset`, warn), in the
// round, before the daemon may sign (a wall clock out of bounds refuses signing on its own).
import type { DecisionClock } from '../executor/decision-clock.js';
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

  /** Takes one round's sample (and the decision clock's, read at the same instant); logs when an episode opens or closes. */
  observe(sample: SkewSample, now: number, decision?: SkewSample): void {
    this.last = sample;
    if (decision !== undefined) this.followWall(sample, decision);
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

  /** The daemon's decision clock, held to the database's at each round (see above); none until the daemon binds it. */
  decision: Pick<DecisionClock, 'now' | 'follow'> | undefined;

  /** When the wall clock is within bounds and the decision clock (its reading this round) is not: it follows the wall clock again. */
  private followWall(wall: SkewSample, decision: SkewSample): void {
    if (!withinBound(wall, this.maxMs) || withinBound(decision, this.maxMs)) return;
    this.logger?.warn(
      { event: 'clock.decision_reset', daemon: this.self, against: 'database', skew_ms: Math.round(decision.skewMs), rtt_ms: Math.round(decision.rttMs), max_ms: this.maxMs },
      `the decision clock (cooldowns and day windows are judged by it) was ${describe(decision.skewMs)} the database's while this machine's clock is within bounds: it follows this machine's clock again`,
    );
    this.decision?.follow();
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
