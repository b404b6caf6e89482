// The lease manager's options (leases.ts), kept apart so the manager's file reads as its rounds.
import type { Clock } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Queryable } from './sql.js';

export interface LeaseManagerOptions {
  db: Queryable;
  /** Local deadlines are `monotonic` (they must not move when the wall clock steps); `now` (default Date.now) is checked against the database's. */
  clock: Pick<Clock, 'monotonic'> & Partial<Pick<Clock, 'now'>>;
  /** The wallet addresses to split, read every tick (a reload may change them). */
  addresses: () => readonly string[];
  /** The digest of the rules, safety and lease settings (agreement.ts configDigest), read every tick; default one fixed value. */
  config?: () => string;
  /** Each wallet's terms (agreement.ts walletTerms), published with the list, read every tick; default none. */
  terms?: () => ReadonlyMap<string, string>;
  /** cluster.max_clock_skew: beyond it from the database's clock, clockRefusal() says why signing stops; default 5 s. */
  maxClockSkewMs?: number;
  /** The newest shared schema version this code knows (PG_SCHEMA_VERSION); a newer one at a heartbeat makes it step aside. Default: not checked. */
  knownSchema?: number;
  /** `state.lease`: how long a lease lasts unless renewed; default 15 s. Renewed every third. */
  leaseMs?: number;
  /**
   * Taken off the local deadline, for what the two clocks may disagree on over one lease and for a
   * write already under way; default a fifth of the lease. Must leave the deadline after the next tick.
   */
  marginMs?: number;
  /** How long a draining wallet may take to finish its turn before its lease is handed back anyway; default one lease. */
  drainMs?: number;
  /** Rows of daemons expired longer than this are deleted; default one hour. */
  reapAfterMs?: number;
  /** Unique per process; default host/pid/random. */
  id?: string;
  host?: string;
  pid?: number;
  logger?: Logger;
}
