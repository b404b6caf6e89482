// Cron schedules, as node-cron reads them: why an expression is refused (in the config's words),
// steps node-cron accepts that do not mean what they say, the time zone, and the next fire times.
// The fire times come from node-cron itself (the matcher behind its own getNextRuns), with the
// hour it skips when the clocks go back put back, and a time of day the clocks skip going forward
// made up for at the end of the gap (nextMatch), and the scheduler arms its ticks from
// them, so `check`, the daemon and the scheduler can never disagree on when a poll is due.
import { createTask, validateDetailed } from 'node-cron';

interface CronOptions {
  /** Match in UTC instead of the process's local time zone (node-cron's default). */
  utc?: boolean;
  /** Match in this IANA time zone (schedule.timezone), as node-cron's `timezone` option does. */
  timezone?: string | undefined;
}

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

/** What a node-cron task keeps to find its fire times; not in its typings (see nextCronTimes). */
interface TimeMatcher {
  getNextMatch(after: Date): Date;
  match(at: Date): boolean;
}

/** Minutes east of UTC of `zone` (the process's own when undefined) at `at`. */
function offsetMinutes(zone: string | undefined, at: number): number {
  if (zone === undefined) return -new Date(at).getTimezoneOffset();
  const name = offsetFormat(zone).formatToParts(at).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /GMT([+-])(\d{2}):?(\d{2})?/.exec(name);
  return m === null ? 0 : (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0));
}

/** One formatter a zone: a zone's rules do not change while the process runs. */
const offsetFormats = new Map<string, Intl.DateTimeFormat>();
function offsetFormat(zone: string): Intl.DateTimeFormat {
  let f = offsetFormats.get(zone);
  if (f === undefined) offsetFormats.set(zone, (f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })));
  return f;
}

/** node-cron's matchers for an expression: in its zone, and on the wall clock read as UTC (wallAsUtc). */
interface Matchers {
  zoned: TimeMatcher;
  /**
   * The same expression matched in UTC: asked about an instant whose UTC reading is a local wall
   * time, it says whether that wall time matches, even one the zone skips (no instant has it there).
   */
  wallAsUtc: () => TimeMatcher;
  /** Six fields: the first is seconds, and a fire time may fall on any second. */
  stepMs: number;
  /** Neither the minute nor the hour field is a wildcard: a time of day cron makes up for (see nextMatch). */
  fixedTime: boolean;
}

/**
 * node-cron's next fire time after `after`, with the fire times it misses when the clocks change.
 *
 * Going back, it walks local times and maps an ambiguous one to its later occurrence, so the first
 * pass through the repeated hour never fires, and from inside it the second pass is skipped up to
 * the local time reached: every minute ("*\/1 * * * *") in Europe/Berlin had no fire time from
 * 2026-10-25 00:00 to 01:00 UTC, every wallet unpolled for an hour, every year. Where the offset
 * falls between `after` and node-cron's answer, the instants of both passes (the offset's
 * difference either side of the change, found by bisection) are tried one by one with node-cron's
 * own `match`, which reads each instant's real local time: every minute (every second with six
 * fields) of at most two hours, at most twice a year. A fixed-time schedule (minute and hour not
 * wildcards) fires only in the first pass, as Vixie cron and cronie run such a job once; a wildcard
 * one fires in both ("5 * * * *" is hourly, and that night has one hour more).
 *
 * Going forward, a local time inside the gap has no instant, and node-cron goes on to the next day:
 * a daily "30 2 * * *" in Europe/Berlin never fired on the day the clocks skip 02:00-03:00. As Vixie
 * cron and cronie do, a fixed-time schedule (minute and hour not wildcards) whose time fell in the
 * gap fires once, at the first instant after it; a wildcard one ("*\/20 * * * *", "5 * * * *") just
 * goes on at its next time, as cron does. Whether a skipped wall time matches is node-cron's own
 * `match`, asked in UTC about the instant whose UTC reading is that wall time.
 *
 * Each change between `after` and node-cron's answer is handled in turn, first to last: a March-only
 * or a yearly schedule can pass the clocks going forward and back before its next fire time.
 */
function nextMatch(m: Matchers, after: Date, zone: string | undefined): Date {
  const at = nextMatchAnyPass(m, after, zone);
  if (!m.fixedTime) return at;
  // A fixed time of day in the second pass through a repeated hour is the same wall time again
  // (a daily 02:30 would poll twice that night): cron runs such a job once, at the first pass.
  const passEnd = secondPassEnd(zone, at.getTime());
  return passEnd === undefined ? at : nextMatch(m, new Date(passEnd - 1), zone);
}

