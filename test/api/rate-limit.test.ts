import { describe, expect, it } from 'vitest';
import { parseRetryAfter, RateLimiter } from '../../src/api/rate-limit.js';
import { FakeClock, flush } from '../support/clock.js';

function limiter(time: FakeClock, perMinute: number, burst: number, extra: { defaultPauseMs?: number; maxPauseMs?: number } = {}) {
  return new RateLimiter({ perMinute, burst, clock: time, sleep: time.sleep, headroom: 0, arrivalSlackMs: 0, ...extra });
}

/** Starts n acquisitions and records the order and fake-monotonic time at which each is granted. */
function race(l: RateLimiter, time: FakeClock, n: number, label = '') {
  const granted: Array<{ id: string; at: number }> = [];
  const all = Array.from({ length: n }, (_, i) =>
    l.acquire().then(() => {
      granted.push({ id: `${label}${i}`, at: time.mono });
    }),
  );
  return { granted, all: Promise.all(all) };
}

describe('RateLimiter', () => {
  it('lets a burst go at once, then refills at the sustained rate', async () => {
    const time = new FakeClock();
    const l = limiter(time, 60, 5); // one token a second
    const { granted } = race(l, time, 8);
    await flush();
    expect(granted).toHaveLength(5);
    expect(l.waits).toBe(3);
    await time.elapse(999);
    expect(granted).toHaveLength(5);
    await time.elapse(1);
    expect(granted).toHaveLength(6);
    await time.elapse(2_000);
    expect(granted).toHaveLength(8);
    expect(granted.slice(5).map((g) => g.at - 1_000)).toEqual([1_000, 2_000, 3_000]);
    expect(l.waitedMs).toBe(1_000 + 2_000 + 3_000);
  });

  it('serves waiters first come, first served', async () => {
    const time = new FakeClock();
    const l = limiter(time, 600, 1); // a token every 100 ms
    const a = race(l, time, 3, 'a');
    await flush();
    const b = race(l, time, 3, 'b');
    await time.elapse(1_000);
    await Promise.all([a.all, b.all]);
    const order = [...a.granted, ...b.granted].sort((x, y) => x.at - y.at).map((g) => g.id);
    expect(order).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'b2']);
  });

  it('never exceeds burst + rate × elapsed over a long run', async () => {
    const time = new FakeClock();
    const l = limiter(time, 500, 100);
    const { granted } = race(l, time, 400);
    await flush();
    expect(granted).toHaveLength(100);
    await time.elapse(30_000); // 250 more tokens at 500/min
    expect(granted).toHaveLength(350);
    await time.elapse(6_000);
    expect(granted).toHaveLength(400);
  });

  it('does not bank more than the burst while idle', async () => {
    const time = new FakeClock();
    const l = limiter(time, 60, 3);
    await time.elapse(60_000);
    const { granted } = race(l, time, 5);
    await flush();
    expect(granted).toHaveLength(3);
  });

  it('holds every request for a Retry-After pause, then restarts slowly', async () => {
    const time = new FakeClock();
    const l = limiter(time, 600, 10);
    l.pauseFor(5_000);
    const { granted } = race(l, time, 3);
    await time.elapse(4_999);
    expect(granted).toHaveLength(0);
    await time.elapse(1);
    expect(granted).toHaveLength(1); // one token at the pause's end, not the burst
    await time.elapse(99);
    expect(granted).toHaveLength(1);
    await time.elapse(1_000);
    expect(granted).toHaveLength(3);
    expect(l.pauses).toBe(1);
  });

  it('uses the default pause when the server gives no Retry-After, and caps absurd ones', async () => {
    const time = new FakeClock();
    const l = limiter(time, 0, 1, { defaultPauseMs: 2_000, maxPauseMs: 60_000 });
    l.pauseFor();
    const { granted } = race(l, time, 1);
    await time.elapse(1_999);
    expect(granted).toHaveLength(0);
    await time.elapse(1);
    expect(granted).toHaveLength(1);

    l.pauseFor(86_400_000);
    const later = race(l, time, 1);
    await time.elapse(60_000);
    expect(later.granted).toHaveLength(1);
  });

  it('is unlimited with perMinute 0 or Infinity', async () => {
    for (const perMinute of [0, Number.POSITIVE_INFINITY]) {
      const time = new FakeClock();
      const l = limiter(time, perMinute, 1);
      const { granted } = race(l, time, 1_000);
      await flush();
      expect(granted).toHaveLength(1_000);
      expect(l.waits).toBe(0);
      expect(time.pendingTimers).toBe(0);
    }
  });

  it('an extended pause during a wait is honoured', async () => {
    const time = new FakeClock();
    const l = limiter(time, 60, 1);
    await l.acquire();
    const { granted } = race(l, time, 1);
    await time.elapse(500);
    l.pauseFor(3_000); // the token due at +1000 now waits until +3500
    await time.elapse(2_999);
    expect(granted).toHaveLength(0);
    await time.elapse(1);
    expect(granted).toHaveLength(1);
  });
});

describe('RateLimiter wake-ups', () => {
  it('wakes a waiting queue at most once a second, not once per token, and still spends the whole rate', async () => {
    const time = new FakeClock();
    const l = limiter(time, 2_500, 100); // a token every 24 ms
    const { granted } = race(l, time, 600);
    await flush();
    expect(granted).toHaveLength(100);
    await time.elapse(10_000);
    // burst + rate × 10 s, less at most the tokens refilled since the last wake-up (a second's)
    expect(granted.length).toBeGreaterThanOrEqual(100 + 416 - 42);
    expect(granted.length).toBeLessThanOrEqual(100 + 417);
    expect(time.sleeps.every((ms) => ms >= 1_000)).toBe(true);
    expect(time.sleeps.length).toBeLessThanOrEqual(11);
  });

  it('wakes sooner when the bucket refills whole sooner, so no token is lost to the cap', async () => {
    const time = new FakeClock();
    const l = limiter(time, 6_000, 2); // a token every 10 ms, a bucket of two
    const { granted } = race(l, time, 200);
    await flush();
    await time.elapse(1_000);
    expect(granted.length).toBeGreaterThanOrEqual(101); // the bucket of two, then 100 a second
    expect(Math.max(...time.sleeps)).toBeLessThanOrEqual(20);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2025, 5, 1, 12, 0, 0);
  it('reads delay-seconds and HTTP-dates', () => {
    expect(parseRetryAfter('7', now)).toBe(7_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Sun, 01 Jun 2025 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 01 Jun 2025 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(['3', '9'], now)).toBe(3_000);
  });
  it('returns undefined when absent or unreadable', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
  });
});
