// Issue 24 finding 2 and issue 25 finding 1, replayed against the real executor, the real sandbox
// (its ledger is what the server applied) and a real SQLite state:
// - a claim answered 500 before the server applied it, then a summary where pending dropped but
//   lifetime did not rise (with and without an epoch rollover): never "applied", no deposit sized
//   from it, the plan ends (claim_undetermined), an alert, the claim held for an operator;
// - a claim judged "not applied" only once its signed timestamp is beyond the window by the state
//   store's clock, whatever this machine's clock says;
// - a signed request that waited too long, or lost its lease while waiting, is not sent.
import { afterEach, describe, expect, it } from 'vitest';
import type { Rule } from '../../src/domain.js';
import { createAlertTracker, evaluateAlerts } from '../../src/service/alerts.js';
import { heldForOperator } from '../../src/store/plan-status.js';
import { MIN, openRig, SOL, type Rig } from './trust-rig.js';
import { CANARY_API_KEY } from '../e2e/helpers.js';

const CLAIM_THEN_HALF: Rule = {
  name: 'half',
  id: 'half',
  when: [{ field: 'pending_sol', op: 'gte', value: SOL / 10n }],
  do: [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'percent', ppm: 500_000 } }],
  limits: { oncePerEpoch: true, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
};

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const states = (r: Rig) => r.plans().map((p) => p.steps.map((s) => `${s.kind}:${s.state}`).join(','));
const posts = (r: Rig) => r.sent.map((p) => p.op);

/** The supervisor's alert evaluation over the state's unknown steps, as after a cycle. */
function alertsNow(r: Rig) {
  const unknown = r.store.unknownSteps();
  return evaluateAlerts(createAlertTracker(), {
    now: r.time.ours.now(),
    intervalMs: MIN,
    staleAfterIntervals: 3,
    unknownStepAfterMs: 15 * MIN,
    wallets: [],
    unknownSteps: unknown.map((s) => ({ id: s.id, plan: s.planId, wallet: 'w', kind: s.kind, since: s.updatedAt, held: heldForOperator(s) })),
  });
}

