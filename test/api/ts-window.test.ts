// The age judgement behind "not applied" (SPEC §2, issue 25 finding 1): a signed request can no
// longer be accepted once its timestamp is older than ts_window + margin by the STORE's clock (the
// database's, shared by every daemon). The finding: clocks at −90 s and +90 s, an old owner
// signing by the slow one and a new owner judging by the fast one, 15 s of pause was enough.
import { describe, expect, it } from 'vitest';
import { beyondWindow, judgingNowMs, maxSendAgeMs, settleAfterMs, TS_WINDOW_MARGIN_MS } from '../../src/api/ts-window.js';

const WINDOW = 300_000;
const SETTLE = settleAfterMs(WINDOW);
const T = Date.UTC(2026, 10, 26, 3, 0, 0); // true time when the request was signed

describe('beyondWindow', () => {
  it('settles after ts_window + a minute; a signed request may wait a quarter of the window', () => {
    expect(TS_WINDOW_MARGIN_MS).toBe(60_000);
    expect(SETTLE).toBe(360_000);
    expect(maxSendAgeMs(WINDOW)).toBe(75_000);
    // A window under a minute is its own margin.
    expect(settleAfterMs(5_000)).toBe(10_000);
    expect(settleAfterMs(60_000)).toBe(120_000);
  });

  it.each([
    // [what, signer's clock offset, judging clock offset, elapsed true time, beyond]
    ['the finding: signed 90 s slow, judged by a clock 90 s fast, 15 s later', -90_000, +90_000, 15_000, false],
    ['signed 90 s slow, the database judges (true time), 15 s later', -90_000, 0, 15_000, false],
    ['signed by a clock 90 s slow, the database judges at the window + margin − 90 s: not yet', -90_000, 0, SETTLE - 90_000 - 1_000, false],
    ['signed by a clock 90 s slow, the database judges at the window + margin − 90 s + 1 s', -90_000, 0, SETTLE - 90_000 + 1_000, true],
    ['signed by a clock 90 s fast: the database waits 90 s longer', +90_000, 0, SETTLE + 60_000, false],
    ['signed by a clock 90 s fast, the database after window + margin + 90 s', +90_000, 0, SETTLE + 90_000, true],
    ['the database clock 90 s ahead of the daemon that signed', 0, +90_000, SETTLE - 90_000, true],
    ['the database clock 90 s behind the daemon that signed', 0, -90_000, SETTLE, false],
  ])('%s', (_what, signerOffset, judgeOffset, elapsed, beyond) => {
    const tsSec = Math.floor((T + signerOffset) / 1000);
    const judged = beyondWindow(tsSec, T + elapsed + judgeOffset, SETTLE);
    expect(judged.beyond).toBe(beyond);
    expect(judged.ageMs).toBe(T + elapsed + judgeOffset - tsSec * 1000);
  });

  it('the same request a new owner judged by its own fast clock would have called old at once: the window is the database\'s', () => {
    const tsSec = Math.floor((T - 90_000) / 1000);
    // The old behaviour, the new owner's own clock (+90 s) after a pause of SETTLE − 180 s:
    expect(T + (SETTLE - 180_000) + 90_000 - tsSec * 1000).toBeGreaterThanOrEqual(SETTLE);
    // The database's judgement at that moment: 90 s short.
    expect(beyondWindow(tsSec, T + (SETTLE - 180_000), SETTLE).beyond).toBe(false);
  });
});

describe('judgingNowMs (time and restarts review, helper 30)', () => {
  it.each([
    { name: 'no Date seen yet: the store\'s clock', store: T, wall: T, skew: undefined, judged: T },
    { name: 'the service 200 s behind us: its clock', store: T, wall: T, skew: -200_000, judged: T - 200_000 },
    { name: 'the service ahead of us: never sooner than the store says', store: T, wall: T, skew: 200_000, judged: T },
    { name: 'our wall clock stepped ahead, the store\'s (a database\'s) not: the service is not behind the store', store: T, wall: T + 600_000, skew: -600_000, judged: T },
    { name: 'a Date that is not a number: the store\'s clock', store: T, wall: T, skew: Number.NaN, judged: T },
  ])('$name', ({ store, wall, skew, judged }) => {
    expect(judgingNowMs(store, wall, skew)).toBe(judged);
  });

  it('a claim signed on a clock 200 s ahead of the service: not beyond by the service\'s clock until 200 s after the store would say', () => {
    const tsSec = (T + 200_000) / 1000;
    const ours = (trueMs: number) => trueMs + 200_000;
    const at = T + SETTLE + 10_000; // beyond by ours, and the service still accepts it (170 s left)
    expect(beyondWindow(tsSec, ours(at), SETTLE).beyond).toBe(true);
    expect(beyondWindow(tsSec, judgingNowMs(ours(at), ours(at), -200_000), SETTLE).beyond).toBe(false);
    expect(beyondWindow(tsSec, judgingNowMs(ours(at + 200_000), ours(at + 200_000), -200_000), SETTLE).beyond).toBe(true);
  });
});
