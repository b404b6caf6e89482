// Poll records through the store port, the same cases for every adapter: what a poll leaves in
// wallet_state, the new-epoch signal, redaction, and the order (each record committed when
// recordPoll answers, so whoever sees a plan sees the polls it was decided from). "Another
// process" is a second store on the same state.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_LAMPORTS } from '../../src/amount.js';
import { Redactor } from '../../src/log/redact.js';
import type { Store } from '../../src/store/port.js';
import { code, useAdapter, type CommonOptions } from './contract-adapters.js';
import { ADDR, ADDR2, draft, request, summary, T0 } from './fixtures.js';

const ok = (over: Parameters<typeof summary>[0] = {}) => ({ ok: true as const, summary: summary(over) });

describe.each(['sqlite', 'postgres'] as const)('poll records (%s)', (name) => {
  const adapter = useAdapter(name);
  let store: Store;
  const others: Store[] = [];

  const reopen = async (opts: CommonOptions = {}): Promise<void> => {
    await store.close();
    store = await adapter.open(opts);
  };
  /** What another process (`autoclaim status`, another daemon) reads. */
  const other = async (): Promise<Store> => {
    const s = await adapter.open();
    others.push(s);
    return s;
  };

  beforeEach(async () => {
    store = await adapter.open();
  });
  afterEach(async () => {
    for (const s of others.splice(0)) await s.close();
    await store.close();
  });

  describe('lastEpoch (what a polled epoch must not go back before)', () => {
    it('the newest good poll of the address, across a reopen; failed polls change nothing', async () => {
      expect(await store.lastEpoch('Addr1')).toBeUndefined();
      await store.recordPoll('treasury', 'Addr1', T0, ok({ epoch: '2025-06-01' }));
      expect(await store.lastEpoch('Addr1')).toBe('2025-06-01');
      await store.recordPoll('treasury', 'Addr1', T0 + 1, ok({ epoch: '2025-06-02' }));
      await store.recordPoll('treasury', 'Addr1', T0 + 2, { ok: false, error: 'INVALID_EPOCH: epoch refused' });
      expect(await store.lastEpoch('Addr1')).toBe('2025-06-02');
      expect(await store.lastEpoch('Addr2')).toBeUndefined();
      await reopen();
      expect(await store.lastEpoch('Addr1')).toBe('2025-06-02');
    });
  });

  describe('recordPoll', () => {
    it('stores a good summary, lamports exact', async () => {
      await store.recordPoll('treasury', 'Addr1', T0, { ok: true, summary: summary({ lifetimeLamports: MAX_LAMPORTS }) });
      expect(await store.walletState('Addr1')).toEqual({
        wallet: 'treasury',
        address: 'Addr1',
        lastPollAt: T0,
        lastOkAt: T0,
        lastError: null,
        epoch: '2025-06-01',
        pendingLamports: 1_500_000_000n,
        lifetimeLamports: 18_446_744_073_709_551_615n,
        rank: 7,
        tier: 'gold',
        summaryRaw: '{"address":"Addr1111111111111111111111111111111111111111","pending_sol":"1.5"}',
        updatedAt: T0,
      });
    });

    it('reports a new epoch the first time it is seen for that wallet only', async () => {
      expect(await store.recordPoll('a', 'A', T0, ok())).toEqual({ newEpoch: true });
      expect(await store.recordPoll('a', 'A', T0 + 1, ok())).toEqual({ newEpoch: false });
      expect(await store.recordPoll('b', 'B', T0 + 2, ok())).toEqual({ newEpoch: true });
      expect(await store.recordPoll('a', 'A', T0 + 3, ok({ epoch: '2025-06-02' }))).toEqual({ newEpoch: true });
      expect(await store.recordPoll('a', 'A', T0 + 4, ok())).toEqual({ newEpoch: false });
    });

    it('says a new epoch once, whether the earlier record is from this process or an earlier one', async () => {
      expect(await store.recordPoll('a', ADDR, T0, ok())).toEqual({ newEpoch: true });
      await reopen();
      expect(await store.recordPoll('a', ADDR, T0 + 3, ok())).toEqual({ newEpoch: false });
      expect(await store.recordPoll('a', ADDR, T0 + 4, ok({ epoch: '2025-06-02' }))).toEqual({ newEpoch: true });
      expect(await store.recordPoll('a', ADDR, T0 + 5, ok())).toEqual({ newEpoch: false });
    });

    it('one address under two names is one wallet: one row, labelled by the latest name', async () => {
      expect(await store.recordPoll('old', 'A', T0, ok())).toEqual({ newEpoch: true });
      expect(await store.recordPoll('new', 'A', T0 + 1, ok({ pendingLamports: 7n }))).toEqual({ newEpoch: false });
      expect(await store.walletStates()).toHaveLength(1);
      expect(await store.walletState('A')).toMatchObject({ wallet: 'new', address: 'A', lastPollAt: T0 + 1, pendingLamports: 7n });
      await store.recordPoll('newer', 'A', T0 + 2, { ok: false, error: 'HTTP 503' });
      expect(await store.walletState('A')).toMatchObject({ wallet: 'newer', lastError: 'HTTP 503', lastOkAt: T0 + 1, pendingLamports: 7n });
    });

    it('a failed poll records the error and keeps the last good summary', async () => {
      await store.recordPoll('treasury', 'Addr1', T0, ok());
      await store.recordPoll('treasury', 'Addr1', T0 + 60_000, { ok: false, error: 'connect ECONNREFUSED' });
      expect(await store.walletState('Addr1')).toMatchObject({ lastPollAt: T0 + 60_000, lastOkAt: T0, lastError: 'connect ECONNREFUSED', pendingLamports: 1_500_000_000n });
      await store.recordPoll('a', ADDR, T0, ok({ pendingLamports: 1n }));
      await store.recordPoll('a', ADDR, T0 + 1, ok({ pendingLamports: 2n }));
      await store.recordPoll('renamed', ADDR, T0 + 2, { ok: false, error: 'HTTP 503' });
      expect(await (await other()).walletState(ADDR)).toMatchObject({ wallet: 'renamed', lastOkAt: T0 + 1, pendingLamports: 2n, lastError: 'HTTP 503' });
    });

    it('a first poll that failed leaves a row with no summary; nulls stay null', async () => {
      await store.recordPoll('new', 'AddrN', T0, { ok: false, error: 'HTTP 503' });
      await store.recordPoll('t', 'A', T0, ok({ lifetimeLamports: null, rank: null, tier: null }));
      expect(await store.walletState('AddrN')).toMatchObject({ lastOkAt: null, epoch: null, pendingLamports: null, lastError: 'HTTP 503' });
      expect(await store.walletState('A')).toMatchObject({ lifetimeLamports: null, rank: null, tier: null });
    });

    it('lists wallets by name and returns undefined for one never polled', async () => {
      await store.recordPoll('zeta', 'Z', T0, ok());
      await store.recordPoll('alpha', 'A', T0, ok());
      await store.recordPoll('Beta', 'B', T0, ok());
      expect((await store.walletStates()).map((w) => w.wallet)).toEqual(['Beta', 'alpha', 'zeta']);
      expect(await store.walletState('Nobody')).toBeUndefined();
      expect(await store.walletState('alpha')).toBeUndefined();
    });

    it('refuses a record the table cannot hold when it is made, not when it is written', async () => {
      expect(await code(() => store.recordPoll('a', ADDR, T0, ok({ pendingLamports: -1n })))).toBe('STATE_INVALID');
      await store.recordPoll('a', ADDR, T0, ok());
      expect((await (await other()).walletState(ADDR))?.pendingLamports).toBe(1_500_000_000n);
    });

    it('scrubs registered secrets from stored errors and summaries', async () => {
      const canary = 'sk-canary-0123456789abcdef';
      await reopen({ redactor: new Redactor().add(canary) });
      await store.recordPoll('t', 'A', T0, { ok: false, error: `401 for key ${canary}` });
      expect((await store.walletState('A'))?.lastError).toBe('401 for key [REDACTED]');
      await store.recordPoll('t', 'A', T0, { ok: true, summary: summary({ raw: { echo: canary } }) });
      expect((await store.walletState('A'))?.summaryRaw).toBe('{"echo":"[REDACTED]"}');
    });
  });

  describe('committed when recorded', () => {
    it('another connection sees a record as soon as recordPoll answers', async () => {
      await store.recordPoll('a', ADDR, T0, ok());
      expect((await (await other()).walletState(ADDR))?.pendingLamports).toBe(1_500_000_000n);
      await store.recordPoll('a', ADDR, T0 + 1, { ok: false, error: 'HTTP 503' });
      expect(await (await other()).walletState(ADDR)).toMatchObject({ lastPollAt: T0 + 1, lastError: 'HTTP 503' });
    });

    it('whoever sees the plan sees the polls it was decided from', async () => {
      await store.recordPoll('treasury', ADDR, T0, ok());
      await store.recordPoll('other', ADDR2, T0, ok({ address: ADDR2 }));
      const plan = (await store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' }))!;
      const r = await other();
      expect(await r.getPlan(plan.id)).toBeDefined();
      expect((await r.walletStates()).map((w) => w.address).sort()).toEqual([ADDR, ADDR2]);
      await store.markSending(plan.steps[0]!.id, request(), T0 + 2);
      expect((await r.getStep(plan.steps[0]!.id))?.state).toBe('sending');
    });

    it('a record survives a close at once', async () => {
      await store.recordPoll('a', ADDR, T0, ok());
      await store.close();
      store = await adapter.open();
      expect((await (await other()).walletState(ADDR))?.lastPollAt).toBe(T0);
    });
  });
});
