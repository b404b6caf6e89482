// Durations as operators write them: `30s`, `10m`, `6h`, `1d`, `500ms`, or compounds like `1h30m`.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The whole-string shape; the JSON Schema carries it so an editor flags `10 minutes` as typed. */
export const DURATION_PATTERN = '^(?:[0-9]+(?:ms|s|m|h|d))+$';
const DURATION_RE = new RegExp(DURATION_PATTERN);
const PART_RE = /([0-9]+)(ms|s|m|h|d)/g;

/** A year is far beyond any sensible poll jitter, epoch or cooldown, and keeps arithmetic exact. */
const MAX_DURATION_MS = 366 * 86_400_000;

/** Milliseconds, or undefined when `text` is not a duration. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION_RE.test(text)) return undefined;
  let ms = 0;
  for (const m of text.matchAll(PART_RE)) {
    const n = Number(m[1]);
    const unit = UNIT_MS[m[2] ?? ''];
    if (unit === undefined || !Number.isSafeInteger(n)) return undefined;
    ms += n * unit;
    if (ms > MAX_DURATION_MS) return undefined;
  }
  return ms;
}
