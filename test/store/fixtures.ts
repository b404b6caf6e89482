// Shared set-up for the store tests: a real SQLite file in a fresh temp directory per test.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { PlanDraft, StepSpec, WalletSummary } from '../../src/domain.js';
import { StateError } from '../../src/errors.js';
import { silentLogger } from '../../src/log/logger.js';
import { openStore, type StoreOptions, type StoredRequest } from '../../src/store/index.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import { thrown } from '../support/errors.js';

export const T0 = Date.UTC(2025, 5, 1, 12, 0, 0);

/** The address `draft()` and `summary()` use; a wallet is its address, its name only a label. */
export const ADDR = 'Addr1111111111111111111111111111111111111111';
/** Another wallet's address. */
export const ADDR2 = 'Addr2222222222222222222222222222222222222222';

export interface TempDir {
  dir: string;
  /** A path inside the temp dir, in a not-yet-existing `state/` subdirectory. */
  dbPath: string;
  cleanup(): void;
}

export function tempDir(): TempDir {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoclaim-store-'));
  return {
    dir,
    dbPath: path.join(dir, 'state', 'autoclaim.db'),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A fresh temp dir for every test of the file that calls this at its top: made before each test,
 * removed after (hooks registered later, such as closing a store, run before the removal).
 */
export function freshTempDir(): TempDir {
  const current: TempDir = { dir: '', dbPath: '', cleanup: () => undefined };
  beforeEach(() => {
    Object.assign(current, tempDir());
  });
  afterEach(() => {
    current.cleanup();
  });
  return current;
}

/** The StateError `fn` throws; fails the test if it throws anything else, or nothing. */
export function stateError(fn: () => unknown): StateError {
  return thrown(StateError, fn);
}

export function open(dbPath: string, opts: Partial<StoreOptions> = {}): SqliteStore {
  return openStore(dbPath, { logger: silentLogger(), clock: { now: () => T0, monotonic: () => 0 }, ...opts });
}

export function draft(over: Partial<PlanDraft> = {}): PlanDraft {
  const steps: StepSpec[] = [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'percent', ppm: 500_000 } }];
  return {
    wallet: 'treasury',
    address: ADDR,
    rule: 'compound',
    epoch: '2025-06-01',
    seq: 0,
    steps,
    estimateLamports: 1_500_000_000n,
    ...over,
  };
}

export function summary(over: Partial<WalletSummary> = {}): WalletSummary {
  return {
    address: 'Addr1111111111111111111111111111111111111111',
    epoch: '2025-06-01',
    pendingLamports: 1_500_000_000n,
    lifetimeLamports: 9_000_000_000n,
    rank: 7,
    tier: 'gold',
    breakdown: [],
    raw: { address: 'Addr1111111111111111111111111111111111111111', pending_sol: '1.5' },
    ...over,
  };
}

export function request(over: Partial<StoredRequest> = {}): StoredRequest {
  return {
    method: 'POST',
    url: 'http://127.0.0.1:8787/v1/rewards/claim',
    ts: 1_748_779_200,
    message: 'Addr1111111111111111111111111111111111111111|1748779200',
    body: '{"wallet":"Addr1111111111111111111111111111111111111111","signature":"5sig"}',
    headers: { 'x-svc-ts': '1748779200', 'x-svc-wallet': 'Addr1111111111111111111111111111111111111111' },
    ...over,
  };
}
