import { createTask, getTasks } from 'node-cron';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cronProblem, nextCronTimes } from '../../src/config/cron.js';

const iso = (ds: Date[]) => ds.map((d) => d.toISOString());

describe('nextCronTimes (UTC)', () => {
  const cases: Array<{ expr: string; from: string; next: string[] }> = [
    {
      expr: '*/1 * * * *',
      from: '2025-01-01T00:00:30.000Z',
      next: ['2025-01-01T00:01:00.000Z', '2025-01-01T00:02:00.000Z', '2025-01-01T00:03:00.000Z'],
    },
    {
      expr: '* * * * *',
      from: '2025-01-01T00:01:00.000Z', // strictly after: a fire time is not its own next
      next: ['2025-01-01T00:02:00.000Z', '2025-01-01T00:03:00.000Z', '2025-01-01T00:04:00.000Z'],
    },
    {
      expr: '* * * * *',
      from: '2025-01-01T00:00:59.999Z',
      next: ['2025-01-01T00:01:00.000Z', '2025-01-01T00:02:00.000Z', '2025-01-01T00:03:00.000Z'],
    },
    {
      expr: '*/15 * * * * *',
      from: '2025-01-01T23:59:50.000Z',
      next: ['2025-01-02T00:00:00.000Z', '2025-01-02T00:00:15.000Z', '2025-01-02T00:00:30.000Z'],
    },
    {
      expr: '0 0 * * 1',
      from: '2025-01-01T12:00:00.000Z', // a Wednesday
      next: ['2025-01-06T00:00:00.000Z', '2025-01-13T00:00:00.000Z', '2025-01-20T00:00:00.000Z'],
    },
    {
      expr: '0 9 * * MON-FRI',
      from: '2025-01-03T10:00:00.000Z', // a Friday, after nine
      next: ['2025-01-06T09:00:00.000Z', '2025-01-07T09:00:00.000Z', '2025-01-08T09:00:00.000Z'],
    },
    {
      expr: '0 0 29 2 *',
      from: '2025-01-01T00:00:00.000Z',
      next: ['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z', '2036-02-29T00:00:00.000Z'],
    },
    {
      expr: '0 0 1 1 *',
      from: '2025-06-01T00:00:00.000Z',
      next: ['2026-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', '2028-01-01T00:00:00.000Z'],
    },
    {
      expr: '0 12 L * *',
      from: '2025-01-01T00:00:00.000Z',
      next: ['2025-01-31T12:00:00.000Z', '2025-02-28T12:00:00.000Z', '2025-03-31T12:00:00.000Z'],
    },
    {
      expr: '0 0 * * 5#2',
      from: '2025-01-01T00:00:00.000Z',
      next: ['2025-01-10T00:00:00.000Z', '2025-02-14T00:00:00.000Z', '2025-03-14T00:00:00.000Z'],
    },
    {
      expr: '0 0 15W * *',
      from: '2025-02-01T00:00:00.000Z', // 15 Feb and 15 Mar 2025 are Saturdays
      next: ['2025-02-14T00:00:00.000Z', '2025-03-14T00:00:00.000Z', '2025-04-15T00:00:00.000Z'],
    },
    {
      // node-cron requires day of month AND day of week: Friday the 13th
      expr: '0 0 13 * 5',
      from: '2025-01-01T00:00:00.000Z',
      next: ['2025-06-13T00:00:00.000Z', '2026-02-13T00:00:00.000Z', '2026-03-13T00:00:00.000Z'],
    },
    {
      expr: '@hourly',
      from: '2025-01-01T00:30:00.000Z',
      next: ['2025-01-01T01:00:00.000Z', '2025-01-01T02:00:00.000Z', '2025-01-01T03:00:00.000Z'],
    },
    { expr: '0 0 L-30 2 *', from: '2025-01-01T00:00:00.000Z', next: [] },
  ];

  it.each(cases)('$expr from $from', ({ expr, from, next }) => {
    expect(iso(nextCronTimes(expr, new Date(from), 3, { utc: true }))).toEqual(next);
  });

  it('throws on an expression node-cron refuses, and says why', () => {
    expect(() => nextCronTimes('61 * * * *', new Date(0), 1)).toThrowError('"61" is not a valid minute');
    expect(cronProblem('61 * * * *')).toBe('"61" is not a valid minute');
    expect(cronProblem('* * * *')).toBe('expected 5 or 6 fields but got 4');
    expect(cronProblem('*/5 * * * *')).toBeUndefined();
  });
});

