import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/config/index.js';

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

  it.each([
    [0, '0s'],
    [500, '500ms'],
    [90_000, '90s'],
    [5_400_000, '90m'],
    [86_400_000, '1d'],
  ])('%i ms prints as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
