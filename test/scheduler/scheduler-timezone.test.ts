// schedule.timezone reaches node-cron (issue 13): the task fires at the zone's wall-clock time, and
// the daemon's own next-run arithmetic says the same instants.
import { describe, expect, it } from 'vitest';
import { nextCronTimes } from '../../src/config/cron.js';
import { systemClock } from '../../src/domain.js';
import { silentLogger } from '../../src/log/logger.js';
import { PollScheduler } from '../../src/scheduler/scheduler.js';

function scheduler(timezone: string | undefined): PollScheduler {
  return new PollScheduler({
    cron: '0 9 * * *',
    timezone,
    jitterMs: 0,
    wallets: () => [],
    runWallet: () => Promise.resolve(),
    clock: systemClock,
    logger: silentLogger(),
    concurrency: 1,
  });
}

describe('PollScheduler with schedule.timezone', () => {
  it.each(['Asia/Tokyo', 'America/New_York', 'UTC'])('runs 09:00 in %s', async (zone) => {
    const s = scheduler(zone);
    s.start();
    try {
      const next = s.nextRun();
      expect(next).toBeDefined();
      const wall = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(next);
      expect(wall).toBe('09:00');
      // The same instant nextCronTimes gives for the config (what check prints, what staleness uses).
      const [ours] = nextCronTimes('0 9 * * *', new Date(), 1, { timezone: zone });
      expect(ours?.toISOString()).toBe(next?.toISOString());
    } finally {
      await s.stop(0);
    }
  });
});