describe('nextCronTimes when the clocks change (months of running review)', () => {
  const times = (expr: string, from: string, n: number, timezone: string) => iso(nextCronTimes(expr, new Date(from), n, { timezone }));

  it('going back: every minute of both passes through the repeated hour fires (node-cron alone skipped the first)', () => {
    // Europe/Berlin 2026-10-25: 03:00 CEST (01:00 UTC) becomes 02:00 CET.
    const minutes = times('*/1 * * * *', '2026-10-24T23:58:00Z', 125, 'Europe/Berlin');
    for (let i = 1; i < minutes.length; i++) expect(Date.parse(minutes[i]!) - Date.parse(minutes[i - 1]!), minutes[i]).toBe(60_000);
    expect(minutes[0]).toBe('2026-10-24T23:59:00.000Z');
    // From inside the first pass, the rest of it and then the second.
    expect(times('*/1 * * * *', '2026-10-25T00:58:00Z', 3, 'Europe/Berlin')).toEqual(['2026-10-25T00:59:00.000Z', '2026-10-25T01:00:00.000Z', '2026-10-25T01:01:00.000Z']);
    expect(times('*/15 * * * * *', '2026-10-25T00:59:50Z', 2, 'Europe/Berlin')).toEqual(['2026-10-25T01:00:00.000Z', '2026-10-25T01:00:15.000Z']);
    expect(times('0 * * * *', '2026-11-01T04:30:00Z', 3, 'America/New_York')).toEqual(['2026-11-01T05:00:00.000Z', '2026-11-01T06:00:00.000Z', '2026-11-01T07:00:00.000Z']);
    // An hourly schedule fires in both passes: that night has one hour more.
    expect(times('30 * * * *', '2026-10-24T23:00:00Z', 4, 'Europe/Berlin')).toEqual(['2026-10-24T23:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T01:30:00.000Z', '2026-10-25T02:30:00.000Z']);
  });

  it('going back: a fixed time of day that occurs twice fires once, at its first occurrence, as cron runs it', () => {
    // 02:30 is 00:30 UTC (CEST) and again 01:30 UTC (CET) on 2026-10-25.
    expect(times('30 2 * * *', '2026-10-24T12:00:00Z', 3, 'Europe/Berlin')).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z', '2026-10-27T01:30:00.000Z']);
    // From just after the first, and from inside the second pass before its 02:30: the next day's.
    expect(times('30 2 * * *', '2026-10-25T00:30:00Z', 1, 'Europe/Berlin')).toEqual(['2026-10-26T01:30:00.000Z']);
    expect(times('30 2 * * *', '2026-10-25T01:10:00Z', 1, 'Europe/Berlin')).toEqual(['2026-10-26T01:30:00.000Z']);
    // Two fixed times in the hour, from between them in the first pass: the second, then the next day.
    expect(times('0,45 2 * * *', '2026-10-25T00:10:00Z', 2, 'Europe/Berlin')).toEqual(['2026-10-25T00:45:00.000Z', '2026-10-26T01:00:00.000Z']);
  });

  it('going forward: a wildcard schedule goes on at its next time; the gap\'s own minutes are not made up', () => {
    expect(times('*/20 * * * *', '2027-03-28T00:30:00Z', 3, 'Europe/Berlin')).toEqual(['2027-03-28T00:40:00.000Z', '2027-03-28T01:00:00.000Z', '2027-03-28T01:20:00.000Z']);
    expect(times('5 * * * *', '2027-03-28T00:30:00Z', 2, 'Europe/Berlin')).toEqual(['2027-03-28T01:05:00.000Z', '2027-03-28T02:05:00.000Z']);
  });

  it('going forward: a time of day the clocks skip fires once, at the first instant after the gap (as Vixie cron and cronie; helper 38)', () => {
    // Europe/Berlin 2027-03-28: 02:00 CET (01:00 UTC) becomes 03:00 CEST; 02:30 does not exist that day.
    expect(times('30 2 * * *', '2027-03-27T12:00:00Z', 3, 'Europe/Berlin')).toEqual(['2027-03-28T01:00:00.000Z', '2027-03-29T00:30:00.000Z', '2027-03-30T00:30:00.000Z']);
    // Two skipped times of one schedule: still one fire, then the day goes on.
    expect(times('0,30 2,4 * * *', '2027-03-27T23:00:00Z', 3, 'Europe/Berlin')).toEqual(['2027-03-28T01:00:00.000Z', '2027-03-28T02:00:00.000Z', '2027-03-28T02:30:00.000Z']);
    // Seconds (six fields), in another zone: America/New_York, 2027-03-14 02:00 EST → 03:00 EDT.
    expect(times('15 30 2 * * *', '2027-03-13T12:00:00Z', 2, 'America/New_York')).toEqual(['2027-03-14T07:00:00.000Z', '2027-03-15T06:30:15.000Z']);
    // A time outside the gap is untouched; a day that skips nothing of it too.
    expect(times('30 1 * * *', '2027-03-27T12:00:00Z', 2, 'Europe/Berlin')).toEqual(['2027-03-28T00:30:00.000Z', '2027-03-28T23:30:00.000Z']);
    // From inside the gap's instant itself nothing is given twice.
    expect(times('30 2 * * *', '2027-03-28T01:00:00Z', 1, 'Europe/Berlin')).toEqual(['2027-03-29T00:30:00.000Z']);
  });

  it('going forward with the clocks changed twice before the next fire time: the skipped time still fires once after the gap (helper 42)', () => {
    // Sundays of March at 02:30, Europe/Berlin: from 2026-03-22 node-cron's next is 2027-03-07 (the
    // 29th's 02:30 is skipped), with the same offset at both ends, the clocks having gone forward in
    // March and back in October. Before: 2027-03-07 first, the gap's Sunday never made up for.
    expect(times('30 2 * 3 0', '2026-03-22T12:00:00Z', 2, 'Europe/Berlin')).toEqual(['2026-03-29T01:00:00.000Z', '2027-03-07T01:30:00.000Z']);
    // A once-a-year time on the gap's day, from after its last fire: the next year's, nothing made up twice.
    expect(times('30 2 29 3 *', '2026-03-29T01:00:00Z', 1, 'Europe/Berlin')).toEqual(['2027-03-29T00:30:00.000Z']);
  });

  it('going forward by 30 minutes (Australia/Lord_Howe) and at midnight (America/Santiago): once after the gap, and the repeated half hour once', () => {
    // Lord Howe 2026-10-04: 02:00 (+10:30) becomes 02:30 (+11).
    expect(times('15 2 * * *', '2026-10-03T00:00:00Z', 2, 'Australia/Lord_Howe')).toEqual(['2026-10-03T15:30:00.000Z', '2026-10-04T15:15:00.000Z']);
    // Lord Howe 2026-04-05: 02:00 (+11) becomes 01:30 (+10:30); 01:45 is there twice, and fires at the first.
    expect(times('45 1 * * *', '2026-04-04T00:00:00Z', 3, 'Australia/Lord_Howe')).toEqual(['2026-04-04T14:45:00.000Z', '2026-04-05T15:15:00.000Z', '2026-04-06T15:15:00.000Z']);
    // Santiago 2026-09-06: 00:00 (-4) becomes 01:00 (-3); a daily midnight fires at 01:00.
    expect(times('0 0 * * *', '2026-09-05T12:00:00Z', 2, 'America/Santiago')).toEqual(['2026-09-06T04:00:00.000Z', '2026-09-07T03:00:00.000Z']);
  });
});

