// The fleet keeps its wallets in order of last success, so staleness, the last success and the
// totals are read without scanning every wallet; the stale alert reads only the wallets stale or
// with an episode open. Over random histories (reloads that add, drop and rename wallets, restores
// from the state file, polls, a clock that steps back, a cluster's changing scope) every read must
// equal the plain scan over all wallets, and the alert must open and close exactly as it does when
// given every wallet.
import { describe, expect, it } from 'vitest';
import { createAlertTracker, evaluateAlerts, type AlertInputs } from '../../src/service/alerts.js';
import { createFleet, type FleetWallet, type WalletView } from '../../src/service/fleet.js';
import { prng as rng } from '../support/prng.js';

const MIN = 60_000;

/** The reads as a plain scan over the wallets in scope, as they were written before. */
function scan(wallets: WalletView[], now: number, staleAfterMs: number, since: number) {
  let last: number | undefined;
  for (const w of wallets) if (w.lastOkAt !== undefined && (last === undefined || w.lastOkAt > last)) last = w.lastOkAt;
  const known = wallets.filter((w) => w.pendingLamports !== undefined);
  known.sort((a, b) => (a.pendingLamports === b.pendingLamports ? a.name.localeCompare(b.name) : (b.pendingLamports ?? 0n) > (a.pendingLamports ?? 0n) ? 1 : -1));
  return {
    last,
    stale: wallets.filter((w) => now - (w.lastOkAt ?? since) > staleAfterMs).length,
    pending: wallets.reduce((s, w) => s + (w.pendingLamports ?? 0n), 0n),
    lifetime: wallets.reduce((s, w) => s + (w.lifetimeLamports ?? 0n), 0n),
    top: known.slice(0, 5).map((w) => w.name),
  };
}

function history(seed: number): void {
  const random = rng(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
  const chance = (p: number): boolean => random() < p;
  const universe = Array.from({ length: int(1, 40) }, (_, i) => `A${i}`);
  const scoped = chance(0.3);
  let held = new Set(universe.filter(() => chance(0.7)));
  const fleet = createFleet(scoped ? { scope: () => held } : {});
  const since = 1_000_000;
  let now = since;
  let names = new Map(universe.map((a) => [a, `w${a}`]));
  let configured: FleetWallet[] = [];
  const reconfigure = (): void => {
    // Some wallets renamed (a rename keeps the history), some swapped out.
    if (chance(0.3)) names = new Map([...names].map(([a, n]) => [a, chance(0.2) ? `${n}x` : n]));
    configured = universe.filter(() => chance(0.8)).map((address) => ({ address, name: names.get(address) as string }));
    fleet.configure(configured);
  };
  reconfigure();
  const full = createAlertTracker();
  const partial = createAlertTracker();
  const staleAfterIntervals = int(1, 4);
  for (let step = 0; step < 150; step++) {
    const r = random();
    if (r < 0.05) reconfigure();
    else if (r < 0.1) {
      fleet.restore(
        universe.filter(() => chance(0.3)).map((address) => ({
          address,
          lastOkAt: chance(0.1) ? null : now - int(0, 10 * MIN),
          pendingLamports: chance(0.2) ? null : BigInt(int(0, 1000)),
          lifetimeLamports: chance(0.2) ? null : BigInt(int(0, 5000)),
        })),
      );
    } else if (r < 0.15 && scoped) held = new Set(universe.filter(() => chance(0.7)));
    else if (r < 0.85) {
      for (let k = int(1, 4); k > 0; k--) {
        const address = universe[int(0, universe.length - 1)] as string;
        // Now and then the wall clock steps back: a success older than the one before.
        const at = chance(0.05) ? now - int(0, 5 * MIN) : now + int(0, 1000);
        fleet.pollOk(address, { pendingLamports: BigInt(int(0, 1000)), lifetimeLamports: chance(0.2) ? null : BigInt(int(0, 5000)) }, at);
      }
    }
    now += int(0, MIN) + 1000;
    const intervalMs = chance(0.9) ? MIN : 2 * MIN;
    const staleAfterMs = staleAfterIntervals * intervalMs;
    const all = [...fleet.wallets()];
    const want = scan(all, now, staleAfterMs, since);
    const at = `seed ${seed}, step ${step}`;
    expect(fleet.lastSuccessAt(), at).toBe(want.last);
    expect(fleet.staleCount(now, staleAfterMs, since), at).toBe(want.stale);
    expect(fleet.pendingTotal(), at).toBe(want.pending);
    expect(fleet.lifetimeTotal(), at).toBe(want.lifetime);
    expect(fleet.topPending(5).map((w) => w.name), at).toEqual(want.top);
    const inputs = (wallets: WalletView[]): AlertInputs => ({
      now,
      intervalMs,
      staleAfterIntervals,
      unknownStepAfterMs: 15 * MIN,
      wallets: wallets.map((w) => ({ name: w.name, lastOkAt: w.lastOkAt, since })),
      unknownSteps: [],
    });
    const watched = fleet.staleOrNamed(now, staleAfterMs, since, partial.openOf('wallet_stale'));
    expect(evaluateAlerts(partial, inputs(watched)), at).toEqual(evaluateAlerts(full, inputs(all)));
  }
}

describe('the fleet read without scanning it', () => {
  it('answers as the scan over every wallet, and the stale alert fires and clears as over every wallet', () => {
    const base = Number(process.env.FLEET_SEED ?? 1);
    for (let seed = base; seed < base + 60; seed++) history(seed);
  });
});
