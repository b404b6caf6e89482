// The two pure pieces behind the time guarantees: the decision clock and the skew episode logic.
import { describe, expect, it } from 'vitest';
import { ClockSkewWatch, INITIAL_SKEW_STATE, observeSkew, type SkewState } from '../../src/executor/clock-skew.js';
import { createDecisionClock } from '../../src/executor/decision-clock.js';
import { FakeClock } from '../support/clock.js';

const fakeClock = (): FakeClock => new FakeClock(1_750_000_000_000, 500.25);

describe('createDecisionClock', () => {
  it('starts at the wall clock and then follows only monotonic time', () => {
    const c = fakeClock();
    const d = createDecisionClock(c);
    expect(d.now()).toBe(1_750_000_000_000);
    c.mono += 1_000;
    expect(d.now()).toBe(1_750_000_001_000);
    c.wall -= 3_600_000; // NTP steps the wall clock back an hour
    expect(d.now()).toBe(1_750_000_001_000);
    c.wall += 86_400_000 * 2; // and forward two days
    c.mono += 500.75;
    expect(d.now()).toBe(1_750_000_001_500);
    expect(d.monotonic()).toBe(c.mono);
  });

  it('never returns less than before, even from a monotonic source that goes back', () => {
    const c = fakeClock();
    const d = createDecisionClock(c);
    c.mono += 10_000;
    const high = d.now();
    c.mono -= 5_000;
    expect(d.now()).toBe(high);
    c.mono += 6_000;
    expect(d.now()).toBe(high + 1_000);
  });

  it('holdBackTo sets it back, never forward, and it follows monotonic time from there (helper 30)', () => {
    const c = fakeClock();
    const d = createDecisionClock(c);
    c.mono += 1_000;
    expect(d.holdBackTo(1_750_000_005_000)).toBe(0); // ahead of it: not moved
    expect(d.now()).toBe(1_750_000_001_000);
    expect(d.holdBackTo(1_749_913_601_000)).toBe(86_400_000); // a day behind: set back a day
    expect(d.now()).toBe(1_749_913_601_000);
    c.mono += 2_000;
    expect(d.now()).toBe(1_749_913_603_000);
    c.mono -= 5_000; // and never back by itself
    expect(d.now()).toBe(1_749_913_603_000);
  });

  it('returns whole milliseconds (plans are dated with SQLite integers)', () => {
    const c = fakeClock();
    const d = createDecisionClock(c);
    c.mono += 0.9;
    expect(Number.isInteger(d.now())).toBe(true);
  });
});

describe('clock skew episodes', () => {
  const run = (skews: Array<number | undefined>, threshold = 30_000) => {
    let state: SkewState = INITIAL_SKEW_STATE;
    const out: string[] = [];
    for (const s of skews) {
      const r = observeSkew(state, s, threshold);
      state = r.state;
      out.push(r.report?.event ?? '-');
    }
    return out;
  };

  it.each([
    ['within the threshold: silence', [0, 1_000, -29_000, 30_000], ['-', '-', '-', '-']],
    ['one warning per episode, however long', [31_000, 45_000, 120_000, 31_000], ['clock.skew', '-', '-', '-']],
    ['our clock ahead counts the same', [-31_000, -31_000], ['clock.skew', '-']],
    ['resolved once, then a new episode warns again', [40_000, 0, 0, 40_000, 40_000], ['clock.skew', 'clock.skew_resolved', '-', 'clock.skew', '-']],
    ['no flapping at the threshold: 30.5 s / 29.5 s stays one episode', [30_500, 29_500, 30_500, 29_500], ['clock.skew', '-', '-', '-']],
    ['resolved once clearly inside (2 s hysteresis)', [30_500, 28_000], ['clock.skew', 'clock.skew_resolved']],
    ['no Date header: nothing changes', [undefined, 40_000, undefined, undefined], ['-', 'clock.skew', '-', '-']],
    ['NaN is not a measurement', [Number.NaN, 40_000, Number.NaN], ['-', 'clock.skew', '-']],
  ] as const)('%s', (_what, skews, events) => {
    expect(run([...skews])).toEqual(events);
  });

  it('a small threshold keeps a band to resolve in', () => {
    expect(run([1_500, 400, 600], 1_000)).toEqual(['clock.skew', 'clock.skew_resolved', '-']);
  });

  it('ClockSkewWatch keeps the episode between calls', () => {
    const w = new ClockSkewWatch();
    expect(w.observe(50_000)?.event).toBe('clock.skew');
    expect(w.skewed).toBe(true);
    expect(w.observe(50_000)).toBeUndefined();
    expect(w.observe(0)?.event).toBe('clock.skew_resolved');
    expect(w.skewed).toBe(false);
  });
});
