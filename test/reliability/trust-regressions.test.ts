// Issue 11, "What was seen", items 1, 2, 3 and 7, each replayed against the real executor and the
// real sandbox (whose ledger says what the server applied). The sandbox's `malformed` fault makes
// the lying answers; the rig's read tap makes pending jump between the decision and the signature;
// the rig's timeline makes our clock wrong for one run.
import { afterEach, describe, expect, it } from 'vitest';
import type { Rule } from '../../src/domain.js';
import { DAY, HOUR, MIN, openRig, SOL, type Rig } from './trust-rig.js';

const CLAIM_THEN_DEPOSIT_ALL: Rule = {
  name: 'sweep',
  id: 'sweep',
  when: [{ field: 'pending_sol', op: 'gte', value: SOL / 2n }],
  do: [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'all' } }],
  limits: { oncePerEpoch: false, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
};

/** The config's default limit: one plan per wallet and epoch. */
const ONCE_PER_EPOCH: Rule = { ...CLAIM_THEN_DEPOSIT_ALL, limits: { ...CLAIM_THEN_DEPOSIT_ALL.limits, oncePerEpoch: true } };

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const states = (r: Rig) => r.plans().map((p) => p.steps.map((s) => `${s.kind}:${s.state}`).join(','));
const posts = (r: Rig) => r.sent.map((p) => p.op);

describe('item 1: a 2xx is not "done" unless its body says so', () => {
  it.each([
    { name: '200 {"status":"failed"}', status: 200, body: '{"status":"failed"}', claim: 'rejected', deposit: 'skipped', plan: 'rejected' },
    {
      name: '200 {"error":{...}}',
      status: 200,
      body: '{"error":{"code":"claim_failed","message":"could not claim"}}',
      claim: 'rejected',
      deposit: 'skipped',
      plan: 'rejected',
    },
    { name: '202 {"status":"pending"}', status: 202, body: '{"status":"pending"}', claim: 'unknown', deposit: 'planned', plan: 'blocked' },
  ])('a claim answered $name (not applied) is $claim, and the deposit "all" is not sent', async ({ status, body, claim, deposit, plan }) => {
    // The wallet holds 100 SOL already: a deposit that followed a claim that did not happen would be paid from it.
    // A minute of settle keeps an unseen claim unknown rather than judged and re-sent at once.
    rig = await openRig({ rule: ONCE_PER_EPOCH, pendingLamports: SOL, balanceLamports: 100n * SOL, claimSettleMs: MIN });
    rig.fault({ kind: 'malformed', match: { op: 'claim' }, status, body, apply: false });
    await rig.cycle();

    expect(rig.ledger()).toEqual([]);
    expect(posts(rig)).toEqual(['claim']);
    expect(states(rig)).toEqual([`claim:${claim},deposit:${deposit}`]);
    expect(rig.plans()[0]?.status).toBe(plan);
    expect(rig.plans()[0]?.claimedLamports).toBeNull();
    expect(rig.events('action.acknowledged')).toEqual([]);
    expect(rig.steps.map((e) => `${e.kind}:${e.state}`)).toEqual([`claim:${claim}`]);
    if (claim === 'rejected') {
      expect(rig.events('action.rejected')).toHaveLength(1);
      expect(rig.plans()[0]?.steps[0]?.error).toMatch(/^refused: HTTP 200 /);
    } else {
      expect(rig.plans()[0]?.steps[0]?.error).toBe('answer does not say it was applied: HTTP 202 status "pending": neither applied nor refused');
    }

    // Next cycle, still inside the settle window: nothing more goes out.
    await rig.cycle();
    expect(rig.ledger()).toEqual([]);
    expect(posts(rig)).toEqual(['claim']);
  });

  it('an unknown (202 pending) claim is reconciled from the summary before its deposit: not applied → claimed afresh, then the deposit of what was claimed', async () => {
    rig = await openRig({ rule: ONCE_PER_EPOCH, pendingLamports: SOL, balanceLamports: 100n * SOL, claimSettleMs: MIN });
    rig.fault({ kind: 'malformed', match: { op: 'claim' }, status: 202, body: '{"status":"pending"}', apply: false });
    await rig.cycle();
    rig.time.advance(2 * MIN);
    await rig.cycle();
    expect(rig.ledger().map((e) => `${e.op} ${e.amountLamports}`)).toEqual([`claim ${SOL}`, `deposit ${SOL}`]);
    expect(states(rig)[0]).toBe('claim:acknowledged,deposit:acknowledged');
  });

  it.each([
    { name: '200 {"status":"rejected"}', status: 200, body: '{"status":"rejected"}', want: 'rejected', plan: 'rejected' },
    { name: '200 {"error":"insufficient_balance"}', status: 200, body: '{"error":"insufficient_balance"}', want: 'rejected', plan: 'rejected' },
    { name: '200 {}', status: 200, body: '{}', want: 'unknown', plan: 'blocked' },
    { name: '202 {"status":"submitted"}', status: 202, body: '{"status":"submitted"}', want: 'unknown', plan: 'blocked' },
  ])('a deposit answered $name is $want, not acknowledged', async ({ status, body, want, plan }) => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL, balanceLamports: 100n * SOL });
    rig.fault({ kind: 'malformed', match: { op: 'deposit' }, status, body, apply: false });
    await rig.cycle();

    expect(rig.ledger().map((e) => e.op)).toEqual(['claim']);
    expect(states(rig)).toEqual([`claim:acknowledged,deposit:${want}`]);
    expect(rig.plans()[0]?.status).toBe(plan);
    expect(rig.events('action.acknowledged').map((e) => e['msg'])).toEqual(['claim acknowledged']);

    // An unknown deposit is never re-sent, and holds the wallet's next transfers.
    rig.setPending(SOL);
    await rig.cycle();
    expect(posts(rig).filter((op) => op === 'deposit')).toHaveLength(want === 'unknown' ? 1 : 2);
  });
});

