// The timestamp a signed request carries (src/worker/signing-guard.ts, SigningTime): strictly
// rising per wallet across this process and the database, so that no two requests of a wallet
// share a second (the claim message is `{wallet}|{ts}`: one second, one signature).
import { describe, expect, it } from 'vitest';
import { MAX_TS_AHEAD_S, SigningTime } from '../../src/worker/signing-guard.js';
import { FakeClock } from '../support/clock.js';
import { captureLog } from '../support/log.js';

const A = 'wallet-a';
const B = 'wallet-b';

function rig(stored: Map<string, number>) {
  const clock = new FakeClock();
  const log = captureLog();
  const time = new SigningTime(clock, (address) => stored.get(address));
  const nowSec = () => Math.floor(clock.now() / 1000);
  /** What the next request of `address` carries, in seconds; recorded as the database would. */
  const next = async (address: string) => {
    const ts = (await time.next(address, log.logger)) / 1000;
    stored.set(address, Math.max(stored.get(address) ?? 0, ts));
    return ts;
  };
  return { clock, log, next, nowSec };
}

describe('SigningTime', () => {
  it('gives each request of a wallet a newer second, even several in one second', async () => {
    const { next, nowSec } = rig(new Map());
    const now = nowSec();
    expect([await next(A), await next(A), await next(A), await next(B)]).toEqual([now, now + 1, now + 2, now]);
  });

  it('after a restart, follows a burst the process before it left a few seconds ahead, instead of reusing its seconds', async () => {
    const { clock, log } = rig(new Map());
    const now = Math.floor(clock.now() / 1000);
    // The last process signed 10 requests of A within a second, up to now + 9, and was killed.
    const stored = new Map([[A, now + 9]]);
    const restarted = rig(stored);
    restarted.clock.wall = clock.wall;
    expect(await restarted.next(A)).toBe(now + 10);
    expect(restarted.log.events('clock.skew')).toEqual([]);
    expect(log.events('clock.skew')).toEqual([]);
  });

  it('follows the database when another daemon signed for the wallet since this one did', async () => {
    const stored = new Map<string, number>();
    const { next, nowSec } = rig(stored);
    const now = nowSec();
    expect(await next(A)).toBe(now);
    stored.set(A, now + 3);
    expect(await next(A)).toBe(now + 4);
  });

  it(`drops a last timestamp more than ${MAX_TS_AHEAD_S} s ahead (a clock that was wrong) with one warning, and rises from the clock's time`, async () => {
    const stored = new Map<string, number>();
    const { next, nowSec, log, clock } = rig(stored);
    const now = nowSec();
    stored.set(A, now + 86_400);
    expect(await next(A)).toBe(now);
    expect(await next(A)).toBe(now + 1);
    clock.wall += 5_000;
    expect(await next(A)).toBe(now + 5);
    expect(log.events('clock.skew')).toHaveLength(1);
    expect(log.events('clock.skew')[0]).toMatchObject({ level: 'warn', last_ts: now + 86_400, now_ts: now, ahead_s: 86_400 });
  });

  it(`follows a last timestamp up to ${MAX_TS_AHEAD_S} s ahead, and drops one at it`, async () => {
    const near = rig(new Map());
    const now = near.nowSec();
    const justUnder = rig(new Map([[A, now + MAX_TS_AHEAD_S - 1]]));
    expect(await justUnder.next(A)).toBe(now + MAX_TS_AHEAD_S);
    const at = rig(new Map([[A, now + MAX_TS_AHEAD_S]]));
    expect(await at.next(A)).toBe(now);
    expect(at.log.events('clock.skew')).toHaveLength(1);
  });
});
