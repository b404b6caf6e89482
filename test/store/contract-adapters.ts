// The store port's contract tests run against every adapter: this file says how to open each one
// fresh for a test (and reopen it, as a restart would). SQLite: a file in a temp dir. PostgreSQL:
// one database per test file in the run's throwaway cluster (test/support/postgres.ts), emptied
// before each test, so ids start at 1 as in a new SQLite file.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { StateError } from '../../src/errors.js';
import { silentLogger } from '../../src/log/logger.js';
import { openPostgresStore, type PostgresStoreOptions } from '../../src/store/postgres/store.js';
import type { Store } from '../../src/store/port.js';
import { openStore, type StoreOptions } from '../../src/store/sqlite/store.js';
import { createDatabase } from '../support/postgres.js';
import { T0, tempDir, type TempDir } from './fixtures.js';

/** What both adapters take; the rest is each one's own. */
export type CommonOptions = Pick<StoreOptions, 'redactor' | 'clock'> & Pick<PostgresStoreOptions, 'fence'>;

export interface Adapter {
  readonly name: 'sqlite' | 'postgres';
  /** A new store over this test's (empty at first) state. */
  open(opts?: CommonOptions): Promise<Store>;
}

const clock = { now: () => T0, monotonic: () => 0 };

/**
 * Registers the hooks that give each test an empty state, and returns the adapter (its fields are
 * filled in by the hooks, so call this at the top of a describe block).
 */
export function useAdapter(name: Adapter['name']): Adapter {
  return name === 'sqlite' ? useSqlite() : usePostgres();
}

function useSqlite(): Adapter {
  let tmp: TempDir | undefined;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => {
    tmp?.cleanup();
  });
  return {
    name: 'sqlite',
    open: (opts = {}) => {
      if (tmp === undefined) throw new Error('no temp dir: open() outside a test');
      const { fence: _unfenced, ...rest } = opts;
      return Promise.resolve(openStore(tmp.dbPath, { logger: silentLogger(), clock, ...rest }));
    },
  };
}

/**
 * The URL of this file's database, and a connection to it for assertions the port cannot make.
 * Keyed by the test file: files share this module in a worker (vitest.config.ts), and a file must
 * not inherit the last one's database, where a store it left open may still hold a lock.
 */
export const pgFile: { file: string | undefined; url: string; admin: pg.Pool | undefined } = { file: undefined, url: '', admin: undefined };

const TABLES = ['attempts', 'steps', 'plans', 'epochs_seen', 'wallet_state', 'leases', 'daemons', 'outbox', 'signed_ts'];

function usePostgres(): Adapter {
  beforeAll(async () => {
    const file = expect.getState().testPath;
    if (pgFile.url === '' || pgFile.file !== file) {
      pgFile.url = await createDatabase();
      pgFile.file = file;
    }
    pgFile.admin ??= new pg.Pool({ ...fields(pgFile.url), max: 2 });
  });
  afterAll(async () => {
    await pgFile.admin?.end();
    pgFile.admin = undefined;
  });
  beforeEach(async () => {
    const exists = await pgFile.admin!.query<{ t: string | null }>("SELECT to_regclass('plans')::text AS t");
    if (exists.rows[0]?.t != null) await pgFile.admin!.query(`TRUNCATE ${TABLES.join(', ')} RESTART IDENTITY`);
  });
  return {
    name: 'postgres',
    open: (opts = {}) => openPostgresStore(pgFile.url, { logger: silentLogger(), clock, ...opts }),
  };
}

/** A postgres:// URL's fields (node-postgres lets a URL's empty password win over an option). */
export function fields(url: string): { host: string; port: number; user: string; database: string } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port), user: decodeURIComponent(u.username), database: u.pathname.slice(1) };
}

/** The StateError code `fn` throws or rejects with; fails the test on anything else, or nothing. */
export async function code(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof StateError) return err.code;
    throw err;
  }
  throw new Error('expected a StateError, nothing was thrown');
}

/** `fn`'s answer as a promise, whether it answered now, later, or threw now. */
export async function call<T>(fn: () => T): Promise<Awaited<T>> {
  return await fn();
}
