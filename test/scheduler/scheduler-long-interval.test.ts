// A tick's polls are spread over the first 80% of its interval, each on a timer (scheduler.ts
// tick). Node's setTimeout takes at most 2^31 - 1 ms (24.8 days): a longer delay fires after 1 ms
// (TimeoutOverflowWarning). So under a schedule whose interval is over 31 days (bimonthly,
// quarterly, yearly, and the first tick at start-up before any of them), every poll spread past
// 24.8 days goes at once, at the tick's start: the fleet is polled in one burst, not spread.
// Driven on real timers (fake ones need not share Node's limit), on a clock set just after a
// quarterly fire time.
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock, WalletConfig } from '../../src/domain.js';
import { silentLogger } from '../../src/log/logger.js';
import { PollScheduler } from '../../src/scheduler/scheduler.js';

const wallet = (name: string): WalletConfig => ({ name, address: name, key: { env: 'X' }, rules: [] });

describe('a tick of an interval longer than setTimeout takes', () => {
  let scheduler: PollScheduler | undefined;
  afterEach(async () => {
    await scheduler?.stop(1000);
  });

  it('spreads its polls over the interval, not all at the tick', async () => {
    const polled: string[] = [];
    // Just after a quarterly fire time: the interval is 90 days, the two polls 0 and 36 days in.
    const shift = Date.parse('2027-04-01T00:00:01Z') - Date.now();
    const clock: Clock = { now: () => Date.now() + shift, monotonic: () => performance.now() };
    const s = (scheduler = new PollScheduler({
      cron: '0 0 1 1,4,7,10 *',
      timezone: 'UTC',
      jitterMs: 0,
      wallets: () => [wallet('a'), wallet('b')],
      runWallet: (w) => {
        polled.push(w.name);
        return Promise.resolve();
      },
      clock,
      logger: silentLogger(),
      concurrency: 4,
    }));
    s.start();
    expect(s.nextRun()?.toISOString()).toBe('2027-07-01T00:00:00.000Z');
    s.tick();
    await new Promise((r) => setTimeout(r, 100));
    expect(polled).toEqual(['a']);
  });
});