/** nextMatch with every pass through a repeated hour. */
function nextMatchAnyPass(m: Matchers, after: Date, zone: string | undefined): Date {
  const next = m.zoned.getNextMatch(after);
  const from = after.getTime();
  const to = next.getTime();
  const before = offsetMinutes(zone, from);
  // The first instant a day at a time with another offset, or `to`. More than a day apart, the
  // clocks may have changed more than once between the two (a yearly or a March-only schedule:
  // "30 2 * 3 0" from one Sunday went to next March, past the Sunday whose 02:30 is skipped, the
  // offsets at both ends the same), and only the first change is bisected; changes are months apart.
  let t = from + DAY_MS;
  while (t < to && offsetMinutes(zone, t) === before) t += DAY_MS;
  const changed = Math.min(t, to);
  if (changed === to && offsetMinutes(zone, to) === before) return next;
  const hi = offsetChange(zone, Math.max(from, changed - DAY_MS), changed, before);
  const shift = offsetMinutes(zone, hi) - before;
  const { stepMs } = m;
  let resume = hi;
  if (shift > 0) {
    if (m.fixedTime && hi < to) {
      // The skipped wall times, [hi read at the old offset, hi read at the new one), as UTC readings.
      const gapStart = hi + before * 60_000;
      const gapEnd = gapStart + shift * 60_000;
      for (let w = Math.ceil(gapStart / stepMs) * stepMs; w < gapEnd; w += stepMs) {
        if (m.wallAsUtc().match(new Date(w))) return new Date(hi);
      }
    }
  } else {
    const span = -shift * 60_000;
    const start = Math.max(from + 1, hi - span);
    const end = Math.min(to, hi + span);
    for (let t = Math.ceil(start / stepMs) * stepMs; t < end; t += stepMs) {
      if (m.zoned.match(new Date(t))) return new Date(t);
    }
    resume = end - 1;
  }
  // Nothing made up for at this change; a later one before `to` may still make up for something.
  return changed < to && resume > from ? nextMatchAnyPass(m, new Date(resume), zone) : next;
}

const DAY_MS = 86_400_000;
/** Longer than any clock change's shift (an hour almost everywhere, 30 minutes on Lord Howe). */
const MAX_SHIFT_MS = 3 * 3_600_000;

/**
 * When the instant `t` falls in the second pass through a local hour the clocks went back over,
 * the end of that pass (every wall time in it occurred once already, before the change); else
 * undefined. Changes are months apart, so at most one lies within MAX_SHIFT_MS before `t`.
 */
function secondPassEnd(zone: string | undefined, t: number): number | undefined {
  const before = offsetMinutes(zone, t - MAX_SHIFT_MS);
  const after = offsetMinutes(zone, t);
  if (before <= after) return undefined;
  const end = offsetChange(zone, t - MAX_SHIFT_MS, t, before) + (before - after) * 60_000;
  return t < end ? end : undefined;
}

/** The first instant (to a second) after `lo`, up to `hi`, whose offset is no longer `before`, found by bisection. */
function offsetChange(zone: string | undefined, lo: number, hi: number, before: number): number {
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (offsetMinutes(zone, mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * The next `n` times strictly after `from` at which `expr` fires, as node-cron computes them.
 * Fewer when node-cron finds no fire time within its horizon (e.g. "L-30" of February). Throws
 * on an invalid expression. A time that occurs twice (the clocks going back) is given at both
 * occurrences when the schedule has a wildcard minute or hour, at the first when it is a fixed time
 * of day (nextMatch); a fixed time of day skipped
 * by the clocks going forward is given once, at the first instant after the gap (nextMatch).
 *
 * node-cron's public `getNextRuns(n)` counts from the real clock, and every time here is counted
 * from a given instant (a fixed one for `check`, the injected clock for the daemon), so this asks
 * the matcher behind it, on a task that is created, never started, and destroyed at once.
 * test/config/cron.test.ts holds the two to the same answers.
 */
export function nextCronTimes(expr: string, from: Date, n: number, opts: CronOptions = {}): Date[] {
  const problem = cronProblem(expr);
  if (problem !== undefined) throw new Error(`invalid cron expression "${expr}": ${problem}`);
  const timezone = opts.utc === true ? 'UTC' : opts.timezone;
  const task = createTask(expr, () => undefined, timezone === undefined ? {} : { timezone });
  // Made only when the clocks go forward before a fire time: at most twice a year.
  let utcTask: ReturnType<typeof createTask> | undefined;
  try {
    const fields = expr.trim().split(/\s+/);
    const [minute, hour] = fields.length >= 6 ? fields.slice(1, 3) : fields.slice(0, 2);
    const matchers: Matchers = {
      zoned: matcherOf(task),
      wallAsUtc: () => matcherOf((utcTask ??= createTask(expr, () => undefined, { timezone: 'UTC' }))),
      stepMs: fields.length >= 6 ? 1000 : 60_000,
      fixedTime: fields.length >= 5 && minute?.startsWith('*') === false && hour?.startsWith('*') === false,
    };
    const out: Date[] = [];
    let after = from;
    while (out.length < n) {
      try {
        after = nextMatch(matchers, after, timezone);
      } catch (err) {
        // node-cron's way of saying the schedule never fires within its horizon.
        if (err instanceof Error && /Could not find next matching date/.test(err.message)) break;
        throw err;
      }
      out.push(after);
    }
    return out;
  } finally {
    void task.destroy();
    if (utcTask !== undefined) void utcTask.destroy();
  }
}

/** The matcher a node-cron task keeps (not in its typings; see nextCronTimes). */
function matcherOf(task: ReturnType<typeof createTask>): TimeMatcher {
  const matcher = (task as unknown as { timeMatcher?: Partial<TimeMatcher> }).timeMatcher;
  if (typeof matcher?.getNextMatch !== 'function' || typeof matcher.match !== 'function') {
    throw new Error('node-cron tasks no longer carry a timeMatcher with getNextMatch: see src/config/cron.ts');
  }
  return matcher as TimeMatcher;
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
