// The limiter keeps a share of the budget unused, so a server enforcing exactly the published
// budget never sees us over it when our requests reach it a few ms early or late.
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { TokenBucket } from '../../src/sandbox/stats.js';
import { FakeClock, flush } from '../support/clock.js';

describe('RateLimiter headroom', () => {
  it('by default spends 98% of the rate, and of the burst less what that rate refills in 0.5 s', async () => {
    const time = new FakeClock();
    const l = new RateLimiter({ perMinute: 600, burst: 10, clock: time, sleep: time.sleep });
    const granted: number[] = [];
    for (let i = 0; i < 200; i++) void l.acquire().then(() => granted.push(time.mono));
    await flush();
    expect(granted).toHaveLength(4); // 9.8 tokens less 0.5 s at 9.8/s: 4.9, four at once
    await time.elapse(10_000);
    // 0.9 + 98 tokens in 10 s at 9.8/s: 98 more, not 100.
    expect(granted).toHaveLength(4 + 98);
  });

  type Margins = { headroom?: number; arrivalSlackMs?: number };

  /** Grant times of n acquisitions, then the 429s a same-size server bucket gives when each arrives 0-20 ms later. */
  async function refusedBySameSizeServer(margins: Margins, n: number): Promise<number> {
    const time = new FakeClock();
    const l = new RateLimiter({ perMinute: 500, burst: 10, clock: time, sleep: time.sleep, ...margins });
    const granted: number[] = [];
    for (let i = 0; i < n; i++) void l.acquire().then(() => granted.push(time.mono));
    await time.elapse(100_000);
    expect(granted).toHaveLength(n);
    // The first request is the slowest to arrive (a new connection), the rest vary by up to 20 ms.
    const arrivals = granted.map((t, i) => t + (i === 0 ? 20 : (i * 7919) % 20)).sort((a, b) => a - b);
    let at = 0;
    const server = new TokenBucket({ perMinute: 500, burst: 10 }, { now: () => at, monotonic: () => at });
    return arrivals.filter((a) => {
      at = a;
      return !server.take().ok;
    }).length;
  }

  it('never draws a 429 from a server bucket of the same size, whatever the arrival jitter', async () => {
    expect(await refusedBySameSizeServer({}, 600)).toBe(0);
  });

  it('without headroom, the same jitter does draw 429s', async () => {
    expect(await refusedBySameSizeServer({ headroom: 0, arrivalSlackMs: 0 }, 600)).toBeGreaterThan(0);
  });

  /**
   * The service's budget (2,500 a minute, bursts of 100), both buckets full: everything we let go
   * in the first `lateMs` reaches the server at `lateMs` (a busy server, a queue of ours), the rest
   * as it is let go. Returns the server's 429s.
   */
  async function refusedAfterLateBurst(margins: Margins, lateMs: number): Promise<number> {
    const time = new FakeClock();
    const l = new RateLimiter({ perMinute: 2500, burst: 100, clock: time, sleep: time.sleep, ...margins });
    const granted: number[] = [];
    const start = time.mono;
    for (let i = 0; i < 400; i++) void l.acquire().then(() => granted.push(time.mono));
    await time.elapse(20_000);
    expect(granted).toHaveLength(400);
    let at = start;
    const server = new TokenBucket({ perMinute: 2500, burst: 100 }, { now: () => at, monotonic: () => at });
    return granted.filter((g) => {
      at = Math.max(g, start + lateMs);
      return !server.take().ok;
    }).length;
  }

  it('a burst of ours that reaches a full server bucket up to 0.5 s late draws no 429', async () => {
    expect(await refusedAfterLateBurst({}, 500)).toBe(0);
    // With the 2% headroom alone, 0.2 s late is enough for 429s (the first seconds of a `run` on a busy machine).
    expect(await refusedAfterLateBurst({ arrivalSlackMs: 0 }, 200)).toBeGreaterThan(0);
  });
});
