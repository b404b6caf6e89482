// pollView (the one read of a wallet's turn, src/store/poll-view.ts) against the five reads it
// stands for, asked one by one, for every adapter: at each point of a plan's life (recorded, dry,
// sending, unknown, reconciled, resolved, done) and for the wallet beside it, the two must agree.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/port.js';
import { useAdapter } from './contract-adapters.js';
import { ADDR, ADDR2, draft, request, summary, T0 } from './fixtures.js';

const DAY_MS = 86_400_000;

describe.each(['sqlite', 'postgres'] as const)('pollView (%s)', (name) => {
  const adapter = useAdapter(name);
  let store: Store;

  beforeEach(async () => {
    store = await adapter.open();
  });
  afterEach(async () => {
    await store.close();
  });

  /** The five reads the turn used to make, one after the other. */
  const oneByOne = async (address: string, sinceMs: number, epoch: string) => ({
    lastEpoch: await store.lastEpoch(address),
    hasActivePlans: (await store.activePlans(address)).length > 0,
    claimInDoubt: await store.claimInDoubt(address),
    unknownSignedStep: await store.hasUnknownSignedStep(address),
    history: await store.planHistory(address, sinceMs, epoch),
  });

  /** pollView equals the five reads for both wallets and a few history windows; returns ADDR's view. */
  const agrees = async () => {
    for (const address of [ADDR, ADDR2]) {
      for (const [sinceMs, epoch] of [
        [T0 - DAY_MS, '2025-06-01'],
        [T0 + 1, '2025-06-01'],
        [T0 + 1, '2025-06-02'],
        [T0 - 10 * DAY_MS, '2025-05-01'],
      ] as const) {
        expect(await store.pollView(address, sinceMs, epoch), `${address} since ${sinceMs} epoch ${epoch}`).toEqual(await oneByOne(address, sinceMs, epoch));
      }
    }
    return store.pollView(ADDR, T0 - DAY_MS, '2025-06-01');
  };

  it('an address never seen: no epoch, no plans, no guards', async () => {
    expect(await agrees()).toEqual({ lastEpoch: undefined, hasActivePlans: false, claimInDoubt: false, unknownSignedStep: false, history: [] });
  });

  it('agrees with the reads one by one through a plan’s life', async () => {
    await store.recordPoll('treasury', ADDR, T0, { ok: true, summary: summary({ epoch: '2025-06-01' }) });
    await store.recordPoll('other', ADDR2, T0, { ok: true, summary: summary({ address: ADDR2, epoch: '2025-05-31' }) });
    expect(await agrees()).toMatchObject({ lastEpoch: '2025-06-01', hasActivePlans: false, history: [] });

    // A dry plan is history, never work left, never a guard.
    await store.insertPlan(draft({ seq: 9 }), { dry: true, now: T0 - 2 * DAY_MS, reason: 'dry' });
    // Recorded later, dated earlier: history comes in id order all the same.
    await store.insertPlan(draft({ seq: 8 }), { dry: true, now: T0 - 3 * DAY_MS, reason: 'dry' });
    expect(await agrees()).toMatchObject({ hasActivePlans: false, claimInDoubt: false });

    const plan = (await store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' }))!;
    const [claim, deposit] = plan.steps;
    expect(await agrees()).toMatchObject({ hasActivePlans: true, claimInDoubt: false, unknownSignedStep: false });

    await store.markSending(claim!.id, request(), T0);
    expect(await agrees()).toMatchObject({ hasActivePlans: true, claimInDoubt: true, unknownSignedStep: false });
    await store.markUnknown(claim!.id, { status: 502, error: 'HTTP 502' }, T0);
    expect(await agrees()).toMatchObject({ hasActivePlans: true, claimInDoubt: true, unknownSignedStep: false });
    await store.reconcile(claim!.id, true, { claimedLamports: 10n, note: 'pending dropped' }, T0);
    expect(await agrees()).toMatchObject({ hasActivePlans: true, claimInDoubt: false });

    await store.setStepAmount(deposit!.id, 5n, T0);
    await store.markSending(deposit!.id, request(), T0);
    expect(await agrees()).toMatchObject({ hasActivePlans: true, claimInDoubt: false, unknownSignedStep: false });
    await store.markUnknown(deposit!.id, { error: 'socket hang up' }, T0);
    expect(await agrees()).toMatchObject({ hasActivePlans: true, unknownSignedStep: true });
    await store.resolve(deposit!.id, true, 'operator: applied', T0);
    expect(await agrees()).toMatchObject({ hasActivePlans: false, claimInDoubt: false, unknownSignedStep: false });

    // Another wallet's plans stay its own; a later epoch recorded moves the last epoch.
    const theirs = (await store.insertPlan(draft({ address: ADDR2, wallet: 'other' }), { dry: false, now: T0, reason: 'r' }))!;
    await store.markSending(theirs.steps[0]!.id, request(), T0);
    await store.recordPoll('treasury', ADDR, T0 + 1, { ok: true, summary: summary({ epoch: '2025-06-02' }) });
    const view = await agrees();
    expect(view).toMatchObject({ lastEpoch: '2025-06-02', hasActivePlans: false, claimInDoubt: false });
    // The claim said 10 lamports, but its plan expected 1.5 SOL: it counts the larger (codecs.ts historyFromRaw).
    expect(view.history.map((h) => [h.seq, h.status, h.lamports])).toEqual([[9, 'dry', 1_500_000_000n], [8, 'dry', 1_500_000_000n], [0, 'done', 1_500_000_000n]]);
  });

  it('a failed poll keeps the last good epoch', async () => {
    await store.recordPoll('treasury', ADDR, T0, { ok: true, summary: summary({ epoch: '2025-06-01' }) });
    await store.recordPoll('treasury', ADDR, T0 + 1, { ok: false, error: 'TIMEOUT' });
    expect((await agrees()).lastEpoch).toBe('2025-06-01');
  });
});
