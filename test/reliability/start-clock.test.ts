// Time and restarts review (helper 30): a wall clock wrong when the daemon starts and set right
// by NTP before its first signature. The decision clock takes the wall time once, at start, and
// then only adds monotonic time: started a day ahead, it stayed a day ahead for the process's life,
// so plans recorded before the restart looked a day older than they were (cooldowns and the
// rolling day over early), while requests, signed by the corrected wall clock, were accepted. The
// service's Date arbitrates: a decision clock ahead of it and of the wall clock by more than
// alerts.clock_skew, while those two agree, is set back to them (never forward). Real cycle, SQLite
// store and sandbox; only time is fake.
import { afterEach, describe, expect, it } from 'vitest';
import { cooldownRule, DAY, HOUR, MIN, openRig, SOL, type Rig } from './trust-rig.js';

const EVERY_SIX_HOURS = cooldownRule({ oncePerEpoch: false, cooldownMs: 6 * HOUR });

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('a wall clock wrong at start, then set right', () => {
  it('restarted with the wall clock a day ahead, NTP sets it right before the first turn: the cooldown still runs from the plan before the restart', async () => {
    rig = await openRig({ rule: EVERY_SIX_HOURS, pendingLamports: SOL, lifetimeLamports: SOL, balanceLamports: 10n * SOL });
    const r = rig;
    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);

    r.time.advance(HOUR);
    r.time.stepOurWall(DAY); // the machine comes back with its clock a day ahead
    r.restart(); // the new process's decision clock starts from it
    r.time.stepOurWall(-DAY); // NTP sets it right a moment later
    r.setPending(SOL);
    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);
    expect(r.events('rule.skipped').at(-1)).toMatchObject({ reason: 'cooldown' });
    expect(r.events('clock.decisions_held_back')).toEqual([expect.objectContaining({ level: 'warn' })]);

    r.time.advance(5 * HOUR - MIN);
    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);
    r.time.advance(2 * MIN); // 6 h 1 min after the first plan
    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['claim', 'deposit', 'claim', 'deposit']);
    expect(r.events('clock.decisions_held_back')).toHaveLength(1);
  });

  it('a service whose Date is a day behind a right wall clock holds nothing back (the clock.skew warning says so instead)', async () => {
    rig = await openRig({ rule: EVERY_SIX_HOURS, pendingLamports: 0n, lifetimeLamports: SOL, balanceLamports: 10n * SOL });
    const r = rig;
    r.time.serverOffset = -DAY;
    await r.cycle();
    expect(r.events('poll.ok')).toHaveLength(1);
    expect(r.events('clock.decisions_held_back')).toEqual([]);
  });
});
