// The PostgreSQL state with its lease manager, opened together because each needs the other: the
// store's writes are fenced by the manager's leases, and the manager's tables come from the store's
// migration (so the store opens first). Loaded only when `state.url` is set: a single-host install
// never loads the driver.
import type { Clock } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/port.js';
import { openPool } from '../store/postgres/db.js';
import { openPostgresStore } from '../store/postgres/store.js';
import { LeaseManager } from './leases.js';

export interface Cluster {
  readonly manager: LeaseManager;
  /** The wallets to split: set at start and by each reload. */
  setAddresses(addresses: readonly string[]): void;
  /** The digest of the settings daemons must agree on to share wallets (agreement.ts): set at start and by each reload. */
  setConfig(digest: string): void;
  /** Hands every lease back and closes the manager's connections (the store closes itself). */
  close(): Promise<void>;
}

export interface ClusterOptions {
  url: string;
  password: string | undefined;
  leaseMs: number;
  /** cluster.max_clock_skew. */
  maxClockSkewMs: number;
  logger: Logger;
  clock: Clock;
  redactor: { redact(text: string): string };
}

/** The fenced store and the manager; nothing is leased until the daemon registers and ticks. */
export async function openCluster(opts: ClusterOptions): Promise<{ store: Store; cluster: Cluster }> {
  let addresses: readonly string[] = [];
  let config = 'unset';
  // A round stuck on a silent connection fails after a third of a lease (the next round tries
  // again); the manager's deadline timer stops belief in the leases meanwhile either way.
  const pool = await openPool(opts.url, { password: opts.password, application: 'autoclaim-leases', queryTimeoutMs: Math.max(1_000, opts.leaseMs / 3) });
  const manager = new LeaseManager({
    db: pool,
    clock: opts.clock,
    addresses: () => addresses,
    config: () => config,
    leaseMs: opts.leaseMs,
    maxClockSkewMs: opts.maxClockSkewMs,
    logger: opts.logger,
  });
  let store: Store;
  try {
    store = await openPostgresStore(opts.url, { logger: opts.logger, clock: opts.clock, password: opts.password, redactor: opts.redactor, fence: manager.fence });
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  let closed = false;
  const cluster: Cluster = {
    manager,
    setAddresses: (next) => {
      addresses = [...next];
    },
    setConfig: (digest) => {
      config = digest;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      try {
        await manager.release();
      } finally {
        await pool.end().catch(() => undefined);
      }
    },
  };
  return { store, cluster };
}
