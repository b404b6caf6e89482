import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WalletConfig } from '../../src/domain.js';
import { AccrualPlanner } from '../../src/scheduler/priority.js';

const SOL = 1_000_000_000n;
const I = 10_000; // interval, ms
const wallet = (name: string): WalletConfig => ({ name, address: name, key: { env: 'X' }, rules: ['r'] });
const names = (xs: WalletConfig[]) => xs.map((w) => w.name);

/**
 * A planner where every wallet's threshold is 1 SOL unless the table says otherwise, counting polls
 * only (claims cost nothing), so tests of the order are not tests of the budget too.
 */
function planner(thresholds: Record<string, bigint | undefined> = {}, maxIntervals = 5) {
  return new AccrualPlanner({ threshold: (w) => (w.name in thresholds ? thresholds[w.name] : SOL), maxIntervals, requestsPerClaim: 0 });
}

/** Each wallet chosen and seen at t = 0 and t = I, its pending at I as given and perInterval less at 0 (so its rate is known). */
function seenTwice(p: AccrualPlanner, ws: WalletConfig[], at1: Record<string, bigint>, perInterval: bigint): void {
  for (const w of ws) {
    p.choose([w], 1, 0, I);
    p.observe(w, { pendingLamports: at1[w.name]! - perInterval }, 0);
    p.choose([w], 1, I, I);
    p.observe(w, { pendingLamports: at1[w.name]! }, I);
  }
}

/** A wallet chosen at 1.5I, neither forced nor due at 2I, so not picked: it makes the fleet larger than a budget of the others. */
function chosenLately(p: AccrualPlanner): WalletConfig {
  const x = wallet('x');
  p.choose([x], 1, 1.5 * I, I);
  p.observe(x, { pendingLamports: 0n }, 1.5 * I);
  return x;
}