describe('item 2: claimed_sol is bounded by the pending seen right before the claim', () => {
  it('pending 0.5, the answer says claimed_sol 50: the deposit "all" moves 0.5 SOL, an anomaly is logged at error', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL / 2n, balanceLamports: 100n * SOL });
    // The server applies the claim (0.5 SOL) but says it claimed 50.
    rig.fault({ kind: 'malformed', match: { op: 'claim' }, status: 200, body: '{"status":"success","claimed_sol":50,"tx":"t1"}' });
    await rig.cycle();

    expect(rig.ledger().map((e) => `${e.op} ${e.amountLamports}`)).toEqual([`claim ${SOL / 2n}`, `deposit ${SOL / 2n}`]);
    const [plan] = rig.plans();
    expect(plan?.claimedLamports).toBe(SOL / 2n);
    expect(plan?.steps[1]?.amountLamports).toBe(SOL / 2n);
    expect(states(rig)).toEqual(['claim:acknowledged,deposit:acknowledged']);

    const anomalies = rig.events('action.anomaly');
    expect(anomalies).toHaveLength(1);
    expect(anomalies[0]).toMatchObject({ level: 'error', claimed_sol: '50', seen_sol: '0.5' });
    expect(rig.steps.filter((e) => e.state === 'anomaly')).toEqual([
      { kind: 'claim', state: 'anomaly', wallet: 'w', plan: plan?.id, step: plan?.steps[0]?.id, amountLamports: 50n * SOL },
    ]);
    expect(rig.steps.find((e) => e.kind === 'claim' && e.state === 'acknowledged')?.amountLamports).toBe(SOL / 2n);
    // The acknowledgement's line shows what was counted and, beside it, what the server said (issue 27).
    expect(rig.events('action.acknowledged').find((e) => e['kind'] === 'claim')).toMatchObject({ amount_sol: '0.5', server_claimed_sol: '50', seen_sol: '0.5' });
  });

  it('a claimed_sol at or under what was seen is taken as said (a partial claim sizes the deposit)', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL, balanceLamports: 100n * SOL });
    rig.fault({ kind: 'malformed', match: { op: 'claim' }, status: 200, body: '{"status":"claimed","claimed_sol":0.25}' });
    await rig.cycle();
    expect(rig.ledger('deposit').map((e) => e.amountLamports)).toEqual([SOL / 4n]);
    expect(rig.events('action.anomaly')).toEqual([]);
  });
});

