// The timestamp a signed request carries (src/executor/signing-guard.ts, SigningTime): strictly
// rising per wallet across this process and the database, so that no two requests of a wallet
// share a second (the claim message is `{wallet}|{ts}`: one second, one signature).
import { describe, expect, it } from 'vitest';
import { MAX_TS_AHEAD_S, SigningTime } from '../../src/executor/signing-guard.js';
import { FakeClock } from '../support/clock.js';
import { captureLog } from '../support/log.js';

const A = 'wallet-a';
const B = 'wallet-b';

/** The seconds each address signed, as the store keeps them (every attempt's request ts). */
type Signed = Map<string, Set<number>>;

function signed(entries: [string, number[]][] = []): Signed {
  return new Map(entries.map(([a, ts]) => [a, new Set(ts)]));
}

/** The store's two questions over `seconds`, answered as both adapters do (see the store contract tests). */
function storeOf(seconds: Signed) {
  return {
    lastRequestTs: (address: string) => {
      const all = [...(seconds.get(address) ?? [])];
      return all.length === 0 ? undefined : Math.max(...all);
    },
    requestTsFrom: (address: string, fromTs: number, limit: number) =>
      [...(seconds.get(address) ?? [])].filter((t) => t >= fromTs).sort((x, y) => x - y).slice(0, limit),
  };
}

function rig(seconds: Signed) {
  const clock = new FakeClock();
  const log = captureLog();
  const time = new SigningTime(clock, storeOf(seconds));
  const nowSec = () => Math.floor(clock.now() / 1000);
  /** What the next request of `address` carries, in seconds; recorded as the database would. */
  const next = async (address: string) => {
    const ts = (await time.next(address, log.logger)) / 1000;
    const mine = seconds.get(address) ?? new Set<number>();
    expect(mine.has(ts), `second ${ts} of ${address} signed twice`).toBe(false);
    seconds.set(address, mine.add(ts));
    return ts;
  };
  return { clock, log, next, nowSec };
}

describe('SigningTime', () => {
  it('gives each request of a wallet a newer second, even several in one second', async () => {
    const { next, nowSec } = rig(signed());
    const now = nowSec();
    expect([await next(A), await next(A), await next(A), await next(B)]).toEqual([now, now + 1, now + 2, now]);
  });

  it('after a restart, follows a burst the process before it left a few seconds ahead, instead of reusing its seconds', async () => {
    const { clock, log } = rig(signed());
    const now = Math.floor(clock.now() / 1000);
    // The last process signed 10 requests of A within a second, up to now + 9, and was killed.
    const restarted = rig(signed([[A, [now, now + 1, now + 2, now + 3, now + 4, now + 5, now + 6, now + 7, now + 8, now + 9]]]));
    restarted.clock.wall = clock.wall;
    expect(await restarted.next(A)).toBe(now + 10);
    expect(restarted.log.events('clock.skew')).toEqual([]);
    expect(log.events('clock.skew')).toEqual([]);
  });

  it('follows the database when another daemon signed for the wallet since this one did', async () => {
    const seconds = signed();
    const { next, nowSec } = rig(seconds);
    const now = nowSec();
    expect(await next(A)).toBe(now);
    seconds.get(A)!.add(now + 3);
    expect(await next(A)).toBe(now + 4);
  });

  it(`drops a last timestamp more than ${MAX_TS_AHEAD_S} s ahead (a clock that was wrong) with one warning, and rises from the clock's time`, async () => {
    const seconds = signed();
    const { next, nowSec, log, clock } = rig(seconds);
    const now = nowSec();
    seconds.set(A, new Set([now + 86_400]));
    expect(await next(A)).toBe(now);
    expect(await next(A)).toBe(now + 1);
    clock.wall += 5_000;
    expect(await next(A)).toBe(now + 5);
    expect(log.events('clock.skew')).toHaveLength(1);
    expect(log.events('clock.skew')[0]).toMatchObject({ level: 'warn', last_ts: now + 86_400, now_ts: now, ahead_s: 86_400 });
  });

  it(`follows a last timestamp up to ${MAX_TS_AHEAD_S} s ahead, and drops one at it`, async () => {
    const near = rig(signed());
    const now = near.nowSec();
    const justUnder = rig(signed([[A, [now + MAX_TS_AHEAD_S - 1]]]));
    expect(await justUnder.next(A)).toBe(now + MAX_TS_AHEAD_S);
    const at = rig(signed([[A, [now + MAX_TS_AHEAD_S]]]));
    expect(await at.next(A)).toBe(now);
    expect(at.log.events('clock.skew')).toHaveLength(1);
  });

  it('after a clock that was a day ahead, skips the seconds it signed when the corrected clock reaches them', async () => {
    const seconds = signed();
    const { next, nowSec, clock } = rig(seconds);
    const now = nowSec();
    // Signed while the clock was a day ahead: three requests, the second and third a few seconds apart.
    seconds.set(A, new Set([now + 86_400, now + 86_403, now + 86_404]));
    expect(await next(A)).toBe(now);
    clock.wall += 86_400_000; // a day later the clock reaches those seconds
    expect(await next(A)).toBe(now + 86_401);
    clock.wall += 2_000;
    expect(await next(A)).toBe(now + 86_402);
    expect(await next(A)).toBe(now + 86_405); // 86,403 and 86,404 are taken
    expect(await next(A)).toBe(now + 86_406); // past the newest dropped: follows its own seconds again
  });

  it('after a clock set an hour back, skips the seconds it signed an hour ago', async () => {
    const { next, nowSec, clock, log } = rig(signed());
    const hourAgo = nowSec();
    expect(await next(A)).toBe(hourAgo);
    clock.wall += 5_000;
    expect(await next(A)).toBe(hourAgo + 5);
    clock.wall += 3_600_000 - 5_000; // an hour of correct time: the clock now reads hourAgo + 3600
    expect(await next(A)).toBe(hourAgo + 3600);
    clock.wall -= 3_600_000; // set an hour back: it reads hourAgo again
    expect(await next(A)).toBe(hourAgo + 1);
    clock.wall += 4_000;
    expect(await next(A)).toBe(hourAgo + 4);
    expect(await next(A)).toBe(hourAgo + 6); // + 5 was signed an hour ago
    expect(log.events('clock.skew').length).toBeGreaterThan(0);
  });

  it(`never reuses a second when one wallet signs more than ${MAX_TS_AHEAD_S} requests within a second`, async () => {
    const { next, nowSec } = rig(signed());
    const now = nowSec();
    const got: number[] = [];
    for (let i = 0; i < MAX_TS_AHEAD_S + 10; i++) got.push(await next(A));
    expect(got).toEqual(Array.from({ length: MAX_TS_AHEAD_S + 10 }, (_, i) => now + i));
  });

  it('asks the store page by page when more seconds are taken than one answer holds', async () => {
    const seconds = signed();
    const { next, nowSec } = rig(seconds);
    const now = nowSec();
    const taken = Array.from({ length: 600 }, (_, i) => now + i);
    seconds.set(A, new Set([...taken, now + 86_400]));
    expect(await next(A)).toBe(now + 600);
  });
});
