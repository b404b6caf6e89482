// Poll records commit without an fsync (synchronous=NORMAL); everything else must still commit at
// FULL. What can be checked from outside: the connection is back at FULL after every poll record,
// whether it succeeded, failed, or threw, and the poll is committed for other connections to read.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SyncStore } from '../../src/store/index.js';
import { draft, freshTempDir, open, summary, T0 } from './fixtures.js';

const tmp = freshTempDir();
let store: SyncStore;
beforeEach(() => {
  store = open(tmp.dbPath);
});
afterEach(() => {
  store.close();
});

const FULL = 2;

describe('recordPoll durability', () => {
  it('leaves the connection at synchronous=FULL after writing a good poll and a failed one', () => {
    store.recordPoll('a', 'A', T0, { ok: true, summary: summary() });
    store.flushPolls();
    expect(store.pragmas().synchronous).toBe(FULL);
    store.recordPoll('a', 'A', T0 + 1, { ok: false, error: 'timeout' });
    store.flushPolls();
    expect(store.pragmas().synchronous).toBe(FULL);
  });

  it('restores FULL even when the poll record throws', () => {
    // A negative amount cannot be stored: the transaction throws inside.
    expect(() => store.recordPoll('a', 'A', T0, { ok: true, summary: summary({ pendingLamports: -1n }) })).toThrow();
    expect(store.pragmas().synchronous).toBe(FULL);
    expect(store.insertPlan(draft(), { dry: false, reason: 'test' })).toBeDefined();
  });

  it('commits the poll for other connections once written', () => {
    store.recordPoll('a', 'A', T0, { ok: true, summary: summary() });
    store.flushPolls();
    const reader = open(tmp.dbPath, { readonly: true });
    try {
      expect(reader.walletState('A')?.pendingLamports).toBe(1_500_000_000n);
    } finally {
      reader.close();
    }
  });
});