describe('a claim answered without claimed_sol sizes what follows by what is proved to have arrived (helper 38)', () => {
  const OK_NO_AMOUNT = '{"status":"success","tx":"t1"}';

  it('the server claims 0.25 of the 1 SOL seen and does not say so: the deposit "all" moves 0.25 SOL (lifetime\'s rise), not 1 SOL of the wallet\'s own balance', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL, balanceLamports: 100n * SOL });
    rig.fault({ kind: 'malformed', match: { op: 'claim' }, status: 200, body: OK_NO_AMOUNT, apply: false });
    // What the server did with the claim: a quarter of it arrived (a partial claim, or a fee), the answer says only "success".
    const address = rig.wallet.address;
    rig.beforeSend = (n) => {
      if (n === 1) rig?.sandbox.world.setWallet(address, { pendingLamports: (3n * SOL) / 4n, lifetimeLamports: SOL / 4n, balanceLamports: 100n * SOL + SOL / 4n });
    };
    await rig.cycle();

    expect(rig.ledger().map((e) => `${e.op} ${e.amountLamports}`)).toEqual([`deposit ${SOL / 4n}`]);
    expect(rig.plans()[0]?.claimedLamports).toBe(SOL / 4n);
    expect(states(rig)).toEqual(['claim:acknowledged,deposit:acknowledged']);
    expect(rig.events('action.acknowledged').find((e) => e['kind'] === 'claim')).toMatchObject({ amount_sol: '0.25', seen_sol: '1' });
  });

  it('the server says "success" and nothing arrived (no lifetime rise): the deposit "all" is skipped (claim_unproved), nothing is paid from the balance', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL, balanceLamports: 100n * SOL });
    rig.fault({ kind: 'malformed', match: { op: 'claim' }, status: 200, body: OK_NO_AMOUNT, apply: false });
    await rig.cycle();

    expect(rig.ledger()).toEqual([]);
    expect(posts(rig)).toEqual(['claim']);
    const [plan] = rig.plans();
    expect(plan?.claimedLamports).toBeNull();
    expect(states(rig)).toEqual(['claim:acknowledged,deposit:skipped']);
    expect(rig.events('action.claim_unproved')).toEqual([expect.objectContaining({ level: 'warn', seen_sol: '1' })]);
    expect(rig.events('plan.skipped')).toEqual([expect.objectContaining({ code: 'claim_unproved' })]);
    expect(rig.steps.map((e) => `${e.kind}:${e.state}`)).toEqual(['claim:acknowledged', 'deposit:skipped']);
    // The claim's acknowledgement names no amount: none is proved.
    expect(rig.steps[0]?.amountLamports).toBeUndefined();
  });

  it('the claim is recorded acknowledged before the summary after it is read: a stop, crash or lost lease during that read leaves no applied claim `sending` (helper 42)', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL, balanceLamports: 100n * SOL });
    rig.fault({ kind: 'malformed', match: { op: 'claim' }, status: 200, body: OK_NO_AMOUNT });
    const seen: string[] = [];
    rig.beforeRead = (n) => {
      const claim = rig?.plans()[0]?.steps[0];
      if (n === 3) seen.push(`${claim?.state} ${rig?.plans()[0]?.claimedLamports}`);
    };
    await rig.cycle();
    // Before: `sending null` — the answer was held in memory through a read with its retries and the
    // rate limiter's queue, and a daemon stopped there found the claim unknown at its next start.
    expect(seen).toEqual(['acknowledged null']);
    expect(rig.plans()[0]?.claimedLamports).toBe(SOL);
    expect(rig.ledger().map((e) => `${e.op} ${e.amountLamports}`)).toEqual([`claim ${SOL}`, `deposit ${SOL}`]);
  });

  it('the summary after the claim cannot be read: the claim stays acknowledged, the deposit "all" is skipped (claim_unproved)', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL, balanceLamports: 100n * SOL });
    rig.fault({ kind: 'malformed', match: { op: 'claim' }, status: 200, body: OK_NO_AMOUNT });
    rig.beforeRead = (n) => {
      if (n === 3) rig?.fault({ kind: 'rate_limit', match: { op: 'summary' }, retryAfterSec: 2, times: 5 });
    };
    await rig.cycle();
    expect(rig.ledger().map((e) => `${e.op} ${e.amountLamports}`)).toEqual([`claim ${SOL}`]);
    expect(states(rig)).toEqual(['claim:acknowledged,deposit:skipped']);
    expect(rig.plans()[0]?.claimedLamports).toBeNull();
    expect(rig.events('action.claim_unproved')).toEqual([expect.objectContaining({ reason: expect.stringMatching(/could not be read/) })]);
  });

  it('a claim applied in full without claimed_sol: the deposit "all" moves what lifetime rose by', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL, balanceLamports: 100n * SOL });
    rig.fault({ kind: 'malformed', match: { op: 'claim' }, status: 200, body: OK_NO_AMOUNT });
    await rig.cycle();
    expect(rig.ledger().map((e) => `${e.op} ${e.amountLamports}`)).toEqual([`claim ${SOL}`, `deposit ${SOL}`]);
    expect(rig.events('action.claim_unproved')).toEqual([]);
  });
});

