// The clock the rules judge by. Cooldowns and the rolling 24-hour windows compare `now` with the
// times earlier plans were recorded at; if that `now` is the wall clock, an NTP step rewrites
// history: a step back makes a 6 h cooldown last 7 h (harmless), a step forward ends it early
// (money moves sooner than the operator allowed). So decisions read wall time once, when the
// process starts, and from then on only add elapsed monotonic time, which no NTP step can move.
// `x-svc-ts` keeps the real wall clock: the server compares it with its own.
import type { Clock } from '../domain.js';

//
// The one wall reading can itself be wrong: a machine back with its clock a day ahead, set right by
// NTP a minute after the start, left the decision clock a day ahead for the process's life, and
// every plan recorded before the restart looked a day older than it was (cooldowns and the rolling
// day over early), while the requests, signed by the corrected clock, were accepted. So a turn may
// hold the decision clock back to the service's clock (`holdBackTo`, wallet-cycle.ts): only back,
// so a service can only make the limits wait longer.

export interface DecisionClock extends Clock {
  /** Sets the clock back to `toMs` if it reads later (never forward); returns how far it moved it (0 if not). */
  holdBackTo(toMs: number): number;
}

/**
 * A Clock whose `now()` is the wall time at creation plus the monotonic time elapsed since, and
 * never less than a value it returned before (but for `holdBackTo`). `monotonic()` is the underlying clock's.
 */
export function createDecisionClock(clock: Clock): DecisionClock {
  const wallAtStart = clock.now();
  const monoAtStart = clock.monotonic();
  let back = 0;
  let last = Number.NEGATIVE_INFINITY;
  const now = (): number => {
    // The max() guards against a monotonic source that is not (a test double, a VM that was
    // paused and restored oddly): a decision must never see time run backwards.
    // Whole milliseconds: the store keeps plan times as SQLite INTEGERs.
    last = Math.max(last, Math.floor(wallAtStart - back + (clock.monotonic() - monoAtStart)));
    return last;
  };
  return {
    now,
    monotonic: () => clock.monotonic(),
    holdBackTo(toMs: number): number {
      const by = now() - Math.floor(toMs);
      if (by <= 0) return 0;
      // The one step back it takes: plans dated since now look dated in the future, which every
      // limit counts as just made.
      back += by;
      last = Math.floor(toMs);
      return by;
    },
  };
}
