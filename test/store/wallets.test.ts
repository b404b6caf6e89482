import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_LAMPORTS } from '../../src/amount.js';
import { Redactor } from '../../src/log/redact.js';
import type { SyncStore } from '../../src/store/index.js';
import { freshTempDir, open, summary, T0 } from './fixtures.js';

const tmp = freshTempDir();
let store: SyncStore;
beforeEach(() => {
  store = open(tmp.dbPath);
});
afterEach(() => {
  store.close();
});

describe('recordPoll', () => {
  it('stores a good summary, lamports exact', () => {
    store.recordPoll('treasury', 'Addr1', T0, { ok: true, summary: summary({ lifetimeLamports: MAX_LAMPORTS }) });
    expect(store.walletState('Addr1')).toEqual({
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

  it('reports a new epoch the first time it is seen for that wallet only', () => {
    expect(store.recordPoll('a', 'A', T0, { ok: true, summary: summary() })).toEqual({ newEpoch: true });
    expect(store.recordPoll('a', 'A', T0 + 1, { ok: true, summary: summary() })).toEqual({ newEpoch: false });
    expect(store.recordPoll('b', 'B', T0 + 2, { ok: true, summary: summary() })).toEqual({ newEpoch: true });
    expect(store.recordPoll('a', 'A', T0 + 3, { ok: true, summary: summary({ epoch: '2025-06-02' }) })).toEqual({
      newEpoch: true,
    });
    // Back to an epoch already seen (a clock or server hiccup) is not new.
    expect(store.recordPoll('a', 'A', T0 + 4, { ok: true, summary: summary() })).toEqual({ newEpoch: false });
  });

  it('one address under two names is one wallet: one row, labelled by the latest name, one set of epochs', () => {
    expect(store.recordPoll('old', 'A', T0, { ok: true, summary: summary() })).toEqual({ newEpoch: true });
    // Renamed in the config: the epoch is not new again, and the row is the same one.
    expect(store.recordPoll('new', 'A', T0 + 1, { ok: true, summary: summary({ pendingLamports: 7n }) })).toEqual({
      newEpoch: false,
    });
    expect(store.walletStates()).toHaveLength(1);
    expect(store.walletState('A')).toMatchObject({ wallet: 'new', address: 'A', lastPollAt: T0 + 1, pendingLamports: 7n });
    // A failed poll under yet another name still lands on that row and keeps its summary.
    store.recordPoll('newer', 'A', T0 + 2, { ok: false, error: 'HTTP 503' });
    expect(store.walletStates()).toHaveLength(1);
    expect(store.walletState('A')).toMatchObject({ wallet: 'newer', lastError: 'HTTP 503', lastOkAt: T0 + 1, pendingLamports: 7n });
  });

  it('one name pointed at another address is another wallet: its own row and its own epochs', () => {
    expect(store.recordPoll('t', 'A', T0, { ok: true, summary: summary() })).toEqual({ newEpoch: true });
    expect(store.recordPoll('t', 'B', T0 + 1, { ok: true, summary: summary({ pendingLamports: 7n }) })).toEqual({
      newEpoch: true,
    });
    expect(store.walletStates().map((w) => [w.wallet, w.address])).toEqual([
      ['t', 'A'],
      ['t', 'B'],
    ]);
    expect(store.walletState('A')).toMatchObject({ pendingLamports: 1_500_000_000n, lastPollAt: T0 });
    expect(store.walletState('B')).toMatchObject({ pendingLamports: 7n, lastPollAt: T0 + 1 });
  });

  it('a failed poll records the error and keeps the last good summary', () => {
    store.recordPoll('treasury', 'Addr1', T0, { ok: true, summary: summary() });
    expect(store.recordPoll('treasury', 'Addr1', T0 + 60_000, { ok: false, error: 'connect ECONNREFUSED' })).toEqual({
      newEpoch: false,
    });
    const s = store.walletState('Addr1');
    expect(s).toMatchObject({
      lastPollAt: T0 + 60_000,
      lastOkAt: T0,
      lastError: 'connect ECONNREFUSED',
      epoch: '2025-06-01',
      pendingLamports: 1_500_000_000n,
    });
    store.recordPoll('treasury', 'Addr1', T0 + 120_000, { ok: true, summary: summary({ pendingLamports: 0n }) });
    expect(store.walletState('Addr1')).toMatchObject({ lastError: null, lastOkAt: T0 + 120_000, pendingLamports: 0n });
  });

  it('a wallet whose first poll failed has a row with no summary', () => {
    store.recordPoll('new', 'AddrN', T0, { ok: false, error: 'HTTP 503' });
    expect(store.walletState('AddrN')).toMatchObject({ lastOkAt: null, epoch: null, pendingLamports: null, lastError: 'HTTP 503' });
    expect(store.walletStates().map((w) => w.wallet)).toEqual(['new']);
  });

  it('keeps a null lifetime, rank and tier as null', () => {
    store.recordPoll('t', 'A', T0, { ok: true, summary: summary({ lifetimeLamports: null, rank: null, tier: null }) });
    expect(store.walletState('A')).toMatchObject({ lifetimeLamports: null, rank: null, tier: null });
  });

  it('lists wallets by name and returns undefined for one never polled', () => {
    store.recordPoll('zeta', 'Z', T0, { ok: true, summary: summary() });
    store.recordPoll('alpha', 'A', T0, { ok: true, summary: summary() });
    expect(store.walletStates().map((w) => w.wallet)).toEqual(['alpha', 'zeta']);
    expect(store.walletState('Nobody')).toBeUndefined();
    // The key is the address, never the name.
    expect(store.walletState('alpha')).toBeUndefined();
  });

  it('scrubs registered secrets from stored errors and summaries', () => {
    store.close();
    const canary = 'sk-canary-0123456789abcdef';
    store = open(tmp.dbPath, { redactor: new Redactor().add(canary) });
    store.recordPoll('t', 'A', T0, { ok: false, error: `401 for key ${canary}` });
    expect(store.walletState('A')?.lastError).toBe('401 for key [REDACTED]');
    store.recordPoll('t', 'A', T0, { ok: true, summary: summary({ raw: { echo: canary } }) });
    expect(store.walletState('A')?.summaryRaw).toBe('{"echo":"[REDACTED]"}');
  });
});