describe('nextCronTimes is node-cron\'s own answer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  // nextCronTimes asks the matcher behind node-cron's getNextRuns (not in its typings): if a
  // release moves it, this fails rather than the schedule drifting from what check prints.
  it.each([
    ['*/10 5,35 9-17 * * 1-5', '2025-06-06T16:59:59Z'],
    ['0 0 L * *', '2025-02-27T12:00:00Z'],
    ['0 30 9 10W * *', '2026-01-01T00:00:00Z'],
    ['0 0 0 * * 5L', '2025-12-01T00:00:00Z'],
    ['0 0 12 * 2 1#1', '2024-01-15T00:00:00Z'],
  ])('%s from %s: the same next five runs as getNextRuns for the same clock', (expr, now) => {
    vi.useFakeTimers({ now: new Date(now) });
    const task = createTask(expr, () => undefined);
    try {
      expect(iso(nextCronTimes(expr, new Date(now), 5))).toEqual(iso(task.getNextRuns(5)));
    } finally {
      void task.destroy();
    }
  });

  it('leaves no task behind in node-cron\'s registry', () => {
    const before = getTasks().size;
    nextCronTimes('*/5 * * * *', new Date(0), 3, { utc: true });
    expect(() => nextCronTimes('61 * * * *', new Date(0), 1)).toThrow();
    expect(getTasks().size).toBe(before);
  });
});