describe('item 3: every limit is judged again right before signing', () => {
  const capped: Rule = { ...CLAIM_THEN_DEPOSIT_ALL, limits: { ...CLAIM_THEN_DEPOSIT_ALL.limits, maxLamportsPerDay: SOL } };

  it('max_sol_per_day 1: 0.6 pending when decided, 50 when about to sign → no claim is sent, the plan is skipped (max_sol_per_day)', async () => {
    rig = await openRig({ rule: capped, pendingLamports: (6n * SOL) / 10n, balanceLamports: 100n * SOL, maxLamportsPerAction: 100n * SOL });
    const seen: bigint[] = [];
    rig.beforeRead = (n) => {
      if (n === 2) rig?.setPending(50n * SOL); // after the decision's read, before the executor's
      seen.push(rig?.sandbox.world.summary(rig.wallet.address).pendingLamports ?? -1n);
    };
    await rig.cycle();

    expect(seen).toEqual([(6n * SOL) / 10n, 50n * SOL]);
    expect(rig.sent).toEqual([]);
    expect(rig.ledger()).toEqual([]);
    const [plan] = rig.plans();
    expect(plan?.estimateLamports).toBe((6n * SOL) / 10n);
    expect(states(rig)).toEqual(['claim:skipped,deposit:skipped']);
    expect(plan?.steps[0]?.resolution).toMatch(/^max_sol_per_day 1: 0 SOL in the last 24h \+ 50 SOL now = 50 SOL$/);
    expect(rig.events('plan.skipped')).toMatchObject([{ code: 'max_sol_per_day', plan: plan?.id }]);
    expect(rig.events('action.sent')).toEqual([]);
  });

  it('the same jump within the day limit goes out, for what is seen at signing', async () => {
    rig = await openRig({ rule: capped, pendingLamports: (6n * SOL) / 10n, balanceLamports: 100n * SOL });
    rig.beforeRead = (n) => {
      if (n === 2) rig?.setPending((8n * SOL) / 10n);
    };
    await rig.cycle();
    expect(rig.ledger().map((e) => `${e.op} ${e.amountLamports}`)).toEqual([`claim ${(8n * SOL) / 10n}`, `deposit ${(8n * SOL) / 10n}`]);
  });

  it('pending falling under the condition between the decision and the signature: the claim is not sent (condition)', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL });
    rig.beforeRead = (n) => {
      if (n === 2) rig?.setPending(SOL / 10n);
    };
    await rig.cycle();
    expect(rig.sent).toEqual([]);
    expect(rig.events('plan.skipped')).toMatchObject([{ code: 'condition' }]);
  });

  it('max_sol_per_action: pending above the cap at signing is refused (rejected), never sent', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL, maxLamportsPerAction: 10n * SOL });
    rig.beforeRead = (n) => {
      if (n === 2) rig?.setPending(50n * SOL);
    };
    await rig.cycle();
    expect(rig.sent).toEqual([]);
    expect(states(rig)).toEqual(['claim:rejected,deposit:skipped']);
    expect(rig.events('action.refused')).toMatchObject([{ level: 'error', reason: 'max_sol_per_action', amount_sol: '50', max_sol: '10' }]);
  });
});

