// `autoclaim prune`'s deletion (store/sqlite/prune.ts) on a real state file: settled history older
// than the cutoff goes, with its counts; every row an exactly-once guard reads stays, each shown by
// the guard that reads it (the rules' decide on the turn's own read, the one-off id, the lock
// file's send mark at the next open, recordPoll's new epoch).
import { afterEach, describe, expect, it } from 'vitest';
import type { PlanDraft } from '../../src/domain.js';
import { decide } from '../../src/rules/decide.js';
import { acquireLock, type Lock } from '../../src/store/index.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import { input, rule } from '../rules/builders.js';
import { ADDR, ADDR2, draft, freshTempDir, open, request, summary, T0 } from './fixtures.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** Day n after 2025-06-01, as the server names its epoch. */
const epoch = (n: number) => new Date(Date.UTC(2025, 5, 1 + n)).toISOString().slice(0, 10);
const at = (n: number) => T0 + n * DAY;

const tmp = freshTempDir();
let store: SqliteStore | undefined;
let lock: Lock | undefined;
afterEach(() => {
  store?.close();
  lock?.release();
  store = undefined;
  lock = undefined;
});

function openLocked(): SqliteStore {
  lock = acquireLock(tmp.dbPath);
  store = open(tmp.dbPath, { lock });
  return store;
}

function poll(s: SqliteStore, day: number, when = at(day)): { newEpoch: boolean } {
  return s.recordPoll('treasury', ADDR, when, { ok: true, summary: summary({ epoch: epoch(day) }) });
}

/** A one-claim plan recorded at `created`, its claim sent and acknowledged at `sent`, finished. */
function settled(s: SqliteStore, over: Partial<PlanDraft> & { created: number; sent?: number }): number {
  const { created, sent = created, ...d } = over;
  const plan = s.insertPlan(draft({ steps: [{ kind: 'claim' }], ...d }), { dry: false, reason: 'test', now: created })!;
  const step = plan.steps[0]!.id;
  s.markSending(step, request(), sent);
  s.markAcknowledged(step, { status: 200, responseRaw: '{}', claimedLamports: 1n }, sent);
  s.finishPlan(plan.id, sent);
  return plan.id;
}

/** Ten days of a daily rule: a poll and a settled plan a day, epochs 0..9. */
function tenDays(s: SqliteStore): number[] {
  const ids: number[] = [];
  for (let d = 0; d < 10; d++) {
    poll(s, d);
    ids.push(settled(s, { epoch: epoch(d), created: at(d) }));
  }
  return ids;
}

const planIds = (s: SqliteStore) => s.listPlans({ limit: 1000 }).map((p) => p.id).sort((a, b) => a - b);

