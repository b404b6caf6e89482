// How late the event loop runs a timer: the measure behind /healthz. A loop that is blocked cannot
// answer at all (the probe times out); this catches the one that answers, but seconds late.
import { performance } from 'node:perf_hooks';

/**
 * How often the loop's lag is sampled, here and for the `nodejs_eventloop_lag_*` metrics
 * (metrics.ts): every sample is a wake-up of the whole process, and an idle daemon does little
 * else, so the interval is what the idle daemon's CPU is made of (bench/RESULTS.md).
 */
export const LOOP_SAMPLE_MS = 500;

export interface LoopLagMonitor {
  /** The worst lag seen in the recent window, or the delay of a tick overdue right now. */
  lagMs(): number;
  stop(): void;
}

interface LoopLagOptions {
  /** How often to sample; default LOOP_SAMPLE_MS. */
  intervalMs?: number;
  /** How long a bad sample is remembered; default 10 s. */
  windowMs?: number;
  /** Monotonic milliseconds; default performance.now. */
  now?: () => number;
}

export function startLoopLagMonitor(opts: LoopLagOptions = {}): LoopLagMonitor {
  const intervalMs = opts.intervalMs ?? LOOP_SAMPLE_MS;
  const windowMs = opts.windowMs ?? 10_000;
  const now = opts.now ?? (() => performance.now());
  let lastTick = now();
  let worst = 0;
  let worstAt = lastTick;

  const timer = setInterval(() => {
    const t = now();
    const lag = Math.max(0, t - lastTick - intervalMs);
    lastTick = t;
    if (lag >= worst || t - worstAt > windowMs) {
      worst = lag;
      worstAt = t;
    }
  }, intervalMs);
  timer.unref();

  return {
    lagMs() {
      const t = now();
      const overdue = Math.max(0, t - lastTick - intervalMs);
      const remembered = t - worstAt <= windowMs ? worst : 0;
      return Math.max(overdue, remembered);
    },
    stop: () => clearInterval(timer),
  };
}
