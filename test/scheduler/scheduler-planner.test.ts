import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Clock, WalletConfig } from '../../src/domain.js';
import { silentLogger } from '../../src/log/logger.js';
import type { BusyWallets, PollPlanner } from '../../src/scheduler/planner.js';
import { PollScheduler, Semaphore } from '../../src/scheduler/scheduler.js';

const wallet = (name: string): WalletConfig => ({ name, address: name, key: { env: 'X' }, rules: [] });
const fleet = ['a', 'b', 'c', 'd', 'e'].map(wallet);
const clock: Clock = { now: () => Date.now(), monotonic: () => 5_000 + Date.now() };

/**
 * A planner that records what it was asked and picks the first `budget` wallets it is offered: the
 * list less the wallets the scheduler says are busy.
 */
class RecordingPlanner implements PollPlanner {
  calls: Array<{ offered: string[]; budget: number; now: number; intervalMs: number; windowMs: number | undefined }> = [];
  choose(wallets: readonly WalletConfig[], budget: number, now: number, intervalMs: number, busy?: BusyWallets, windowMs?: number): WalletConfig[] {
    const offered = wallets.filter((w) => busy?.has(w.name) !== true);
    this.calls.push({ offered: offered.map((w) => w.name), budget, now, intervalMs, windowMs });
    return offered.slice(0, budget);
  }
  observe(): void {}
  revisitIntervals(): number {
    return 1;
  }
}

/** A scheduler of the five wallets with this planner, recording each poll's wallet and ms from the start. */
function pollingWith(planner: PollPlanner, opts: Partial<ConstructorParameters<typeof PollScheduler>[0]>) {
  const polled: Array<[string, number]> = [];
  const scheduler = new PollScheduler({
    cron: '0 0 1 1 *',
    jitterMs: 0,
    wallets: () => fleet,
    runWallet: (w) => {
      polled.push([w.name, Date.now() - 1_000_000]);
      return Promise.resolve();
    },
    clock,
    logger: silentLogger(),
    concurrency: 4,
    planner,
    ...opts,
  });
  return { scheduler, polled };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('PollScheduler with a planner', () => {
  it('polls only what the planner chose, with the budget for the interval, on the monotonic clock', async () => {
    const planner = new RecordingPlanner();
    const { scheduler, polled } = pollingWith(planner, { budget: (intervalMs) => intervalMs / 30_000 });
    scheduler.tick();
    await vi.advanceTimersByTimeAsync(60_000);
    // Two polls for a budget of two are spread at the budget's pace (98% of the interval), and the
    // planner is told that window, so that it slots its picks by the times they will have.
    expect(polled).toEqual([
      ['a', 0],
      ['b', 30_000],
    ]);
    expect(planner.calls).toEqual([{ offered: ['a', 'b', 'c', 'd', 'e'], budget: 2, now: 1_005_000, intervalMs: 60_000, windowMs: 58_800 }]);
    expect(await scheduler.stop(100)).toBe(true);
  });

  it('offers no wallet still busy from an earlier tick, and counts busy turns against the budget', async () => {
    const release: Array<() => void> = [];
    const planner = new RecordingPlanner();
    const scheduler = new PollScheduler({
      cron: '0 0 1 1 *',
      jitterMs: 0,
      wallets: () => fleet,
      runWallet: (w) => (w.name === 'a' ? new Promise<void>((r) => release.push(r)) : Promise.resolve()),
      clock,
      logger: silentLogger(),
      concurrency: 4,
      planner,
      budget: () => 3,
    });
    scheduler.tick();
    await vi.advanceTimersByTimeAsync(60_000);
    scheduler.tick();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(planner.calls[1]).toMatchObject({ offered: ['b', 'c', 'd', 'e'], budget: 2 });
    release.forEach((r) => r());
    expect(await scheduler.stop(100)).toBe(true);
  });

  it('does not let jitter wrap a wallet slotted after its crossing to before it', async () => {
    // e is slotted last, its wallet due to cross 50 s into the tick; its jitter (0.99 of the 12 s
    // allowed) passes the 58.8 s window's end. Wrapped, it was polled in the tick's first second.
    const planner = new (class extends RecordingPlanner {
      notBefore(w: WalletConfig): number | undefined {
        return w.name === 'e' ? (this.calls.at(-1)?.now ?? 0) + 50_000 : undefined;
      }
    })();
    const { scheduler, polled } = pollingWith(planner, { jitterMs: 40_000, budget: () => 5, random: () => 0.99 });
    scheduler.tick();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(polled).toContainEqual(['e', 59_000]);
    expect(polled.find(([name]) => name === 'a')).toEqual(['a', 12_000]);
    expect(await scheduler.stop(100)).toBe(true);
  });

  it('without a planner polls every wallet every tick, as before', async () => {
    const polled: string[] = [];
    const scheduler = new PollScheduler({
      cron: '0 0 1 1 *',
      jitterMs: 0,
      wallets: () => fleet,
      runWallet: (w) => {
        polled.push(w.name);
        return Promise.resolve();
      },
      clock,
      logger: silentLogger(),
      concurrency: 4,
      budget: () => 1,
    });
    scheduler.tick();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(polled).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await scheduler.stop(100)).toBe(true);
  });
});

describe('Semaphore', () => {
  it('admits waiters in arrival order, also past its queue compaction', async () => {
    vi.useRealTimers();
    const sem = new Semaphore(3);
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 3_000 }, (_, i) =>
        sem.run(async () => {
          order.push(i);
          await Promise.resolve();
        }),
      ),
    );
    expect(order).toEqual(Array.from({ length: 3_000 }, (_, i) => i));
    expect(sem.waiting).toBe(0);
  });
});