describe('issue 24 finding 2: a pending drop alone is not a claim', () => {
  it.each([
    { name: 'lifetime flat', rollover: false, lifetimeRise: 0n },
    { name: 'lifetime flat, the epoch rolled over meanwhile', rollover: true, lifetimeRise: 0n },
    { name: 'lifetime rose by the drop, but the epoch rolled over meanwhile', rollover: true, lifetimeRise: SOL / 2n },
  ])('claim 500 before applied, then pending dropped ($name): no deposit, the plan ends claim_undetermined, an alert, the claim held', async ({ rollover, lifetimeRise }) => {
    rig = await openRig({ rule: CLAIM_THEN_HALF, pendingLamports: SOL / 2n, lifetimeLamports: SOL, balanceLamports: 10n * SOL, claimSettleMs: 0 });
    const r = rig;
    r.fault({ kind: 'status5xx_before', match: { op: 'claim' }, status: 500 });
    // Reads: 1 the poll, 2 right before signing, 3 reconciliation: the summary the server lies in.
    r.beforeRead = (n) => {
      if (n !== 3) return;
      if (rollover) r.sandbox.world.advanceEpoch();
      r.sandbox.world.setWallet(r.wallet.address, { pendingLamports: 0n, lifetimeLamports: SOL + lifetimeRise });
    };
    await r.cycle();

    expect(r.ledger()).toEqual([]); // no claim, and above all no deposit paid from the 10 SOL balance
    expect(posts(r)).toEqual(['claim']);
    expect(states(r)).toEqual(['claim:unknown,deposit:skipped']);
    const plan = r.plans()[0];
    expect(plan?.status).toBe('blocked');
    expect(plan?.claimedLamports).toBeNull();
    expect(plan?.steps[0]?.resolution).toMatch(/^claim_undetermined: /);
    expect(plan?.steps[1]?.resolution).toMatch(/^claim_undetermined: /);
    expect(r.events('action.claim_undetermined')).toEqual([expect.objectContaining({ level: 'error', reason: 'claim_undetermined' })]);
    expect(r.events('plan.skipped')).toEqual([expect.objectContaining({ code: 'claim_undetermined' })]);
    expect(r.events('action.reconciled')).toEqual([]);
    const alerts = alertsNow(r);
    expect(alerts).toEqual([expect.objectContaining({ kind: 'claim_undetermined', change: 'opened', step: plan?.steps[0]?.id })]);
    expect(alerts[0]?.text).toContain(`autoclaim actions resolve ${plan?.steps[0]?.id ?? '?'}`);

    // Later turns: the claim is not re-sent, not judged again, and holds the wallet's next claim
    // (claim_in_doubt) even in a new epoch with rewards to claim.
    r.time.advance(30 * MIN);
    if (!rollover) r.sandbox.world.advanceEpoch();
    r.setPending(SOL);
    await r.cycle();
    await r.cycle();
    expect(posts(r)).toEqual(['claim']);
    expect(r.ledger()).toEqual([]);
    expect(r.events('action.claim_undetermined')).toHaveLength(1);

    // The operator settles it: the wallet claims again.
    const step = plan?.steps[0];
    if (step === undefined) throw new Error('no claim step');
    r.store.resolve(step.id, false, 'checked on chain: not applied');
    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);
  });

  it.each(['skipRemaining', 'holdForOperator'] as const)('the process dies at the %s of an undetermined claim: its plan still ends at the next turn, and a fixed deposit after the claim never goes', async (write) => {
    // Two writes: the skip of the rest of the plan and the hold on the claim. They were made the
    // other way round: dead between them, the next process found the claim held (so never judged
    // again, never ending the plan) and the deposit planned behind it, and an operator's `resolve
    // --applied` let the deposit go, which the plan had ended without (claim_undetermined: "its
    // plan ended"). Dead at the first write, nothing of either is recorded; at the second, the
    // rest is skipped and the claim is held at the next turn.
    const CLAIM_THEN_FIXED: Rule = { ...CLAIM_THEN_HALF, do: [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'fixed', lamports: SOL } }] };
    rig = await openRig({ rule: CLAIM_THEN_FIXED, pendingLamports: SOL / 2n, lifetimeLamports: SOL, balanceLamports: 10n * SOL, diesAtFirst: write });
    const r = rig;
    r.fault({ kind: 'apply_then_5xx', match: { op: 'claim' }, status: 500 });
    // Read 3, the reconciliation's: pending dropped, lifetime not (yet) risen.
    r.beforeRead = (n) => {
      if (n === 3) r.sandbox.world.setWallet(r.wallet.address, { pendingLamports: 0n, lifetimeLamports: SOL });
    };
    await expect(r.cycle()).rejects.toThrow(`died before ${write}`);
    r.restart();
    await r.cycle();
    expect(states(r)).toEqual(['claim:unknown,deposit:skipped']);

    // Checked on chain: applied. Nothing more of the plan runs.
    const step = r.plans()[0]?.steps[0];
    if (step === undefined) throw new Error('no claim step');
    r.store.resolve(step.id, true, 'checked on chain: applied');
    await r.cycle();
    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['claim']);
  });

  it('the same 500, then a summary that proves the claim (lifetime rose by what pending dropped): applied, the deposit is half of it', async () => {
    rig = await openRig({ rule: CLAIM_THEN_HALF, pendingLamports: SOL / 2n, lifetimeLamports: SOL, balanceLamports: 10n * SOL });
    const r = rig;
    r.fault({ kind: 'apply_then_5xx', match: { op: 'claim' }, status: 500 });
    await r.cycle();
    expect(r.ledger().map((e) => `${e.op} ${e.amountLamports}`)).toEqual([`claim ${SOL / 2n}`, `deposit ${SOL / 4n}`]);
    expect(states(r)).toEqual(['claim:acknowledged,deposit:acknowledged']);
    expect(r.events('action.claim_undetermined')).toEqual([]);
  });
});