describe('AccrualPlanner', () => {
  it('polls everyone, in configured order, while the budget allows', () => {
    const p = planner();
    const ws = ['a', 'b', 'c'].map(wallet);
    expect(names(p.choose(ws, 3, 0, I))).toEqual(['a', 'b', 'c']);
    expect(names(p.choose(ws, Number.POSITIVE_INFINITY, I, I))).toEqual(['a', 'b', 'c']);
  });

  it('first polls the wallets it has never polled', () => {
    const p = planner();
    const ws = ['a', 'b', 'c', 'd'].map(wallet);
    expect(names(p.choose(ws, 2, 0, I))).toEqual(['a', 'b']);
    expect(names(p.choose(ws, 2, I, I))).toEqual(['c', 'd']);
  });

  it('measures each wallet’s accrual rate from successive summaries', () => {
    const p = planner();
    const a = wallet('a');
    p.observe(a, { pendingLamports: 0n }, 0);
    p.observe(a, { pendingLamports: 1_000_000n }, 1_000);
    expect(p.snapshot(a)?.ratePerSec).toBe(1_000_000);
    // Smoothed: half the new sample, half the old estimate.
    p.observe(a, { pendingLamports: 4_000_000n }, 2_000);
    expect(p.snapshot(a)?.ratePerSec).toBe(2_000_000);
  });

  it('takes no sample across a drop in pending (a claim) and keeps the rate it had', () => {
    const p = planner();
    const a = wallet('a');
    p.observe(a, { pendingLamports: 0n }, 0);
    p.observe(a, { pendingLamports: 2_000_000n }, 1_000);
    p.observe(a, { pendingLamports: 500_000n }, 2_000);
    expect(p.snapshot(a)).toMatchObject({ ratePerSec: 2_000_000, pending: 500_000n });
    p.observe(a, { pendingLamports: 2_500_000n }, 3_000);
    expect(p.snapshot(a)?.ratePerSec).toBe(2_000_000);
  });

  /**
   * Wallets a..d, all seen twice already (t = 0 and t = I) so rates are known, budget 1 an
   * interval. Pending at t = I and accrual per interval decide who goes at t = 2I.
   */
  it.each<[string, Record<string, [bigint, bigint]>, string]>([
    ['the one that crossed already over one far below', { a: [0n, 100n], b: [SOL, SOL / 2n] }, 'b'],
    ['the one projected to cross sooner', { a: [SOL - SOL / 10n, SOL / 5n], b: [SOL / 2n, SOL / 5n] }, 'a'],
    ['a fast accruer over a slow one at equal pending', { a: [SOL / 2n, SOL / 100n], b: [SOL / 2n, SOL / 4n] }, 'b'],
    ['the longest overdue among crossed ones', { a: [SOL + SOL / 10n, SOL / 10n], b: [3n * SOL, SOL] }, 'b'],
  ])('prefers %s', (_name, table, expected) => {
    const p = planner();
    const ws = Object.keys(table).map(wallet);
    for (const w of ws) {
      const [pendingAtI, perInterval] = table[w.name]!;
      p.choose([w], 1, 0, I);
      p.observe(w, { pendingLamports: pendingAtI - perInterval }, 0);
      p.choose([w], 1, I, I);
      p.observe(w, { pendingLamports: pendingAtI }, I);
    }
    expect(names(p.choose(ws, 1, 2 * I, I))).toEqual([expected]);
  });

  it('after a poll at or over the threshold (it fired), waits a whole threshold of accrual', () => {
    const p = planner({}, 100);
    const [a, b] = [wallet('a'), wallet('b')];
    for (const [w, at0, at1] of [
      [a, 0n, SOL / 10n], // 0.1 SOL an interval: crosses again 10 intervals after t = I
      [b, SOL / 2n, SOL / 2n + SOL / 20n], // 0.05 an interval: crosses at t = I + 9 intervals
    ] as const) {
      p.choose([w], 1, 0, I);
      p.observe(w, { pendingLamports: at0 }, 0);
      p.choose([w], 1, I, I);
      p.observe(w, { pendingLamports: at1 }, I);
    }
    p.observe(a, { pendingLamports: SOL }, I); // a is over its threshold: claimed now
    expect(names(p.choose([a, b], 1, 2 * I, I))).toEqual(['b']);
  });

  it('gives wallets without a pending threshold the round-robin cadence', () => {
    const p = planner({ t: undefined });
    const ws = ['t', 'x', 'y', 'z'].map(wallet);
    expect(names(p.choose(ws, 2, 0, I))).toEqual(['t', 'x']);
    for (const w of ws) p.observe(w, { pendingLamports: 0n }, 0);
    expect(names(p.choose(ws, 2, I, I))).toEqual(['y', 'z']);
    // Round-robin period is 2 intervals: t is due again at 2I, x too but x is far below threshold.
    for (const w of ws) p.observe(w, { pendingLamports: 1n }, I);
    expect(names(p.choose(ws, 1, 2 * I, I))).toEqual(['t']);
  });

  it('orders an interval soonest-due first, so late crossers get late slots', () => {
    const p = planner();
    const ws = ['a', 'b', 'c', 'd'].map(wallet);
    const perInterval = SOL / 10n;
    // Pending at t = I: b crossed at 1.5I, c crosses at 2.25I, a at 2.5I, d far later.
    const at1: Record<string, bigint> = { a: SOL - (3n * perInterval) / 2n, b: SOL - perInterval / 2n, c: SOL - (5n * perInterval) / 4n, d: SOL / 10n };
    for (const w of ws) {
      p.choose([w], 1, 0, I);
      p.observe(w, { pendingLamports: at1[w.name]! - perInterval }, 0);
      p.choose([w], 1, I, I);
      p.observe(w, { pendingLamports: at1[w.name]! }, I);
    }
    expect(names(p.choose(ws, 3, 2 * I, I))).toEqual(['b', 'c', 'a']);
  });

  it('pads early slots with wallets not due, so a wallet crossing mid-interval is not polled before it crosses', () => {
    const p = planner({}, 1); // every wallet chosen at t = I is stale at 2I: all forced
    const ws = ['a', 'c', 'd'].map(wallet);
    const perInterval = SOL / 10n;
    // Pending at t = I: c crosses at 2.25I, a at 2.5I, d far later. Slots at 2I, 2.27I, 2.53I.
    seenTwice(p, ws, { a: SOL - (3n * perInterval) / 2n, c: SOL - (5n * perInterval) / 4n, d: SOL / 10n }, perInterval);
    expect(names(p.choose([...ws, chosenLately(p)], 3, 2 * I, I))).toEqual(['d', 'c', 'a']);
    // The scheduler is told when each slotted wallet crosses, so that jitter does not move it before.
    expect(ws.map((w) => p.notBefore(w))).toEqual([2.5 * I, 2.25 * I, undefined]);
  });

  it('says no crossing for a tick within budget, which it does not slot', () => {
    const p = planner();
    const ws = ['a', 'c', 'd'].map(wallet);
    const perInterval = SOL / 10n;
    seenTwice(p, ws, { a: SOL - (3n * perInterval) / 2n, c: SOL - (5n * perInterval) / 4n, d: SOL / 10n }, perInterval);
    const x = chosenLately(p);
    expect(names(p.choose([...ws, x], 3, 2 * I, I))).toEqual(['x', 'c', 'a']);
    expect(p.notBefore(ws[1]!)).toBe(2.25 * I);
    expect(names(p.choose(ws, 3, 3 * I, I))).toEqual(['a', 'c', 'd']);
    expect(ws.map((w) => p.notBefore(w))).toEqual([undefined, undefined, undefined]);
  });

  it('slots by the window the scheduler spreads the picks over, not a fixed share of the interval', () => {
    const setup = () => {
      const p = planner({}, 1); // every wallet chosen at t = I is stale at 2I: all forced
      const ws = ['c', 'd', 'e'].map(wallet);
      const perInterval = SOL / 10n;
      // Pending at t = I: c crosses at 2.9I, past 80% of the interval and within 98% of it.
      seenTwice(p, ws, { c: SOL - (19n * perInterval) / 10n, d: SOL / 10n, e: SOL / 10n }, perInterval);
      return { p, ws: [...ws, chosenLately(p)] };
    };
    // Spread over 98%: c is due within the window and goes last, after its crossing.
    const wide = setup();
    expect(names(wide.p.choose(wide.ws, 3, 2 * I, I, undefined, 0.98 * I))).toEqual(['d', 'e', 'c']);
    expect(wide.p.notBefore(wide.ws[0]!)).toBe(2.9 * I);
    // Over the default 80% it is not due this interval: a padding wallet in configured order.
    const narrow = setup();
    expect(names(narrow.p.choose(narrow.ws, 3, 2 * I, I))).toEqual(['c', 'd', 'e']);
    expect(narrow.p.notBefore(narrow.ws[0]!)).toBeUndefined();
  });

  it('counts a wallet due to cross this interval with its claim’s requests', () => {
    const setup = (requestsPerClaim: number) => {
      const p = new AccrualPlanner({ threshold: () => SOL, requestsPerClaim });
      const ws = ['a', 'b', 'c', 'd', 'e', 'f'].map(wallet);
      const perInterval = SOL / 10n;
      // Pending at t = I: a crosses at 2.25I, b at 2.5I; c..f are far below.
      const at1: Record<string, bigint> = { a: SOL - (5n * perInterval) / 4n, b: SOL - (3n * perInterval) / 2n };
      for (const w of ws) {
        p.choose([w], 1, 0, I);
        p.observe(w, { pendingLamports: (at1[w.name] ?? 0n) - (w.name in at1 ? perInterval : 0n) }, 0);
        p.choose([w], 1, I, I);
        p.observe(w, { pendingLamports: at1[w.name] ?? 0n }, I);
      }
      return { p, ws };
    };
    // Budget 5 requests: a and its claim (3), then b would need 3 more: the rest go to c and d.
    const withClaims = setup(2);
    expect(names(withClaims.p.choose(withClaims.ws, 5, 2 * I, I))).toEqual(['c', 'a', 'd']);
    // Counting polls only, five wallets fit, the two crossers in slots after their crossing.
    const pollsOnly = setup(0);
    expect(names(pollsOnly.p.choose(pollsOnly.ws, 5, 2 * I, I))).toEqual(['c', 'd', 'a', 'e', 'b']);
  });

  it('polls every wallet at least once every N intervals, whatever the rates (N × budget ≥ fleet)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.record({ rate: fc.integer({ min: 0, max: 1_000 }), threshold: fc.integer({ min: 1, max: 100_000 }) }), { minLength: 2, maxLength: 30 }),
        fc.integer({ min: 0, max: 3 }),
        (n, specs, extra) => {
          const ws = specs.map((_, i) => wallet(`w${i}`));
          const budget = Math.ceil(ws.length / n) + extra;
          const p = new AccrualPlanner({ threshold: (w) => BigInt(specs[Number(w.name.slice(1))]!.threshold), maxIntervals: n });
          const pendingBase = new Map(ws.map((w) => [w.name, { base: 0, at: 0 }]));
          const last = new Map<string, number>();
          for (let k = 0; k < 40; k++) {
            const now = k * I;
            const chosen = p.choose(ws, budget, now, I);
            expect(chosen.length).toBeLessThanOrEqual(budget);
            chosen.forEach((w, slot) => {
              const at = now + (slot * I * 0.8) / chosen.length;
              const spec = specs[Number(w.name.slice(1))]!;
              const st = pendingBase.get(w.name)!;
              let pendingNow = st.base + (spec.rate * (at - st.at)) / 1000;
              p.observe(w, { pendingLamports: BigInt(Math.floor(pendingNow)) }, at);
              if (pendingNow >= spec.threshold) pendingNow = 0; // claimed
              pendingBase.set(w.name, { base: pendingNow, at });
              last.set(w.name, k);
            });
            for (const w of ws) {
              if (k >= n) expect(k - (last.get(w.name) ?? -1)).toBeLessThanOrEqual(n);
            }
          }
        },
      ),
      { numRuns: 300, seed: 42 },
    );
  });

  it('says the longest a wallet may wait for its turn, and none waits longer, whatever the budget (what staleness is judged by)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.record({ rate: fc.integer({ min: 0, max: 1_000 }), threshold: fc.integer({ min: 1, max: 100_000 }) }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 45 }),
        (n, specs, budget) => {
          const ws = specs.map((_, i) => wallet(`w${i}`));
          const p = new AccrualPlanner({ threshold: (w) => BigInt(specs[Number(w.name.slice(1))]!.threshold), maxIntervals: n });
          const bound = p.revisitIntervals(ws.length, budget);
          if (ws.length <= budget) expect(bound).toBe(1);
          const pending = new Map(ws.map((w) => [w.name, 0]));
          const last = new Map<string, number>();
          for (let k = 0; k < 60; k++) {
            for (const w of p.choose(ws, budget, k * I, I)) {
              const spec = specs[Number(w.name.slice(1))]!;
              const now = pending.get(w.name)! + spec.rate * 10;
              p.observe(w, { pendingLamports: BigInt(now) }, k * I);
              pending.set(w.name, now >= spec.threshold ? 0 : now);
              last.set(w.name, k);
            }
            for (const w of ws) expect(k - (last.get(w.name) ?? -1), `${w.name} at tick ${k}, bound ${bound}`).toBeLessThanOrEqual(bound);
          }
        },
      ),
      { numRuns: 300, seed: 43 },
    );
  });
});
