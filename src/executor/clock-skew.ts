// Clock skew between us and the API. Every signed request carries `x-svc-ts` from our wall clock
// and the server refuses one too far from its own; a drifting clock therefore shows up first as
// refused claims. The server's `Date` header tells us early. One warning when the skew first
// passes the threshold, one note when it is back, and silence in between: a warning on every poll
// would bury the log and teach operators to ignore it.

export const DEFAULT_CLOCK_SKEW_THRESHOLD_MS = 30_000;

/**
 * `Date` has one-second resolution and the response takes time to arrive, so a measurement wobbles
 * by a second or two. An episode ends only when the skew is this far back inside the threshold,
 * so a skew sitting right at the threshold does not flap between warned and resolved.
 */
const CLOCK_SKEW_HYSTERESIS_MS = 2_000;

export interface SkewState {
  skewed: boolean;
}

type SkewReport =
  | { event: 'clock.skew'; skewMs: number; thresholdMs: number }
  | { event: 'clock.skew_resolved'; skewMs: number; thresholdMs: number };

export const INITIAL_SKEW_STATE: SkewState = { skewed: false };

/**
 * One measurement in, the next state and at most one report out. Pure. `skewMs` is server minus
 * ours (positive: our clock is behind); undefined (no Date header seen) changes nothing.
 */
export function observeSkew(
  state: SkewState,
  skewMs: number | undefined,
  thresholdMs: number = DEFAULT_CLOCK_SKEW_THRESHOLD_MS,
): { state: SkewState; report?: SkewReport } {
  if (skewMs === undefined || !Number.isFinite(skewMs)) return { state };
  const size = Math.abs(skewMs);
  if (!state.skewed) {
    if (size > thresholdMs) return { state: { skewed: true }, report: { event: 'clock.skew', skewMs, thresholdMs } };
    return { state };
  }
  const resolveBelow = Math.max(0, thresholdMs - Math.min(CLOCK_SKEW_HYSTERESIS_MS, thresholdMs / 2));
  if (size <= resolveBelow) return { state: { skewed: false }, report: { event: 'clock.skew_resolved', skewMs, thresholdMs } };
  return { state };
}

/** The episode state between polls; the daemon keeps one for its API client. */
export class ClockSkewWatch {
  private state: SkewState = INITIAL_SKEW_STATE;

  observe(skewMs: number | undefined, thresholdMs: number = DEFAULT_CLOCK_SKEW_THRESHOLD_MS): SkewReport | undefined {
    const next = observeSkew(this.state, skewMs, thresholdMs);
    this.state = next.state;
    return next.report;
  }

  get skewed(): boolean {
    return this.state.skewed;
  }
}

/** "ahead"/"behind" phrased for the operator who has to fix the machine's clock. */
export function describeSkew(skewMs: number): string {
  const seconds = Math.round(Math.abs(skewMs) / 1000);
  return skewMs > 0 ? `this machine's clock is ${seconds}s behind the API server's` : `this machine's clock is ${seconds}s ahead of the API server's`;
}
