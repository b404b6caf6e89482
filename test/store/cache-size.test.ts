// The state connection's page cache is SQLite's default size, not better-sqlite3's 16 MiB: memory
// that grew with the fleet (a row per wallet) for no measurable speed.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { CACHE_SIZE_KIB, openDatabase } from '../../src/store/sqlite/db.js';
import { tempDir, type TempDir } from './fixtures.js';

let tmp: TempDir;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

it('opens the state database with a 2 MiB page cache, read-write and read-only', () => {
  expect(CACHE_SIZE_KIB).toBe(-2000);
  for (const readonly of [false, true]) {
    const db = openDatabase(tmp.dbPath, { logger: silentLogger(), readonly, busyTimeoutMs: 100 });
    try {
      expect(db.pragma('cache_size', { simple: true })).toBe(CACHE_SIZE_KIB);
    } finally {
      db.close();
    }
  }
});
