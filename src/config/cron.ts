// Next fire times of a node-cron expression. node-cron v4 can only compute them through a task
// (`createTask(...).getNextRuns(n)`), which registers it globally and counts from the real clock;
// the scheduler and `check` need them from a given instant. node-cron's own parser supplies the
// field sets, so the syntax (names, steps, L, W, #, nicknames) is exactly what node-cron accepts,
// and the matching below follows node-cron's semantics: day of month AND day of week must hold.
import { validateDetailed } from 'node-cron';

interface CronOptions {
  /** Match in UTC instead of the process's local time zone (node-cron's default). */
  utc?: boolean;
  /** Match in this IANA time zone (schedule.timezone), as node-cron's `timezone` option does. */
  timezone?: string | undefined;
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
  const cal = opts.utc ? utcCalendar : opts.timezone !== undefined ? zoneCalendar(opts.timezone) : localCalendar;
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

/** Wall-clock time in an IANA zone, through Intl (as node-cron does for its `timezone` option). */
function zoneCalendar(timeZone: string): Calendar {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const parts = (ms: number) => {
    const out = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
    for (const p of format.formatToParts(new Date(ms))) {
      if (p.type in out) out[p.type as keyof typeof out] = Number(p.value);
    }
    return out;
  };
  /** How far the zone's wall clock is ahead of UTC at instant `ms`. */
  const offset = (ms: number): number => {
    const p = parts(ms);
    return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(ms / 1000) * 1000;
  };
  return {
    parts,
    toMs(y, mo, d, h, mi, s) {
      const wall = Date.UTC(y, mo - 1, d, h, mi, s);
      // The offset at the instant depends on the instant: try the offsets on both sides of a
      // change, earliest first (a wall time that occurs twice fires at its first occurrence).
      const candidates = [wall - offset(wall - 86_400_000), wall - offset(wall + 86_400_000), wall - offset(wall)].sort((a, b) => a - b);
      for (const ms of candidates) {
        const p = parts(ms);
        if (p.year === y && p.month === mo && p.day === d && p.hour === h && p.minute === mi && p.second === s) return ms;
      }
      return undefined; // skipped by a DST change
    },
  };
}

/** Undefined when `name` is an IANA time zone this Node knows, else why not. */
export function timezoneProblem(name: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return undefined;
  } catch {
    return `"${name}" is not an IANA time zone this Node.js knows (e.g. UTC, Europe/Paris, America/New_York)`;
  }
}

/** The cyclic fields a step can be judged in, by position in a 6-field expression. */
const STEP_FIELDS: Array<{ name: string; first: number; size: number; cycle: string } | undefined> = [
  { name: 'second', first: 0, size: 60, cycle: 'minute' },
  { name: 'minute', first: 0, size: 60, cycle: 'hour' },
  { name: 'hour', first: 0, size: 24, cycle: 'day' },
  undefined, // day of month: months differ in length, so no step is even across them
  { name: 'month', first: 1, size: 12, cycle: 'year' },
  undefined, // day of week: "*/2" (Sunday, Tuesday, Thursday, Saturday) is read as the list it is
];

/**
 * Steps node-cron accepts that do not mean what they say: a step of 70 over the minute field
 * matches only minute 0 (hourly, not every 70 minutes); a step of 7 over the hour field fires at
 * 21:00 and again at 00:00, three hours later. A step over a whole cyclic field ("*" or "N" before
 * the slash) must divide the field's size, and a step over a range must fit inside it. Undefined
 * when every step is sound, or the expression is a nickname such as @hourly.
 */
export function cronStepProblem(expr: string): string | undefined {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) return undefined;
  const fields = parts.length === 5 ? [undefined, ...parts] : parts;
  const reasons: string[] = [];
  fields.forEach((text, i) => {
    const field = STEP_FIELDS[i];
    if (text === undefined || field === undefined) return;
    for (const item of text.split(',')) {
      const m = /^(\*|[0-9]+)(?:-([0-9]+))?\/([0-9]+)$/.exec(item);
      if (!m) continue;
      const [, start = '*', end, stepText = '1'] = m;
      const step = Number(stepText);
      if (step <= 1) continue;
      if (end !== undefined) {
        if (step > Number(end) - Number(start)) {
          reasons.push(`"${item}" in the ${field.name} field: a step of ${step} is longer than the range, so only ${start} matches`);
        }
        continue;
      }
      if (field.size % step === 0) continue;
      const divisors = Array.from({ length: field.size - 1 }, (_, k) => k + 1).filter((k) => field.size % k === 0);
      const first = start === '*' ? field.first : Number(start);
      const what =
        step >= field.size
          ? `only ${first} matches, so it fires once ${field.cycle === 'hour' ? 'an' : 'a'} ${field.cycle}, not every ${step}`
          : `${step} does not divide ${field.size}, so the gap across the end of the ${field.cycle} is not ${step}`;
      reasons.push(`"${item}" in the ${field.name} field: ${what}; use a step that divides ${field.size} (${divisors.join(', ')})`);
    }
  });
  return reasons.length > 0 ? reasons.join('; ') : undefined;
}

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
