// The accrual planner keeps its ranking in heaps between ticks; the rule it implements is the
// whole-list sort it replaced (reference-planner.ts). Over random histories (fleets, thresholds
// changed by reloads, budgets, busy wallets, polls seen, claims) both must choose the same wallets
// in the same order at every tick.
import { describe, expect, it } from 'vitest';
import type { WalletConfig } from '../../src/domain.js';
import { AccrualPlanner } from '../../src/scheduler/priority.js';
import { ReferenceAccrualPlanner } from './reference-planner.js';
import { prng as rng } from '../support/prng.js';

const wallet = (name: string): WalletConfig => ({ name, address: name, key: { env: 'X' }, rules: ['r'] });

function history(seed: number): void {
  const random = rng(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
  const chance = (p: number): boolean => random() < p;
  // At most 60 wallets: the tracks of wallets out of the list are never pruned, in either planner.
  const universe = Array.from({ length: int(1, 60) }, (_, i) => wallet(`w${i}`));
  const thresholds = new Map<string, bigint | undefined>();
  const drawThresholds = (): void => {
    for (const w of universe) thresholds.set(w.name, chance(0.15) ? undefined : BigInt(int(1, 2_000_000)));
  };
  drawThresholds();
  const opts = { threshold: (w: WalletConfig) => thresholds.get(w.name), maxIntervals: int(1, 6), requestsPerClaim: int(0, 3), smoothing: chance(0.5) ? undefined : random() };
  const planner = new AccrualPlanner(opts);
  const reference = new ReferenceAccrualPlanner(opts);
  const rates = new Map(universe.map((w) => [w.name, chance(0.2) ? 0 : int(1, 400)]));
  const pending = new Map(universe.map((w) => [w.name, BigInt(int(0, 1_000_000))]));
  const intervalMs = chance(0.5) ? 10_000 : 60_000;
  let list: WalletConfig[] = universe.filter(() => chance(0.9));
  let now = int(0, 100_000);
  let seenAt = now;
  const observe = (w: WalletConfig, at: number): void => {
    const p = (pending.get(w.name) ?? 0n) + BigInt(Math.floor(((rates.get(w.name) ?? 0) * (at - seenAt)) / 1000));
    // Sometimes a claim (or a new epoch): pending drops.
    const seen = chance(0.1) ? p / 3n : p;
    pending.set(w.name, seen);
    planner.observe(w, { pendingLamports: seen }, at);
    reference.observe(w, { pendingLamports: seen }, at);
  };
  for (let tick = 0; tick < 60; tick++) {
    if (chance(0.08)) {
      // A reload or a lease round: a new list (maybe the same wallets), thresholds read again.
      if (chance(0.5)) drawThresholds();
      list = chance(0.3) ? [...list] : universe.filter(() => chance(0.85));
    }
    const busy = new Set(universe.filter(() => chance(0.1)).map((w) => w.name));
    const budget = chance(0.05) ? Number.POSITIVE_INFINITY : chance(0.1) ? random() * list.length : int(0, Math.max(1, Math.ceil(list.length / 2)));
    const idle = list.filter((w) => !busy.has(w.name));
    const got = planner.choose(list, budget, now, intervalMs, busy).map((w) => w.name);
    const want = reference.choose(idle, budget, now, intervalMs).map((w) => w.name);
    expect(got, `seed ${seed}, tick ${tick}`).toEqual(want);
    // The chosen are polled over the window, in order; a few others are seen too (`autoclaim poll`).
    const seen = [...got.map((name) => universe.find((w) => w.name === name) as WalletConfig), ...universe.filter(() => chance(0.03))];
    let at = now;
    for (const w of seen) {
      at += chance(0.1) ? 0 : int(1, Math.floor((0.8 * intervalMs) / Math.max(1, seen.length)));
      observe(w, at);
    }
    seenAt = at;
    // Ticks are an interval apart (exactly, so that due times tie across rankings), or give or
    // take timer jitter; now and then one comes early or late.
    now += chance(0.1) ? int(0, 2 * intervalMs) : chance(0.6) ? intervalMs : intervalMs + int(-50, 50);
  }
}

describe('AccrualPlanner, kept ranked between ticks', () => {
  it('chooses what the whole-list sort chooses, at every tick of random histories', () => {
    const base = Number(process.env.PLANNER_SEED ?? 1);
    for (let seed = base; seed < base + 200; seed++) history(seed);
  });
});