describe('item 7: a clock that was wrong once does not poison later signatures', () => {
  it('signed with the clock a day ahead, then the clock fixed: the next request carries the clock\'s time, with a clock.skew warning', async () => {
    // A server that tolerates a day of skew, so the wrong run is applied and its ts recorded.
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL, balanceLamports: 0n, tsWindowSec: 3 * 86_400 });
    rig.time.ourOffset = DAY;
    await rig.cycle();
    expect(rig.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);
    const ahead = Math.max(...rig.sent.map((p) => p.ts));
    expect(ahead).toBeGreaterThan(rig.time.server.now() / 1000 + DAY / 1000 - 60);
    expect(rig.events('clock.skew')).toEqual([]);

    // The clock is fixed and the process restarted: only the state file remembers the day-ahead ts.
    rig.time.ourOffset = 0;
    rig.time.advance(HOUR);
    rig.restart();
    rig.setPending(SOL);
    await rig.cycle();

    const nowSec = Math.floor(rig.time.ours.now() / 1000);
    const next = rig.sent.slice(2);
    expect(next.map((p) => p.op)).toEqual(['claim', 'deposit']);
    for (const p of next) {
      expect(p.ts).toBeGreaterThanOrEqual(nowSec);
      // The clock's time, give or take the seconds a cycle takes: not the day-ahead one followed.
      expect(p.ts).toBeLessThanOrEqual(nowSec + 5);
    }
    // Still strictly rising within the new run: the deposit does not reuse the claim's second.
    expect(next[1]!.ts).toBeGreaterThan(next[0]!.ts);
    const skew = rig.events('clock.skew');
    expect(skew).toHaveLength(1);
    expect(skew[0]).toMatchObject({ level: 'warn', last_ts: ahead, now_ts: nowSec });
    expect(Number(skew[0]!['ahead_s'])).toBeGreaterThan(DAY / 1000 - 3_600 - 60);
  });

  it('the same within one process (the in-memory last ts is from the future too)', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL, tsWindowSec: 3 * 86_400 });
    rig.time.ourOffset = DAY;
    await rig.cycle();
    rig.time.ourOffset = 0;
    rig.setPending(SOL);
    await rig.cycle();
    const nowSec = Math.floor(rig.time.ours.now() / 1000);
    expect(rig.sent.slice(2).map((p) => p.ts - nowSec).every((d) => d >= 0 && d <= 5)).toBe(true);
    expect(rig.events('clock.skew').map((e) => e['level'])).toEqual(['warn']);
  });

  it('a strict server refuses the day-ahead request naming its timestamp: clock.skew at error; once the clock is fixed the next claim is accepted', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL });
    rig.time.ourOffset = DAY;
    await rig.cycle();
    expect(rig.ledger()).toEqual([]);
    expect(posts(rig)).toEqual(['claim']);
    // Refused, not acknowledged: `rejected`, or `failed` where a refusal of the request itself is told apart.
    expect(states(rig)[0]).toMatch(/^claim:(rejected|failed),deposit:skipped$/);
    expect(rig.events('clock.skew')).toMatchObject([{ level: 'error', status: 400 }]);

    rig.time.ourOffset = 0;
    rig.restart();
    await rig.cycle();
    expect(rig.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);
    expect(rig.events('clock.skew').map((e) => e['level'])).toEqual(['error', 'warn']);
  });

  it('in one process, with the clock standing still, timestamps keep rising one second a request, with no clock.skew warning', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT_ALL, pendingLamports: SOL });
    await rig.cycle();
    rig.setPending(SOL);
    await rig.cycle();
    const ts = rig.sent.map((p) => p.ts);
    expect(ts).toHaveLength(4);
    expect(new Set(ts).size).toBe(4);
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
    expect(rig.events('clock.skew')).toEqual([]);
  });
});
