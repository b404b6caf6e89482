// The PostgreSQL state with its lease manager, opened together because each needs the other: the
// store's writes are fenced by the manager's leases, and the manager's tables come from the store's
// migration (so the store opens first). Loaded only when `state.url` is set: a single-host install
// never loads the driver.
//
// Both pools tell one Reachability (store/postgres/reachability.ts) how their queries went, so the
// daemon knows the database is gone from whichever part meets it first, and back from whichever
// query goes through first. At start the database's durability is read (durability.ts): a standby
// in recovery is refused, an asynchronous standby is warned about.
import type { Clock } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/port.js';
import { endPool, openPool, redactUrl, toStateError } from '../store/postgres/db.js';
import { checkDurability } from '../store/postgres/durability.js';
import { Reachability } from '../store/postgres/reachability.js';
import { PG_SCHEMA_VERSION } from '../store/postgres/migrations.js';
import { openPostgresStore } from '../store/postgres/store.js';
import { LeaseManager } from './leases.js';
import type { Queryable } from './sql.js';

export interface Cluster {
  readonly manager: LeaseManager;
  /** Whether the database answers now (readiness, the state_unreachable alert). */
  readonly reachability: Reachability;
  /** The wallets to split, and each one's terms (agreement.ts walletTerms): set at start and by each reload. */
  setAddresses(addresses: readonly string[], terms?: ReadonlyMap<string, string>): void;
  /** The digest of the settings daemons must agree on to share wallets (agreement.ts): set at start and by each reload. */
  setConfig(digest: string): void;
  /** Hands every lease back and closes the manager's connections (the store closes itself). Bounded. */
  close(): Promise<void>;
}

export interface ClusterOptions {
  url: string;
  password: string | undefined;
  leaseMs: number;
  /** state.query_timeout: the store's every query; the lease rounds' are shorter still (a third of a lease at most). */
  queryTimeoutMs?: number;
  /** cluster.max_clock_skew. */
  maxClockSkewMs: number;
  logger: Logger;
  clock: Clock;
  redactor: { redact(text: string): string };
}

/** The fenced store and the manager; nothing is leased until the daemon registers and ticks. */
export async function openCluster(opts: ClusterOptions): Promise<{ store: Store; cluster: Cluster }> {
  let addresses: readonly string[] = [];
  let terms: ReadonlyMap<string, string> = new Map();
  const where = redactUrl(opts.url);
  let config = 'unset';
  // The probe runs only after a failure, so after the pool below exists.
  const reach = new Reachability({ probe: async () => void (await pool.query('SELECT 1')), where, logger: opts.logger, clock: opts.clock });
  // A round stuck on a silent connection fails after a third of a lease (the next round tries
  // again); the manager's deadline timer stops belief in the leases meanwhile either way.
  const leaseTimeoutMs = Math.max(1_000, Math.min(opts.queryTimeoutMs ?? Infinity, opts.leaseMs / 3));
  const pool = await openPool(opts.url, {
    password: opts.password,
    application: 'autoclaim-leases',
    queryTimeoutMs: leaseTimeoutMs,
    onConnectionError: (err) => reach.observe(err),
  });
  // The manager's queries tell the reachability too: its rounds go on while the store refuses, and
  // the first one that goes through says the database is back.
  const db: Queryable = { query: (text, values) => reach.track(pool.query(text, values)) };
  const manager = new LeaseManager({
    db,
    clock: opts.clock,
    addresses: () => addresses,
    terms: () => terms,
    config: () => config,
    leaseMs: opts.leaseMs,
    maxClockSkewMs: opts.maxClockSkewMs,
    knownSchema: PG_SCHEMA_VERSION,
    logger: opts.logger,
  });
  let store: Store;
  try {
    for (const warning of await checkDurability(pool)) opts.logger.warn({ event: 'state.durability', path: where }, warning);
    store = await openPostgresStore(opts.url, {
      logger: opts.logger,
      clock: opts.clock,
      password: opts.password,
      redactor: opts.redactor,
      fence: manager.fence,
      queryTimeoutMs: opts.queryTimeoutMs,
      reachability: reach,
    });
  } catch (err) {
    reach.close();
    await endPool(pool);
    throw toStateError(err, 'open', where);
  }
  let closed = false;
  const cluster: Cluster = {
    manager,
    reachability: reach,
    setAddresses: (next, nextTerms) => {
      addresses = [...next];
      terms = new Map(nextTerms);
    },
    setConfig: (digest) => {
      config = digest;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      try {
        await manager.release();
      } catch (err) {
        // The others take the wallets when the leases run out instead of at once: slower, not unsafe.
        opts.logger.warn({ event: 'lease.tick_failed', err }, 'could not hand the leases back; they run out by themselves');
      } finally {
        reach.close();
        await endPool(pool);
      }
    },
  };
  return { store, cluster };
}
