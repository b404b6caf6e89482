import { describe, expect, it } from 'vitest';
import { PollScheduler, Semaphore, spreadOffsets } from '../../src/scheduler/scheduler.js';
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
  it('handles no wallets', () => {
    expect(spreadOffsets(0, 60_000, 1000, () => 0.5)).toEqual([]);
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
