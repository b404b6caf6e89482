import { describe, expect, it, vi } from 'vitest';
import { PollScheduler, Semaphore, pollWindowMs, spreadOffsets } from '../../src/scheduler/scheduler.js';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock, type WalletConfig } from '../../src/domain.js';

describe('spreadOffsets', () => {
  it('spreads wallets evenly over the window, in order', () => {
    expect(spreadOffsets(4, 40_000, 0, () => 0)).toEqual([0, 10_000, 20_000, 30_000]);
  });
  it('adds jitter below jitterMs', () => {
    const offsets = spreadOffsets(3, 30_000, 1_000, () => 0.999);
    expect(offsets).toEqual([999, 10_999, 20_999]);
  });
  it('wraps jitter at the window\'s end, so the window\'s first seconds get their share of the polls', () => {
    expect(spreadOffsets(2, 10_000, 6_000, () => 0.9)).toEqual([5_400, 400]);
    // A fleet that fills the budget: 2,450 polls over 48 s with 10 s of jitter, as a minute's tick.
    const seed = 7;
    let a = seed;
    const random = () => ((a = (Math.imul(a, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
    const offsets = spreadOffsets(2_450, 48_000, 10_000, random);
    const firstFiveSeconds = offsets.filter((o) => o < 5_000).length;
    expect(Math.max(...offsets), `seed ${seed}`).toBeLessThan(48_000);
    expect(firstFiveSeconds, `seed ${seed}`).toBeGreaterThan(0.9 * ((2_450 * 5) / 48));
  });
  it('keeps a poll with a floor at the window\'s end rather than wrap it to before its floor', () => {
    // The second poll, slotted after its wallet's crossing at 6 s: wrapped to 0.4 s it would come
    // before it. A floor the wrap clears (or none) wraps as before.
    expect(spreadOffsets(2, 10_000, 6_000, () => 0.9, (i) => (i === 1 ? 6_000 : undefined))).toEqual([5_400, 10_000]);
    expect(spreadOffsets(2, 10_000, 6_000, () => 0.9, (i) => (i === 1 ? 400 : undefined))).toEqual([5_400, 400]);
    expect(spreadOffsets(3, 30_000, 1_000, () => 0.999, () => 25_000)).toEqual([999, 10_999, 20_999]);
  });
  it('handles no wallets', () => {
    expect(spreadOffsets(0, 60_000, 1000, () => 0.5)).toEqual([]);
  });
});

describe('pollWindowMs', () => {
  it('spreads a tick within its budget over the first 80% of the interval, or all but the jitter', () => {
    expect(pollWindowMs(60_000, 0, 100, 2_450)).toBe(48_000);
    expect(pollWindowMs(60_000, 20_000, 100, 2_450)).toBe(40_000);
    expect(pollWindowMs(60_000, 0, 100, undefined)).toBe(48_000);
    expect(pollWindowMs(60_000, 0, 100, Number.POSITIVE_INFINITY)).toBe(48_000);
  });
  it('spreads a tick that spends the budget at the pace the budget is granted, up to 98% of the interval', () => {
    expect(pollWindowMs(60_000, 10_000, 2_450, 2_450)).toBe(58_800);
    expect(pollWindowMs(60_000, 10_000, 2_205, 2_450)).toBeCloseTo(54_000, 6);
    expect(pollWindowMs(60_000, 10_000, 9_000, 2_450)).toBe(58_800);
    expect(pollWindowMs(20_000, 10_000, 1_000, 816)).toBe(19_600);
  });
});

describe('Semaphore', () => {
  it('never runs more than its limit at once', async () => {
    const sem = new Semaphore(2);
    let active = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const jobs = Array.from({ length: 5 }, () =>
      sem.run(async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise<void>((r) => gates.push(r));
        active--;
      }),
    );
    while (gates.length < 2) await new Promise((r) => setImmediate(r));
    expect(peak).toBe(2);
    while (gates.length > 0 || active > 0) {
      gates.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(jobs);
    expect(peak).toBe(2);
  });
});

describe('PollScheduler', () => {
  const wallet = (name: string): WalletConfig => ({ name, address: name, key: { env: 'X' }, rules: [] });

  it('never runs two turns of one wallet at once: a tick during a slow turn is skipped', async () => {
    const started: string[] = [];
    let release: () => void = () => {};
    const scheduler = new PollScheduler({
      cron: '0 0 1 1 *',
      jitterMs: 0,
      wallets: () => [wallet('a')],
      runWallet: async (w) => {
        started.push(w.name);
        await new Promise<void>((r) => (release = r));
      },
      clock: systemClock,
      logger: silentLogger(),
      concurrency: 4,
    });
    scheduler.tick();
    await new Promise((r) => setTimeout(r, 20));
    scheduler.tick();
    await new Promise((r) => setTimeout(r, 20));
    expect(started).toEqual(['a']);
    release();
    expect(await scheduler.stop(1000)).toBe(true);
  });

  it('starts the wallets due in the same second on one timer, not a timer per wallet', async () => {
    const polled: string[] = [];
    const wallets = Array.from({ length: 1000 }, (_, i) => wallet(`w${i}`));
    const scheduler = new PollScheduler({
      cron: '0 0 1 1 *', // not started: the tick's interval is a minute, its window 48 s
      jitterMs: 0,
      wallets: () => wallets,
      runWallet: (w) => {
        polled.push(w.name);
        return Promise.resolve();
      },
      clock: systemClock,
      logger: silentLogger(),
      concurrency: 16,
    });
    // Fake timers: on a loaded machine a real 250 ms sleep let the 300 ms timer go too.
    vi.useFakeTimers();
    try {
      // The fake clock's own count of pending timers, not a spy on globalThis.setTimeout: the
      // spy's restore at the file's end would put back the fake setTimeout it wrapped, and the
      // files that share this worker (vitest.config.ts) would find their timers never firing.
      scheduler.tick();
      expect(vi.getTimerCount()).toBeLessThanOrEqual(49);
      // A wallet every 48 ms: the one due at 0 goes at once, the next twenty wait for the second.
      await vi.advanceTimersByTimeAsync(950);
      expect(polled).toEqual(['w0']);
      await vi.advanceTimersByTimeAsync(100);
      expect(await scheduler.stop(1000)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
    expect(polled).toEqual(Array.from({ length: 21 }, (_, i) => `w${i}`));
  });

  it('starts a tick that spends the budget no faster than the budget is granted', async () => {
    let polled = 0;
    const wallets = Array.from({ length: 2_450 }, (_, i) => wallet(`w${i}`));
    const scheduler = new PollScheduler({
      cron: '0 0 1 1 *', // not started: the tick's interval is a minute
      jitterMs: 10_000,
      wallets: () => wallets,
      runWallet: () => {
        polled++;
        return Promise.resolve();
      },
      clock: systemClock,
      logger: silentLogger(),
      concurrency: 16,
      budget: () => 2_450, // 2,500 a minute less the limiter's headroom (pollBudget)
      random: () => 0.5,
    });
    vi.useFakeTimers();
    try {
      scheduler.tick();
      // Spread over 48 s, all 2,450 had started by 48 s and a fifth of them waited for tokens.
      await vi.advanceTimersByTimeAsync(30_000);
      expect(polled).toBeLessThanOrEqual(Math.ceil((2_450 * 31) / 58.8));
      expect(polled).toBeGreaterThanOrEqual(Math.floor((2_450 * 29) / 58.8));
      await vi.advanceTimersByTimeAsync(18_000);
      expect(polled).toBeLessThan(2_450 - 300);
      await vi.advanceTimersByTimeAsync(11_000);
      expect(polled).toBe(2_450);
      expect(await scheduler.stop(1000)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('stop() waits for the turn in flight and reports whether it finished in time', async () => {
    let release: () => void = () => {};
    const scheduler = new PollScheduler({
      cron: '0 0 1 1 *',
      jitterMs: 0,
      wallets: () => [wallet('a')],
      runWallet: () => new Promise<void>((r) => (release = r)),
      clock: systemClock,
      logger: silentLogger(),
      concurrency: 1,
    });
    scheduler.tick();
    await new Promise((r) => setTimeout(r, 20));
    expect(await scheduler.stop(30)).toBe(false);
    release();
  });
});
