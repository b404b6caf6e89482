import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/config/durations.js';
import { formatDuration } from '../../src/rules/format.js';

describe('durations', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['10m', 600_000],
    ['6h', 21_600_000],
    ['1d', 86_400_000],
    ['1h30m', 5_400_000],
    ['0s', 0],
  ])('%s is %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['10', '10 m', '1.5h', '-1s', '1w', '', 'h', '367d'])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  // One formatter for every duration shown (rules/format.ts): the config's own values read the
  // same as the time left on a cooldown.
  it.each([
    [0, '0ms'],
    [500, '500ms'],
    [90_000, '1m 30s'],
    [5_400_000, '1h 30m'],
    [86_400_000, '1d'],
  ])('%i ms prints as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
