// `send --cancel` through the store port, the same cases for every adapter (issue 24, finding 4):
// a queued plan is cancelled exactly once and recorded with who and when; nothing that may be on
// the wire or applied is cancelled; and a cancel racing the daemon's `sending` commit loses or wins
// whole: never a cancelled plan that was also sent.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlanWithSteps } from '../../src/store/index.js';
import type { Store } from '../../src/store/port.js';
import { call, code, useAdapter } from './contract-adapters.js';
import { draft, request, T0 } from './fixtures.js';

const BY = 'autoclaim send --cancel (user op on host h, pid 1)';
const oneOff = (id: string) =>
  draft({ rule: `@send:${id}`, manualId: id, steps: [{ kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'fixed', lamports: 3_000_000_000n } }] });

describe.each(['sqlite', 'postgres'] as const)('cancelPlan (%s)', (name) => {
  const adapter = useAdapter(name);
  let store: Store;
  let plan: PlanWithSteps;
  let stepId: number;
  beforeEach(async () => {
    store = await adapter.open();
    plan = (await store.insertPlan(oneOff('topup-1'), { dry: false, now: T0, reason: 'r' }))!;
    stepId = plan.steps[0]!.id;
  });
  afterEach(async () => {
    await store.close();
  });

  it('skips the queued step, records who and when, and nothing of the plan can be sent after', async () => {
    const cancelled = await store.cancelPlan(plan.id, BY, T0 + 5);
    expect(cancelled).toMatchObject({ cancelledAt: T0 + 5, cancelledBy: BY, status: 'done', updatedAt: T0 + 5 });
    expect(cancelled.steps.map((s) => [s.state, s.resolution])).toEqual([['skipped', `cancelled by ${BY} at ${new Date(T0 + 5).toISOString()}`]]);
    expect(await store.planByManualId('topup-1')).toEqual(cancelled);
    expect(await store.openPlans()).toEqual([]);
    await expect(call(() => store.markSending(stepId, request(), T0 + 6))).rejects.toThrow(/skipped, not planned/);
  });

  it('works once: a second cancel says who cancelled it and changes nothing', async () => {
    const first = await store.cancelPlan(plan.id, BY, T0 + 5);
    await expect(call(() => store.cancelPlan(plan.id, 'someone else', T0 + 9))).rejects.toThrow(
      new RegExp(`plan ${plan.id} was already cancelled by .*user op.* at ${new Date(T0 + 5).toISOString().replace(/\./g, '\\.')}`),
    );
    expect(await store.getPlan(plan.id)).toEqual(first);
  });

  it.each([
    ['sending', /is sending: its request may already be on the wire/],
    ['unknown', /is unknown: it may have been applied.*actions resolve/],
    ['acknowledged', /nothing of plan \d+ is left to send: step \d+ \(deposit\) is acknowledged/],
    ['rejected', /nothing of plan \d+ is left to send: step \d+ \(deposit\) is rejected/],
  ] as const)('refuses a step that is %s, and records nothing', async (state, message) => {
    await store.markSending(stepId, request(), T0);
    if (state === 'unknown') await store.markUnknown(stepId, { error: 'timeout' }, T0);
    if (state === 'acknowledged') await store.markAcknowledged(stepId, { status: 200, responseRaw: '{}' }, T0);
    if (state === 'rejected') await store.markRejected(stepId, { status: 400, responseRaw: '{}', error: 'no' }, T0);
    const before = await store.getPlan(plan.id);
    expect(await code(() => store.cancelPlan(plan.id, BY, T0 + 5))).toBe('STATE_TRANSITION');
    await expect(call(() => store.cancelPlan(plan.id, BY, T0 + 5))).rejects.toThrow(message);
    expect(await store.getPlan(plan.id)).toEqual(before);
  });

  it('a step put back to planned by a 429 can still be cancelled', async () => {
    await store.markSending(stepId, request(), T0);
    await store.markNotSent(stepId, 'HTTP 429: rate limited', T0 + 1);
    const cancelled = await store.cancelPlan(plan.id, BY, T0 + 2);
    expect(cancelled.steps[0]!.state).toBe('skipped');
  });

  it('of a plan whose claim was acknowledged, only the queued deposit is cancelled', async () => {
    const rule = (await store.insertPlan(draft({ rule: 'compound' }), { dry: false, now: T0, reason: 'r' }))!;
    const [claim, deposit] = rule.steps as [PlanWithSteps['steps'][0], PlanWithSteps['steps'][0]];
    await store.markSending(claim.id, request(), T0);
    await store.markAcknowledged(claim.id, { status: 200, responseRaw: '{}', claimedLamports: 10n }, T0);
    const cancelled = await store.cancelPlan(rule.id, BY, T0 + 1);
    expect(cancelled.steps.map((s) => s.state)).toEqual(['acknowledged', 'skipped']);
    expect(deposit.id).toBe(cancelled.steps[1]!.id);
  });

  it('a missing plan is STATE_NOT_FOUND', async () => {
    expect(await code(() => store.cancelPlan(plan.id + 100, BY, T0))).toBe('STATE_NOT_FOUND');
  });

  it('racing the sending commit, exactly one of the two wins, whatever the order', async () => {
    // Two connections, as the daemon and `send --cancel` are two processes.
    const other = await adapter.open();
    try {
      for (let i = 0; i < 10; i++) {
        const p = (await store.insertPlan(oneOff(`race-${i}`), { dry: false, now: T0, reason: 'r' }))!;
        const id = p.steps[0]!.id;
        const send = call(() => (i % 2 === 0 ? store : other).markSending(id, request(), T0)).then(() => 'sent' as const, () => 'refused' as const);
        const cancel = call(() => (i % 2 === 0 ? other : store).cancelPlan(p.id, BY, T0)).then(() => 'cancelled' as const, () => 'refused' as const);
        const outcome = await Promise.all([send, cancel]);
        const after = (await store.getPlan(p.id))!;
        if (outcome[0] === 'sent') {
          expect(outcome[1]).toBe('refused');
          expect([after.steps[0]!.state, after.cancelledAt]).toEqual(['sending', null]);
        } else {
          expect(outcome[1]).toBe('cancelled');
          expect([after.steps[0]!.state, after.cancelledAt]).toEqual(['skipped', T0]);
        }
      }
    } finally {
      await other.close();
    }
  });
});
