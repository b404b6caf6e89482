// The one fake clock for tests: wall and monotonic time that move only when the test says so, and
// sleeps that wait for it. Every edge takes a Clock (and a sleep), so this stands in everywhere.
import type { Clock } from '../../src/domain.js';

/** 2025-06-01T12:00:00Z: where a FakeClock starts unless told otherwise. */
export const FAKE_WALL_START = Date.UTC(2025, 5, 1, 12, 0, 0);

export class FakeClock implements Clock {
  private timers: Array<{ at: number; seq: number; resolve: () => void }> = [];
  private seq = 0;
  /** Every sleep asked for, in order (ms). */
  readonly sleeps: number[] = [];

  constructor(
    public wall = FAKE_WALL_START,
    public mono = 1_000,
  ) {}

  now = (): number => this.wall;
  monotonic = (): number => this.mono;

  /** A sleep that resolves when the clock is moved past it (`advance`, `elapse`). */
  sleep = (ms: number): Promise<void> => {
    this.sleeps.push(ms);
    return new Promise<void>((resolve) => {
      this.timers.push({ at: this.mono + ms, seq: this.seq++, resolve });
    });
  };

  /** A sleep that returns at once, moving the clocks by the time slept (for code that just waits). */
  autoSleep = (ms: number): Promise<void> => {
    this.sleeps.push(ms);
    this.mono += ms;
    this.wall += ms;
    return Promise.resolve();
  };

  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Sets the wall clock, a step either way; monotonic time moves forward as much, never back. */
  set(wallMs: number): void {
    this.mono += Math.max(0, wallMs - this.wall);
    this.wall = wallMs;
  }

  /**
   * Moves both clocks forward at once. Sleeps that fall due are resolved, but what they continue
   * with runs only after this returns; for chains of sleeps use `elapse`.
   */
  advance(ms: number): void {
    const target = this.mono + ms;
    for (let next = this.due(target); next !== undefined; next = this.due(target)) next.resolve();
    this.wall += target - this.mono;
    this.mono = target;
  }

  /**
   * Lets `ms` pass as real time would: due sleeps fire in order, and each one's continuation runs
   * (and may sleep again) before the next fires.
   */
  async elapse(ms: number): Promise<void> {
    const target = this.mono + ms;
    await flush();
    for (let next = this.due(target); next !== undefined; next = this.due(target)) {
      next.resolve();
      await flush();
    }
    this.wall += target - this.mono;
    this.mono = target;
    await flush();
  }

  /** Takes the earliest sleep due by `target` off the list and moves the clocks to it. */
  private due(target: number): { resolve: () => void } | undefined {
    this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    const next = this.timers[0];
    if (next === undefined || next.at > target) return undefined;
    this.timers.shift();
    this.wall += Math.max(0, next.at - this.mono);
    this.mono = Math.max(this.mono, next.at);
    return next;
  }
}

/** Lets pending promise continuations run (several rounds, since chains are a few hops deep). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await new Promise<void>((r) => setImmediate(r));
}
