// The clock the rules judge by. Cooldowns and the rolling 24-hour windows compare `now` with the
// times earlier plans were recorded at; if that `now` is the wall clock, an NTP step rewrites
// history: a step back makes a 6 h cooldown last 7 h (harmless), a step forward ends it early
// (money moves sooner than the operator allowed). So decisions read wall time once, when the
// process starts, and from then on only add elapsed monotonic time, which no NTP step can move.
// `x-svc-ts` keeps the real wall clock: the server compares it with its own.
import type { Clock } from '../domain.js';

/** The decision clock, and the one way it moves other than by elapsed time (follow). */
export interface DecisionClock extends Clock {
  /**
   * Starts again from the wall clock now. Only for a wall clock just vouched for by a clock every
   * daemon shares (the cluster's database: cluster/clock-bound.ts), when this one has strayed from
   * it: started from a wall clock that was wrong at boot, or moved off since by a step or a host
   * suspended (monotonic time stops then). Time may run back here: every limit judged on a clock
   * set back is longer, not shorter (a plan dated ahead counts as just made).
   */
  follow(): void;
}

/**
 * A Clock whose `now()` is the wall time at creation plus the monotonic time elapsed since, and
 * never less than a value it returned before (until follow()). `monotonic()` is the underlying clock's.
 */
export function createDecisionClock(clock: Clock): DecisionClock {
  let wallAtStart = clock.now();
  let monoAtStart = clock.monotonic();
  let last = Number.NEGATIVE_INFINITY;
  return {
    now(): number {
      // The max() guards against a monotonic source that is not (a test double, a VM that was
      // paused and restored oddly): a decision must never see time run backwards.
      // Whole milliseconds: the store keeps plan times as SQLite INTEGERs.
      last = Math.max(last, Math.floor(wallAtStart + (clock.monotonic() - monoAtStart)));
      return last;
    },
    monotonic: () => clock.monotonic(),
    follow(): void {
      wallAtStart = clock.now();
      monoAtStart = clock.monotonic();
      last = Number.NEGATIVE_INFINITY;
    },
  };
}