describe('issue 25 finding 1: "not applied" only beyond the window, by the store\'s clock', () => {
  const SETTLE = 6 * MIN; // ts_window 5m + the 1m margin

  it('this machine\'s clock says the claim is 10 min old, the store\'s says seconds: it stays unknown (reconcile_deferred) and is not sent again until the store\'s clock passes the window', async () => {
    rig = await openRig({ rule: CLAIM_THEN_HALF, pendingLamports: SOL / 2n, lifetimeLamports: SOL, balanceLamports: 10n * SOL, claimSettleMs: SETTLE, tsWindowMs: 5 * MIN });
    const r = rig;
    r.fault({ kind: 'status5xx_before', match: { op: 'claim' }, status: 500 });
    await r.cycle();
    expect(states(r)).toEqual(['claim:unknown,deposit:planned']);

    // Our wall clock jumps 10 minutes ahead (as a clock 90 s fast, measuring a timestamp signed by
    // one 90 s slow, would see it older than it is); the store's clock does not.
    r.time.stepOurWall(10 * MIN);
    r.time.advance(MIN);
    await r.cycle();
    expect(posts(r)).toEqual(['claim']);
    expect(states(r)).toEqual(['claim:unknown,deposit:planned']);
    const deferred = r.events('action.reconcile_deferred').at(-1);
    expect(deferred).toMatchObject({ settle_ms: SETTLE });
    expect(Number(deferred?.['age_ms'])).toBeLessThan(SETTLE);

    // Beyond the window by the store's clock (our clock set right again, or the server would refuse
    // the new claim's timestamp): judged not applied, claimed again, the deposit follows.
    r.time.stepOurWall(-10 * MIN);
    r.time.advance(SETTLE);
    await r.cycle();
    expect(posts(r)).toEqual(['claim', 'claim', 'deposit']);
    expect(r.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);
  });

  it('the store\'s clock 90 s behind ours: the claim waits 90 s longer than our clock would have it wait', async () => {
    rig = await openRig({ rule: CLAIM_THEN_HALF, pendingLamports: SOL / 2n, lifetimeLamports: SOL, balanceLamports: 10n * SOL, claimSettleMs: SETTLE, tsWindowMs: 5 * MIN });
    const r = rig;
    r.time.storeOffset = -90_000;
    r.fault({ kind: 'status5xx_before', match: { op: 'claim' }, status: 500 });
    await r.cycle();
    r.time.advance(SETTLE + 30_000); // ours: 6.5 min; the store's: 5 min
    await r.cycle();
    expect(posts(r)).toEqual(['claim']);
    r.time.advance(MIN);
    await r.cycle();
    expect(posts(r)).toEqual(['claim', 'claim', 'deposit']);
  });
});

describe('issue 25 finding 1: the lease and the timestamp are checked again after every wait', () => {
  it('a claim held 2 min by the rate limiter (a quarter of a 5 min window is 75 s) goes back to planned unsent, and is signed again with a new timestamp', async () => {
    rig = await openRig({ rule: CLAIM_THEN_HALF, pendingLamports: SOL / 2n, lifetimeLamports: SOL, balanceLamports: 10n * SOL, tsWindowMs: 5 * MIN });
    const r = rig;
    r.beforeSend = (n) => {
      if (n === 1) r.limiter.pauseFor(2 * MIN); // as a 429's Retry-After would
    };
    await r.cycle();
    expect(r.ledger()).toEqual([]);
    expect(states(r)).toEqual(['claim:planned,deposit:planned']);
    expect(r.events('action.deferred').at(-1)?.['err']).toMatch(/^WITHHELD: .*signed timestamp is 120 s old/);
    expect(r.store.stepAttempts(r.plans()[0]?.steps[0]?.id ?? 0).map((a) => a.outcome)).toEqual(['not_sent']);

    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);
    const [first, second] = r.sent;
    expect(second?.ts).toBeGreaterThanOrEqual((first?.ts ?? 0) + 120);
    expect(second?.signature).not.toBe(first?.signature);
  });

  it('a short wait (under the bound) sends the request as signed', async () => {
    rig = await openRig({ rule: CLAIM_THEN_HALF, pendingLamports: SOL / 2n, lifetimeLamports: SOL, balanceLamports: 10n * SOL, tsWindowMs: 5 * MIN });
    const r = rig;
    r.beforeSend = (n) => {
      if (n === 1) r.limiter.pauseFor(30_000);
    };
    await r.cycle();
    expect(r.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);
  });

  it('the lease lost while the claim waited: not sent, back to planned', async () => {
    let holds = true;
    rig = await openRig({ rule: CLAIM_THEN_HALF, pendingLamports: SOL / 2n, balanceLamports: 10n * SOL, tsWindowMs: 5 * MIN, stillHolds: () => holds });
    const r = rig;
    r.beforeSend = () => {
      holds = false; // lost during the limiter's wait, after the check before sending
    };
    await r.cycle();
    expect(r.ledger()).toEqual([]);
    expect(states(r)).toEqual(['claim:planned,deposit:planned']);
    expect(r.events('action.deferred').at(-1)?.['err']).toMatch(/^WITHHELD: .*lost the wallet's lease/);
  });

  it('the lease lost while waiting, and the fenced write to put it back refused: not sent, left in flight for the new owner', async () => {
    let holds = true;
    rig = await openRig({ rule: CLAIM_THEN_HALF, pendingLamports: SOL / 2n, balanceLamports: 10n * SOL, tsWindowMs: 5 * MIN, stillHolds: () => holds, markNotSentFails: true });
    const r = rig;
    r.beforeSend = () => {
      holds = false;
    };
    await r.cycle();
    expect(r.ledger()).toEqual([]);
    expect(states(r)).toEqual(['claim:sending,deposit:planned']);
    expect(r.events('lease.fenced')).toEqual([expect.objectContaining({ level: 'warn', err: expect.stringMatching(/STATE_LEASE_LOST/) })]);
    // The new owner's recovery: in flight → unknown, judged only beyond the window (here at once: settle 0).
    expect(r.store.recoverInFlight().map((s) => s.state)).toEqual(['unknown']);
  });
});

