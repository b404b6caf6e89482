// Which adapter keeps the state, chosen in one place: state.url names a PostgreSQL database shared
// by daemons (its driver loaded only then, so a SQLite install never loads it), otherwise the SQLite
// file at state.path. A cluster's fenced store is opened by cluster/open.ts, beside its leases.
import type { Clock } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Store } from './port.js';
import type { Lock } from './sqlite/lock.js';
import { openStore } from './sqlite/store.js';

export interface OpenStateOptions {
  logger: Logger;
  clock: Clock;
  redactor: { redact(text: string): string };
  /** For `status` / `actions` beside running daemons: no creation, no migration, no writes. */
  readonly?: boolean;
  /**
   * false (`send` on shared state, beside running daemons): a PostgreSQL schema is created where
   * there is none but an older one is refused, not migrated under daemons of the older release.
   */
  upgrade?: boolean;
  /** The PostgreSQL password (state.password_file, PGPASSWORD, a credential), read by the caller. */
  password?: string | undefined;
  /** The SQLite state lock this process holds. */
  lock?: (Pick<Lock, 'path' | 'file'> & Partial<Pick<Lock, 'sent'>>) | undefined;
}

export async function openStateStore(state: { path: string; url: string | undefined; queryTimeoutMs: number }, opts: OpenStateOptions): Promise<Store> {
  const { logger, clock, redactor, readonly } = opts;
  if (state.url === undefined) return openStore(state.path, { logger, clock, redactor, readonly, lock: opts.lock });
  const { openPostgresStore } = await import('./postgres/store.js');
  return openPostgresStore(state.url, { logger, clock, redactor, readonly, upgrade: opts.upgrade, password: opts.password, queryTimeoutMs: state.queryTimeoutMs });
}
