// Helper h29a: the wait for a read an epoch behind (h28d, recheck.ts `claimWaitsForEpoch`) is a
// rule plan's. The executor let the claim past "nothing to claim" whenever the read was behind,
// also for a one-off `send claim`, whose recheck returns before the epoch is judged (an operator
// decided it): a read at midnight from a backend not turned yet, with nothing pending, signed and
// sent a claim of nothing, where it had been skipped as "nothing to claim". Replayed against the
// real sandbox (which refuses it: nothing_to_claim), the real client and executor (trust-rig.ts).
import { afterEach, expect, it } from 'vitest';
import { cooldownRule, HOUR, openRig, SOL, type Rig } from './trust-rig.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

it("a one-off claim whose read is an epoch behind with nothing pending is not signed: nothing to claim, as before the wait", async () => {
  const r = (rig = await openRig({ rule: cooldownRule({}), pendingLamports: 0n }));
  r.time.advance(18 * HOUR + 1_000); // 00:00:01 UTC: the day after the timeline's
  const next = r.sandbox.world.epoch();
  // `autoclaim send claim`'s plan, recorded on a read of the new epoch (send.ts).
  r.store.insertPlan(
    { wallet: r.wallet.name, address: r.wallet.address, rule: '@send:x', epoch: next, seq: 0, steps: [{ kind: 'claim' }], estimateLamports: SOL, manualId: 'x' },
    { dry: false, reason: 'autoclaim send: claim' },
  );
  // The turn's poll from a backend in the new epoch; the claim's read from one 2 s behind.
  r.beforeRead = (n) => {
    r.time.serverOffset = n === 2 ? -2_000 : 0;
  };
  await r.cycle();
  r.beforeRead = undefined;
  r.time.serverOffset = 0;
  expect(r.sent).toEqual([]);
  expect(r.events('plan.skipped').map((e) => e['reason'])).toEqual(['nothing to claim']);
});