describe('prune', () => {
  it('deletes settled plans, their steps and attempts, and old epochs seen, before the cutoff; says how many', () => {
    const s = openLocked();
    const ids = tenDays(s);
    // Days 0..4 are before the cutoff; 5..9 are not.
    expect(s.prune({ cutoffMs: at(5), dryRun: false, batch: 2 })).toEqual({ plans: 5, steps: 5, attempts: 5, epochsSeen: 5 });
    expect(planIds(s)).toEqual(ids.slice(5));
    expect(s.integrityCheck()).toBe('ok');
    // Again: nothing more.
    expect(s.prune({ cutoffMs: at(5), dryRun: false })).toEqual({ plans: 0, steps: 0, attempts: 0, epochsSeen: 0 });
  });

  it('--dry-run counts the same and deletes nothing', () => {
    const s = openLocked();
    const ids = tenDays(s);
    expect(s.prune({ cutoffMs: at(5), dryRun: true, batch: 2 })).toEqual({ plans: 5, steps: 5, attempts: 5, epochsSeen: 5 });
    expect(planIds(s)).toEqual(ids);
    expect(s.prune({ cutoffMs: at(5), dryRun: false })).toEqual({ plans: 5, steps: 5, attempts: 5, epochsSeen: 5 });
  });

  it('keeps a plan with work left: open (a step planned) and blocked (a claim unknown), however old', () => {
    const s = openLocked();
    poll(s, 0);
    const open0 = s.insertPlan(draft({ rule: 'a', epoch: epoch(0), steps: [{ kind: 'claim' }] }), { dry: false, reason: 'r', now: at(0) })!;
    const blocked = s.insertPlan(draft({ rule: 'b', epoch: epoch(0), steps: [{ kind: 'claim' }] }), { dry: false, reason: 'r', now: at(0) })!;
    s.markSending(blocked.steps[0]!.id, request(), at(0));
    s.markUnknown(blocked.steps[0]!.id, { error: 'timeout' }, at(0));
    for (const d of [1, 2, 3]) {
      poll(s, d);
      for (const r of ['a', 'b']) settled(s, { rule: r, epoch: epoch(d), created: at(d) });
    }

    expect(s.prune({ cutoffMs: at(3), dryRun: false }).plans).toBe(2); // epoch 1 of each rule
    expect(s.openPlans(ADDR).map((p) => p.id)).toEqual([open0.id]);
    expect(s.unknownSteps().map((x) => x.planId)).toEqual([blocked.id]);
    // The turn's guard: a claim in doubt holds every claiming rule.
    expect(s.pollView(ADDR, at(3) - DAY, epoch(3)).claimInDoubt).toBe(true);
  });

  it("keeps the plans of the wallet's current and previous epoch: the rule does not fire twice in its epoch", () => {
    const s = openLocked();
    // The rule fired in epoch 1 at day 1; the server still says epoch 1 at day 2 + 12h (its day
    // lags ours): a prune of everything older than a day reaches back to day 1 + 12h.
    poll(s, 0);
    const previous = settled(s, { epoch: epoch(0), created: at(0) });
    poll(s, 1);
    const current = settled(s, { epoch: epoch(1), created: at(1) });
    settled(s, { rule: 'other', epoch: epoch(1), created: at(1) + HOUR }); // the newest attempt is another rule's
    // and the rule's newest plan a dry run's, which a real run's limits do not count
    s.insertPlan(draft({ epoch: epoch(1), steps: [{ kind: 'claim' }] }), { dry: true, reason: 'r', now: at(1) + 2 * HOUR });
    const now = at(2) + 12 * HOUR;
    s.recordPoll('treasury', ADDR, now, { ok: true, summary: summary({ epoch: epoch(1) }) });

    expect(s.prune({ cutoffMs: now - DAY, dryRun: false }).plans).toBe(0);
    expect(s.getPlan(previous)).toBeDefined();
    const compound = rule('compound', { limits: { oncePerEpoch: true } });
    const view = s.pollView(ADDR, now - DAY, epoch(1));
    const out = decide(input([compound], { summary: summary({ epoch: epoch(1) }), history: view.history, now }));
    expect(out.decisions[0]).toMatchObject({ fired: false, reason: 'once_per_epoch' });
    expect(s.getPlan(current)).toBeDefined();
  });

  it('keeps the current epoch after one recorded ahead of the calendar (the sandbox\'s fast epochs, then the real API)', () => {
    const s = openLocked();
    // Fast demo epochs recorded years ahead, then the real API's epoch 1, in which the rule fired.
    for (const [i, ahead] of ['2031-01-01', '2031-01-02', '2031-01-03'].entries()) {
      s.recordPoll('treasury', ADDR, at(0) + i, { ok: true, summary: summary({ epoch: ahead }) });
    }
    poll(s, 1);
    const current = settled(s, { epoch: epoch(1), created: at(1) });
    settled(s, { rule: 'other', epoch: epoch(1), created: at(1) + HOUR });
    s.insertPlan(draft({ epoch: epoch(1), steps: [{ kind: 'claim' }] }), { dry: true, reason: 'r', now: at(1) + 2 * HOUR });
    const now = at(2) + 12 * HOUR;
    s.recordPoll('treasury', ADDR, now, { ok: true, summary: summary({ epoch: epoch(1) }) });

    expect(s.prune({ cutoffMs: now - DAY, dryRun: false })).toMatchObject({ plans: 0, epochsSeen: 2 }); // two of the three ahead
    expect(s.getPlan(current)).toBeDefined();
    const view = s.pollView(ADDR, now - DAY, epoch(1));
    const out = decide(input([rule('compound', { limits: { oncePerEpoch: true } })], { summary: summary({ epoch: epoch(1) }), history: view.history, now }));
    expect(out.decisions[0]).toMatchObject({ fired: false, reason: 'once_per_epoch' });
  });

  it('keeps the epoch of the last good poll, first seen before epochs recorded ahead of the calendar', () => {
    const s = openLocked();
    poll(s, 1);
    const current = settled(s, { epoch: epoch(1), created: at(1) });
    settled(s, { rule: 'other', epoch: epoch(1), created: at(1) + HOUR });
    s.insertPlan(draft({ epoch: epoch(1), steps: [{ kind: 'claim' }] }), { dry: true, reason: 'r', now: at(1) + 2 * HOUR });
    // A sandbox's fast epochs in between, then the real API's epoch 1 again (believed: the recorded
    // epoch is ahead of the calendar, executor/epoch-check.ts); its first sighting stays day 1's.
    for (const [i, ahead] of ['2031-01-01', '2031-01-02'].entries()) {
      s.recordPoll('treasury', ADDR, at(1) + 3 * HOUR + i, { ok: true, summary: summary({ epoch: ahead }) });
    }
    const now = at(2) + 12 * HOUR;
    s.recordPoll('treasury', ADDR, now, { ok: true, summary: summary({ epoch: epoch(1) }) });

    expect(s.prune({ cutoffMs: now - DAY, dryRun: false })).toMatchObject({ plans: 0, epochsSeen: 0 });
    expect(s.getPlan(current)).toBeDefined();
    expect(s.recordPoll('treasury', ADDR, now + 1, { ok: true, summary: summary({ epoch: epoch(1) }) }).newEpoch).toBe(false);
  });

  it('keeps what the rules look back at: a plan whose request went out since the cutoff holds the cooldown', () => {
    const s = openLocked();
    poll(s, 0);
    // Recorded on day 0, sent on day 4 (resumed after the daemon was down): moved in the window.
    const resumed = settled(s, { epoch: epoch(0), created: at(0), sent: at(4) });
    // The rule's newest plan is a dry run's, which a real run's limits do not count.
    s.insertPlan(draft({ epoch: epoch(5), steps: [{ kind: 'claim' }] }), { dry: true, reason: 'r', now: at(5) });
    for (const d of [5, 6]) {
      poll(s, d);
      settled(s, { rule: 'other', epoch: epoch(d), created: at(d) });
    }
    const now = at(6) + HOUR;
    const cooldown = 3 * DAY;
    expect(s.prune({ cutoffMs: now - cooldown, dryRun: false }).plans).toBe(0);
    const view = s.pollView(ADDR, now - cooldown, epoch(6));
    const compound = rule('compound', { limits: { cooldownMs: cooldown } });
    const out = decide(input([compound], { summary: summary({ epoch: epoch(6) }), history: view.history, now }));
    expect(out.decisions[0]).toMatchObject({ fired: false, reason: 'cooldown' });
    expect(s.getPlan(resumed)).toBeDefined();
  });

  it("keeps each rule's newest plan: latestRulePlans answers the same, so a replaced rule's id still carries", () => {
    const s = openLocked();
    poll(s, 0);
    settled(s, { rule: 'gone', epoch: epoch(0), created: at(0) });
    tenDays(s);
    const before = s.latestRulePlans();
    expect(before.map((p) => p.rule)).toEqual(['gone', 'compound']);
    s.prune({ cutoffMs: at(9), dryRun: false });
    expect(s.latestRulePlans()).toEqual(before);
  });

  it("keeps each wallet's newest plan of each rule: a cooldown lengthened after the prune, or a clock that stepped back, still reads it", () => {
    const s = openLocked();
    poll(s, 0);
    const mine = settled(s, { epoch: epoch(0), created: at(0) });
    // The rule's newest plan is another wallet's: keeping only that one let this wallet's go.
    settled(s, { wallet: 'reserve', address: ADDR2, epoch: epoch(1), created: at(1) });
    for (let d = 1; d < 10; d++) poll(s, d);
    // A day's lookback allows this cutoff; then the config's cooldown becomes 10 days.
    s.prune({ cutoffMs: at(9), dryRun: false });
    const now = at(9) + HOUR;
    const cooldown = 10 * DAY;
    const view = s.pollView(ADDR, now - cooldown, epoch(9));
    const out = decide(input([rule('compound', { limits: { cooldownMs: cooldown } })], { summary: summary({ epoch: epoch(9) }), history: view.history, now }));
    expect(out.decisions[0]).toMatchObject({ fired: false, reason: 'cooldown' });
    expect(s.getPlan(mine)).toBeDefined();
  });

  it("keeps every one-off send's plan: its id stays used", () => {
    const s = openLocked();
    poll(s, 0);
    const sent = settled(s, { rule: '@send:pay-1', manualId: 'pay-1', epoch: epoch(0), created: at(0) });
    settled(s, { rule: '@send:pay-1', seq: 1, epoch: epoch(0), created: at(0) }); // a later plan of its rule name
    tenDays(s);
    s.prune({ cutoffMs: at(9), dryRun: false });
    expect(s.planByManualId('pay-1')?.id).toBe(sent);
    expect(s.insertPlan(draft({ rule: '@send:pay-1', seq: 2, manualId: 'pay-1', epoch: epoch(9) }), { dry: false, reason: 'r', now: at(9) })).toBeUndefined();
  });

  it('keeps the newest attempt: the lock file\'s send mark still matches at the next open', () => {
    const s = openLocked();
    poll(s, 0);
    // Two plans of one rule in epoch 0; the older one is sent last, so it holds the newest attempt.
    const older = s.insertPlan(draft({ steps: [{ kind: 'claim' }], epoch: epoch(0) }), { dry: false, reason: 'r', now: at(0) })!;
    settled(s, { seq: 1, epoch: epoch(0), created: at(0) + 1, sent: at(0) + 2 });
    s.markSending(older.steps[0]!.id, request(), at(0) + 3);
    s.markAcknowledged(older.steps[0]!.id, { status: 200, responseRaw: '{}', claimedLamports: 1n }, at(0) + 3);
    s.finishPlan(older.id, at(0) + 3);
    poll(s, 1);
    poll(s, 2);
    const newest = s.stepAttempts(older.steps[0]!.id)[0]!.id;
    expect(lock?.sent.high).toBeUndefined(); // read at open: the mark is on disk, checked next time

    expect(s.prune({ cutoffMs: at(2), dryRun: false }).plans).toBe(0);
    store?.close();
    lock?.release();
    // The next daemon's open compares the newest attempt with the mark: still there, not refused.
    const again = openLocked();
    expect(lock?.sent.high).toBe(newest);
    expect(again.getPlan(older.id)).toBeDefined();
    expect(again.prune({ cutoffMs: at(2), dryRun: false }).plans).toBe(0);
  });

  it('keeps the two newest epochs seen: the current epoch polled again is not new', () => {
    const s = openLocked();
    tenDays(s);
    expect(s.prune({ cutoffMs: at(20), dryRun: false }).epochsSeen).toBe(8);
    expect(poll(s, 9, at(20)).newEpoch).toBe(false);
  });
});
