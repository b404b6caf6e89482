// Issue 13: a step node-cron accepts but that does not divide its field ("*/70" minutes runs hourly)
// is refused with the reason; schedule.timezone names the zone the fields are read in, and the
// next-run arithmetic (check's summary, the daemon's interval) honours it as node-cron does.
import { createTask } from 'node-cron';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cronStepProblem, nextCronTimes, timezoneProblem } from '../../src/config/cron.js';
import { BASE, TempDir, edit, formatted } from './helpers.js';

const iso = (ds: Date[]) => ds.map((d) => d.toISOString());

describe('cron steps that do not divide their field', () => {
  it.each([
    ['*/70 * * * *', '"*/70" in the minute field: only 0 matches, so it fires once an hour, not every 70; use a step that divides 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)'],
    ['0 */7 * * *', '"*/7" in the hour field: 7 does not divide 24, so the gap across the end of the day is not 7; use a step that divides 24 (1, 2, 3, 4, 6, 8, 12)'],
    ['*/45 * * * * *', '"*/45" in the second field: 45 does not divide 60, so the gap across the end of the minute is not 45; use a step that divides 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)'],
    ['0 0 1 */5 *', '"*/5" in the month field: 5 does not divide 12, so the gap across the end of the year is not 5; use a step that divides 12 (1, 2, 3, 4, 6)'],
    ['10-20/30 * * * *', '"10-20/30" in the minute field: a step of 30 is longer than the range, so only 10 matches'],
    ['0 0,*/25 * * *', '"*/25" in the hour field: only 0 matches, so it fires once a day, not every 25; use a step that divides 24 (1, 2, 3, 4, 6, 8, 12)'],
  ])('%s is refused: %s', (expr, reason) => {
    expect(cronStepProblem(expr)).toBe(reason);
  });

  it.each(['*/1 * * * *', '*/15 * * * * *', '5/15 * * * *', '0 */6 * * *', '0 9-17/2 * * *', '0 0 * * */2', '0 0 */2 * *', '@hourly', '0 0 1 */3 *'])(
    '%s is sound (or not judged)',
    (expr) => {
      expect(cronStepProblem(expr)).toBeUndefined();
    },
  );

  it('check refuses schedule.poll "*/70 * * * *" at its place, with the reason', () => {
    const dir = new TempDir();
    try {
      dir.write('config.yaml', `${BASE}schedule:\n  poll: "*/70 * * * *"\n`);
      const r = formatted(dir.load('config.yaml'));
      expect(r.errors).toContain(
        'config.yaml:17:3 schedule.poll: "*/70" in the minute field: only 0 matches, so it fires once an hour, not every 70; use a step that divides 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)',
      );
    } finally {
      dir.remove();
    }
  });
});

describe('schedule.timezone', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is an IANA name, checked with Intl', () => {
    expect(timezoneProblem('Europe/Paris')).toBeUndefined();
    expect(timezoneProblem('UTC')).toBeUndefined();
    expect(timezoneProblem('Mars/Olympus')).toMatch(/"Mars\/Olympus" is not an IANA time zone/);
    const dir = new TempDir();
    try {
      dir.write('good.yaml', `${BASE}schedule:\n  poll: "0 9 * * *"\n  timezone: America/New_York\n`);
      expect(dir.load('good.yaml').config?.schedule.timezone).toBe('America/New_York');
      dir.write('bad.yaml', `${BASE}schedule:\n  timezone: Europe/Pariss\n`);
      expect(formatted(dir.load('bad.yaml')).errors).toEqual([
        'config.yaml:17:3 schedule.timezone: "Europe/Pariss" is not an IANA time zone this Node.js knows (e.g. UTC, Europe/Paris, America/New_York)'.replace('config.yaml', 'bad.yaml'),
      ]);
    } finally {
      dir.remove();
    }
  });

  it('moves the fire times with the zone, across daylight-saving changes', () => {
    const from = new Date('2025-03-29T12:00:00Z');
    expect(iso(nextCronTimes('0 9 * * *', from, 3, { timezone: 'Europe/Paris' }))).toEqual([
      '2025-03-30T07:00:00.000Z', // CEST from the 30th
      '2025-03-31T07:00:00.000Z',
      '2025-04-01T07:00:00.000Z',
    ]);
    // 02:30 does not exist in Paris on 30 March 2025: it fires once at the first instant after the
    // gap, 03:00 CEST, as Vixie cron does; it occurs twice on 26 October, and fires at the first
    // only, as cron does (node-cron's runner fired only the second: cron.ts nextMatch).
    expect(iso(nextCronTimes('30 2 * * *', from, 2, { timezone: 'Europe/Paris' }))).toEqual(['2025-03-30T01:00:00.000Z', '2025-03-31T00:30:00.000Z']);
    expect(iso(nextCronTimes('30 2 * * *', new Date('2025-10-25T12:00:00Z'), 3, { timezone: 'Europe/Paris' }))).toEqual([
      '2025-10-26T00:30:00.000Z',
      '2025-10-27T01:30:00.000Z',
      '2025-10-28T01:30:00.000Z',
    ]);
    expect(iso(nextCronTimes('0 9 * * *', from, 1, { timezone: 'America/New_York' }))).toEqual(['2025-03-29T13:00:00.000Z']);
  });

  it('agrees with node-cron given the same timezone option', () => {
    for (const [expr, zone, now] of [
      ['0 9 * * MON-FRI', 'Asia/Tokyo', '2025-06-06T23:30:00Z'],
      ['*/15 * * * *', 'Asia/Kolkata', '2025-01-01T00:07:00Z'],
      ['0 0 1 * *', 'America/Los_Angeles', '2025-02-27T12:00:00Z'],
      ['0 9 * * *', 'Europe/Paris', '2025-03-29T12:00:00Z'],
    ] as const) {
      vi.useFakeTimers({ now: new Date(now) });
      const task = createTask(expr, () => undefined, { timezone: zone });
      try {
        expect(iso(nextCronTimes(expr, new Date(now), 4, { timezone: zone })), `${expr} in ${zone}`).toEqual(iso(task.getNextRuns(4)));
      } finally {
        void task.destroy();
      }
    }
  });
});

describe('metrics.listen', () => {
  it('takes a bare port as 127.0.0.1:PORT, as a number or a string', () => {
    const dir = new TempDir();
    try {
      dir.write('n.yaml', `${BASE}metrics:\n  listen: 9464\n`);
      expect(dir.load('n.yaml').config?.metrics.listen).toBe('127.0.0.1:9464');
      dir.write('s.yaml', `${BASE}metrics:\n  listen: "9465"\n`);
      expect(dir.load('s.yaml').config?.metrics.listen).toBe('127.0.0.1:9465');
      expect(formatted(dir.load('s.yaml')).warnings).toEqual([]);
      dir.write('hp.yaml', `${BASE}metrics:\n  listen: "[::1]:9464"\n`);
      expect(dir.load('hp.yaml').config?.metrics.listen).toBe('[::1]:9464');
      dir.write('bad.yaml', edit(`${BASE}metrics:\n  listen: 9464\n`, '9464', '70000'));
      expect(formatted(dir.load('bad.yaml')).errors).toEqual(['bad.yaml:17:3 metrics.listen: must be at most 65535']);
      dir.write('word.yaml', `${BASE}metrics:\n  listen: nine\n`);
      expect(formatted(dir.load('word.yaml')).errors).toEqual(['word.yaml:17:3 metrics.listen: expected HOST:PORT or a bare port, e.g. 127.0.0.1:9464 or 9464']);
    } finally {
      dir.remove();
    }
  });
});
