// The service's timestamp window, and what follows from it for a signed request that may still be
// in flight (SPEC §2: a step is tried again "only after any earlier request for it can no longer be
// accepted by the service"). The service accepts a signed request while its `ts` is within
// api.ts_window of the service's clock; after that no copy of it can be applied, however late it
// arrives (a daemon paused with it in hand, a proxy holding it). Pure, so it is table-tested.

/**
 * Added to api.ts_window before a request counts as unable to land: the service's clock may be
 * behind the clock that judges (the database's, with shared state), and a request accepted at the
 * window's last second may take a moment to be applied. At most a minute — twice alerts.clock_skew's
 * default warning (30 s), twelve times cluster.max_clock_skew's (5 s) — and at most the window
 * itself: a service whose clock is further from ours than its window refuses every request we sign
 * as stale or from the future, so a service that accepts our requests at all is within it.
 */
export const TS_WINDOW_MARGIN_MS = 60_000;

/** The margin for this window: TS_WINDOW_MARGIN_MS, or the window when it is shorter. */
export function windowMarginMs(tsWindowMs: number): number {
  return Math.min(TS_WINDOW_MARGIN_MS, tsWindowMs);
}

/** How old a request's timestamp must be before the request can no longer be accepted. */
export function settleAfterMs(tsWindowMs: number): number {
  return tsWindowMs + windowMarginMs(tsWindowMs);
}

/**
 * How old a signed timestamp may grow while its request waits to go out (the rate limiter, a 429's
 * pause, a backoff) before it is sent as it is: a quarter of the window. Older, the step goes back
 * to planned unsent and is signed afresh later, so a request never leaves with so little of its
 * window left that a delivery delay or a service clock a little ahead gets it refused as stale (a
 * timestamp refusal pauses signing for the wallet).
 */
export function maxSendAgeMs(tsWindowMs: number): number {
  return Math.floor(tsWindowMs / 4);
}

/**
 * Whether a request signed at `tsSec` (Unix seconds, as recorded with the step) can no longer be
 * accepted, judged at `nowMs` of the store's clock (the database's with shared state: one clock for
 * every daemon, so a new owner does not measure an old owner's timestamp on a clock of its own).
 */
export function beyondWindow(tsSec: number, nowMs: number, settleMs: number): { ageMs: number; beyond: boolean } {
  const ageMs = nowMs - tsSec * 1000;
  return { ageMs, beyond: ageMs >= settleMs };
}

/**
 * The "now" a lost request's age is judged at: the store's clock (`storeNowMs`), or the service's as
 * its last `Date` header put it (`wallNowMs + serviceSkewMs`, skew = service minus our wall clock)
 * when that is behind. The margin covers a minute between the judging clock and the service's, and
 * nothing stops this machine (with SQLite, the store's clock) running minutes ahead: the service,
 * which accepts what we sign within its window either way, would still take the old request after
 * it was called lost. `Date` has 1 s resolution and left the service before it arrived, so this
 * reads the service's clock a little behind: it only waits longer. No `Date` seen: the store's.
 */
export function judgingNowMs(storeNowMs: number, wallNowMs: number, serviceSkewMs: number | undefined): number {
  if (serviceSkewMs === undefined || !Number.isFinite(serviceSkewMs)) return storeNowMs;
  return Math.min(storeNowMs, wallNowMs + serviceSkewMs);
}
