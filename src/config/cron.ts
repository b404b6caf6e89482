// Next fire times of a node-cron expression. node-cron v4 can only compute them through a task
// (`createTask(...).getNextRuns(n)`), which registers it globally and counts from the real clock;
// the scheduler and `check` need them from a given instant. node-cron's own parser supplies the
// field sets, so the syntax (names, steps, L, W, #, nicknames) is exactly what node-cron accepts,
// and the matching below follows node-cron's semantics: day of month AND day of week must hold.
import { validateDetailed } from 'node-cron';

export interface CronOptions {
  /** Match in UTC instead of the process's local time zone (node-cron's default). */
  utc?: boolean;
}

interface Fields {
  seconds: number[];
  minutes: number[];
  hours: number[];
  daysOfMonth: (number | string)[];
  months: number[];
  daysOfWeek: (number | string)[];
}

/** node-cron's own horizon: a schedule with no fire time within a century never fires. */
const HORIZON_DAYS = 100 * 366;

const FIELD_NAMES: Record<string, string> = {
  second: 'second',
  minute: 'minute',
  hour: 'hour',
  dayOfMonth: 'day of month',
  month: 'month',
  dayOfWeek: 'day of week',
};

/** Undefined when node-cron accepts the expression, else why not. */
export function cronProblem(expr: string): string | undefined {
  const result = validateDetailed(expr);
  if (result.valid) return undefined;
  const reasons = result.errors.map((e) =>
    /impossible/.test(e.message)
      ? 'that day never occurs in those months'
      : e.field in FIELD_NAMES && e.value !== undefined
        ? `"${e.value}" is not a valid ${FIELD_NAMES[e.field]}`
        : e.message,
  );
  return reasons.join('; ') || 'invalid cron expression';
}

/**
 * The next `n` times strictly after `from` at which `expr` fires. Fewer when the expression stops
 * firing within a century (e.g. "L-30" of February). Throws on an invalid expression.
 * Local times skipped by a DST change are skipped, as they do not exist.
 */
export function nextCronTimes(expr: string, from: Date, n: number, opts: CronOptions = {}): Date[] {
  const fields = parseFields(expr);
  const cal = opts.utc ? utcCalendar : localCalendar;
  const out: Date[] = [];
  let after = from.getTime();
  while (out.length < n) {
    const next = nextAfter(fields, after, cal);
    if (next === undefined) break;
    out.push(new Date(next));
    after = next;
  }
  return out;
}

function parseFields(expr: string): Fields {
  const result = validateDetailed(expr);
  if (!result.valid || !result.fields) throw new Error(`invalid cron expression "${expr}": ${cronProblem(expr)}`);
  const f = result.fields;
  const asc = (xs: number[]) => [...new Set(xs)].sort((a, b) => a - b);
  return {
    seconds: asc(f.second),
    minutes: asc(f.minute),
    hours: asc(f.hour),
    daysOfMonth: f.dayOfMonth,
    months: f.month,
    daysOfWeek: f.dayOfWeek,
  };
}

interface Calendar {
  parts(ms: number): { year: number; month: number; day: number; hour: number; minute: number; second: number };
  /** Undefined when that wall-clock time does not exist (a DST gap). */
  toMs(year: number, month: number, day: number, hour: number, minute: number, second: number): number | undefined;
}

const utcCalendar: Calendar = {
  parts(ms) {
    const d = new Date(ms);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
    };
  },
  toMs: (y, mo, d, h, mi, s) => Date.UTC(y, mo - 1, d, h, mi, s),
};

const localCalendar: Calendar = {
  parts(ms) {
    const d = new Date(ms);
    return {
      year: d.getFullYear(),
      month: d.getMonth() + 1,
      day: d.getDate(),
      hour: d.getHours(),
      minute: d.getMinutes(),
      second: d.getSeconds(),
    };
  },
  toMs(y, mo, d, h, mi, s) {
    const date = new Date(y, mo - 1, d, h, mi, s);
    return date.getHours() === h && date.getMinutes() === mi ? date.getTime() : undefined;
  },
};

function nextAfter(f: Fields, afterMs: number, cal: Calendar): number | undefined {
  const start = cal.parts(Math.floor(afterMs / 1000) * 1000);
  // Walk calendar days with a UTC date as a plain day counter; the calendar decides the instant.
  const cursor = new Date(Date.UTC(start.year, start.month - 1, start.day));
  for (let i = 0; i < HORIZON_DAYS; i++, cursor.setUTCDate(cursor.getUTCDate() + 1)) {
    const year = cursor.getUTCFullYear();
    const month = cursor.getUTCMonth() + 1;
    const day = cursor.getUTCDate();
    if (!f.months.includes(month)) {
      cursor.setUTCDate(daysIn(year, month)); // the loop's step moves to the 1st of the next month
      continue;
    }
    if (!matchesDayOfMonth(f.daysOfMonth, year, month, day)) continue;
    if (!matchesDayOfWeek(f.daysOfWeek, year, month, day)) continue;
    const firstDay = i === 0;
    for (const hour of f.hours) {
      if (firstDay && hour < start.hour) continue;
      for (const minute of f.minutes) {
        if (firstDay && hour === start.hour && minute < start.minute) continue;
        for (const second of f.seconds) {
          const ms = cal.toMs(year, month, day, hour, minute, second);
          if (ms !== undefined && ms > afterMs) return ms;
        }
      }
    }
  }
  return undefined;
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function weekday(year: number, month: number, day: number): number {
  return new Date(Date.UTC(year, month - 1, day)).getUTCDay();
}

/** The weekday nearest to `target` within the month (the "W" modifier). */
function nearestWeekday(year: number, month: number, target: number): number {
  const last = daysIn(year, month);
  if (target < 1 || target > last) return -1;
  const wd = weekday(year, month, target);
  if (wd === 6) return target === 1 ? 3 : target - 1;
  if (wd === 0) return target === last ? target - 2 : target + 1;
  return target;
}

function matchesDayOfMonth(values: (number | string)[], year: number, month: number, day: number): boolean {
  const last = daysIn(year, month);
  return values.some((v) => {
    if (typeof v === 'number') return v === day;
    if (v === 'L') return day === last;
    const w = /^(\d{1,2}|L)W$/.exec(v);
    if (w) return nearestWeekday(year, month, w[1] === 'L' ? last : Number(w[1])) === day;
    const offset = /^L-(\d{1,2})$/.exec(v);
    if (offset) return last - Number(offset[1]) === day;
    return false;
  });
}

function matchesDayOfWeek(values: (number | string)[], year: number, month: number, day: number): boolean {
  const wd = weekday(year, month, day);
  return values.some((v) => {
    if (typeof v === 'number') return v % 7 === wd;
    const nth = /^([0-7])#([1-5])$/.exec(v);
    if (nth) return Number(nth[1]) % 7 === wd && Math.floor((day - 1) / 7) + 1 === Number(nth[2]);
    const lastOf = /^([0-7])L$/i.exec(v);
    if (lastOf) return Number(lastOf[1]) % 7 === wd && day + 7 > daysIn(year, month);
    return false;
  });
}
