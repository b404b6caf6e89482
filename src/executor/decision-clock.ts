// The clock the rules judge by. Cooldowns and the rolling 24-hour windows compare `now` with the
// times earlier plans were recorded at; if that `now` is the wall clock, an NTP step rewrites
// history: a step back makes a 6 h cooldown last 7 h (harmless), a step forward ends it early
// (money moves sooner than the operator allowed). So decisions read wall time once, when the
// process starts, and from then on only add elapsed monotonic time, which no NTP step can move.
// `x-svc-ts` keeps the real wall clock: the server compares it with its own.
//
// The one wall reading can itself be wrong: a machine back with its clock a day ahead, set right by
// NTP a minute after the start, left the decision clock a day ahead for the process's life, and
// every plan recorded before the restart looked a day older than it was (cooldowns and the rolling
// day over early), while the requests, signed by the corrected clock, were accepted. So the clock
// starts again from a reading another clock vouches for, in the two places that have one:
// - a turn may hold it back to the service's clock (`holdBackTo`, wallet-cycle.ts): only back, so
//   a service can only make the limits wait longer;
// - a cluster's lease round makes it follow the wall clock (`follow`, cluster/clock-bound.ts) when
//   the database's clock vouches for the wall clock and not for it, either way: behind, it dated
//   plans in the past for every other daemon, whose cooldowns then ended early.
import type { Clock } from '../domain.js';

/** The decision clock, and the two ways it moves other than by elapsed time. */
export interface DecisionClock extends Clock {
  /**
   * Starts again from the wall clock now. Only for a wall clock just vouched for by a clock every
   * daemon shares (the cluster's database), when this one has strayed from it. Time may run back
   * here: every limit judged on a clock set back is longer, not shorter (a plan dated ahead counts
   * as just made).
   */
  follow(): void;
  /** Sets the clock back to `toMs` if it reads later (never forward); returns how far it moved it (0 if not). */
  holdBackTo(toMs: number): number;
}

/**
 * A Clock whose `now()` is the wall time at creation plus the monotonic time elapsed since, and
 * never less than a value it returned before (but for `follow` and `holdBackTo`). `monotonic()` is
 * the underlying clock's.
 */
export function createDecisionClock(clock: Clock): DecisionClock {
  let wallAtStart = clock.now();
  let monoAtStart = clock.monotonic();
  let last = Number.NEGATIVE_INFINITY;
  const now = (): number => {
    // The max() guards against a monotonic source that is not (a test double, a VM that was
    // paused and restored oddly): a decision must never see time run backwards.
    // Whole milliseconds: the store keeps plan times as SQLite INTEGERs.
    last = Math.max(last, Math.floor(wallAtStart + (clock.monotonic() - monoAtStart)));
    return last;
  };
  const startFrom = (ms: number): void => {
    wallAtStart = ms;
    monoAtStart = clock.monotonic();
    last = Number.NEGATIVE_INFINITY;
  };
  return {
    now,
    monotonic: () => clock.monotonic(),
    follow: () => startFrom(clock.now()),
    holdBackTo(toMs: number): number {
      const by = now() - Math.floor(toMs);
      if (by <= 0) return 0;
      // The one step back it takes: plans dated since now look dated in the future, which every
      // limit counts as just made.
      startFrom(Math.floor(toMs));
      return by;
    },
  };
}