describe('time and restarts review (helper 30): "not applied" only beyond the window by the service\'s clock too', () => {
  const SETTLE = 6 * MIN; // ts_window 5m + the 1m margin
  const AHEAD = 200_000; // more than the margin, less than the window: the service still accepts what we sign

  /** The signed request sent again as it was, as a proxy that held it would deliver it late. */
  async function deliverLate(r: Rig, n: number): Promise<number> {
    const p = r.sent[n];
    if (p === undefined) throw new Error(`no request ${n}`);
    const res = await fetch(p.url, { method: p.method, headers: { ...p.headers, authorization: `Bearer ${CANARY_API_KEY}` }, body: p.body });
    await res.arrayBuffer();
    return res.status;
  }

  it('this machine (and so its SQLite store) 200 s ahead of the service: a lost claim is not judged not applied while the service can still accept it, and a late copy of it is the one claim', async () => {
    rig = await openRig({ rule: CLAIM_THEN_HALF, pendingLamports: SOL / 2n, lifetimeLamports: SOL, balanceLamports: 10n * SOL, claimSettleMs: SETTLE, tsWindowMs: 5 * MIN });
    const r = rig;
    // One machine holds the state file: its clock is the store's.
    r.time.ourOffset = AHEAD;
    r.time.storeOffset = AHEAD;
    r.fault({ kind: 'status5xx_before', match: { op: 'claim' }, status: 500 });
    await r.cycle();
    expect(states(r)).toEqual(['claim:unknown,deposit:planned']);

    // 6 min 10 s later by every clock: beyond the window by ours, but the claim was signed 200 s
    // ahead of the service's clock, which accepts it for 170 s more.
    r.time.advance(SETTLE + 10_000);
    await r.cycle();
    expect(posts(r)).toEqual(['claim']);
    expect(states(r)).toEqual(['claim:unknown,deposit:planned']);
    expect(r.events('action.reconcile_deferred').at(-1)).toMatchObject({ settle_ms: SETTLE });

    // The first request arrives now: the service applies it.
    expect(await deliverLate(r, 0)).toBe(200);
    expect(r.ledger().map((e) => e.op)).toEqual(['claim']);

    // Beyond the window by the service's clock too: the summary shows the claim, which is applied.
    r.time.advance(4 * MIN);
    await r.cycle();
    expect(r.ledger().map((e) => `${e.op} ${e.amountLamports}`)).toEqual([`claim ${SOL / 2n}`, `deposit ${SOL / 4n}`]);
    expect(states(r)).toEqual(['claim:acknowledged,deposit:acknowledged']);
  });
});
