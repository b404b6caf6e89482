// schedule.timezone reaches node-cron (issue 13): the task fires at the zone's wall-clock time, and
// the daemon's own next-run arithmetic says the same instants.
import { describe, expect, it, vi } from 'vitest';
import { nextCronTimes } from '../../src/config/cron.js';
import { systemClock, type WalletConfig } from '../../src/domain.js';
import { silentLogger } from '../../src/log/logger.js';
import { PollInterval, PollScheduler } from '../../src/scheduler/scheduler.js';
import { prng } from '../support/prng.js';

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

describe('PollInterval', () => {
  it('answers as the gap between the next two poll times, however the clock walks (steps back too) and the schedule changes', () => {
    const seed = Number(process.env.INTERVAL_SEED ?? 26);
    const random = prng(seed);
    const schedules = [
      { poll: '0 9,17 * * *', timezone: 'Europe/Berlin' },
      { poll: '*/20 * * * * *', timezone: undefined },
      { poll: '30 1-3 * * 0', timezone: 'America/New_York' },
    ];
    const interval = new PollInterval();
    let schedule = schedules[0]!;
    let now = Date.UTC(2026, 2, 27, 12);
    for (let i = 0; i < 400; i++) {
      if (random() < 0.05) schedule = { ...schedules[Math.floor(random() * schedules.length)]! };
      now += random() < 0.05 ? -Math.floor(random() * 6 * 3_600_000) : Math.floor(random() * 3 * 3_600_000);
      const [x, y] = nextCronTimes(schedule.poll, new Date(now), 2, { timezone: schedule.timezone });
      expect(interval.ms(schedule, now), `seed ${seed}, step ${i}`).toBe(y!.getTime() - x!.getTime());
    }
  });
});

/** The minutes (UTC) a one-wallet scheduler polls at, from `start` for `forMs`, on fake timers. */
async function pollMinutes(cron: string, timezone: string, start: string, forMs: number): Promise<string[]> {
  vi.useFakeTimers({ now: new Date(start) });
  const ticks: string[] = [];
  const s = new PollScheduler({
    cron,
    timezone,
    jitterMs: 0,
    wallets: () => [{ name: 'w', address: 'A' } as WalletConfig],
    runWallet: () => {
      ticks.push(new Date().toISOString().slice(0, 16));
      return Promise.resolve();
    },
    clock: systemClock,
    logger: silentLogger(),
    concurrency: 1,
  });
  try {
    s.start();
    await vi.advanceTimersByTimeAsync(forMs);
    await s.stop(0);
  } finally {
    vi.useRealTimers();
  }
  return ticks;
}

describe('PollScheduler when the clocks go back (months of running review)', () => {
  it('ticks every minute through the repeated hour: 70 ticks in 70 minutes (node-cron\'s runner skipped an hour)', async () => {
    const ticks = await pollMinutes('*/1 * * * *', 'Europe/Berlin', '2026-10-24T23:55:30Z', 70 * 60_000);
    expect(ticks.length).toBe(70);
    expect(ticks.at(0)).toBe('2026-10-24T23:56');
    expect(new Set(ticks).size).toBe(70);
    expect(ticks.at(-1)).toBe('2026-10-25T01:05');
  });
});

describe('PollScheduler when the clocks go forward (helper 38)', () => {
  it('a daily 02:30 in Europe/Berlin polls on the day 02:30 does not exist, once, at 03:00 local (node-cron skipped the day: 48 h between polls)', async () => {
    // Two days and a bit: the scheduler wakes every minute, so no longer than needed.
    const ticks = await pollMinutes('30 2 * * *', 'Europe/Berlin', '2027-03-27T00:00:00Z', 49 * 3_600_000);
    expect(ticks).toEqual(['2027-03-27T01:30', '2027-03-28T01:00', '2027-03-29T00:30']);
  });
});
