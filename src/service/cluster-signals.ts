// What the operator signals hear from the lease manager (state.url only): the leases held and the
// live daemons (metrics at scrape time, readiness per request), each lease lost (a counter by
// reason), and which wallets this daemon answers for (the fleet's scope, so a daemon reports on
// its own wallets, never on those another daemon works). Kept apart from supervisor.ts so a test
// can wire a real manager to real metrics without a daemon.
import type { LeaseManager } from '../cluster/leases.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/port.js';
import type { AlertInputs } from './alerts.js';
import type { ClusterCounts, Metrics } from './metrics.js';

type Manager = Pick<LeaseManager, 'id' | 'held' | 'liveDaemons' | 'on'>;

/**
 * The cluster's alert conditions (alerts.ts): this machine's clock out of bounds of the
 * database's, live daemons running another config, and a shared schema newer than this code.
 */
export function clusterConditions(manager: Pick<LeaseManager, 'clockRefusal' | 'configConflict' | 'schemaRefusal'>): NonNullable<AlertInputs['cluster']> {
  const clock = manager.clockRefusal();
  const conflict = manager.configConflict();
  const schema = manager.schemaRefusal();
  return [
    { kind: 'schema_newer', bad: schema !== undefined, text: schema?.reason ?? '' },
    { kind: 'clock_skew', bad: clock !== undefined, text: `clock skew: ${clock?.reason ?? ''}; this daemon signs nothing until it is back (check NTP)` },
    {
      kind: 'config_differs',
      bad: conflict !== undefined,
      text: `config differs from live daemon(s) ${conflict?.others.join(', ') ?? ''}: ${conflict?.contested ?? 0} wallet(s) they list too are worked by neither; give every host the same config`,
    },
  ];
}

/** Held leases and live daemons; this daemon always counts itself live (its own row may lag a tick). */
export function clusterCounts(manager: Pick<Manager, 'id' | 'held' | 'liveDaemons'>): ClusterCounts {
  const live = manager.liveDaemons();
  return { held: manager.held().length, live: live.length + (live.includes(manager.id) ? 0 : 1) };
}

/** The fleet's scope: the wallets held now, asked at each read (a lease may lapse between two). */
export function heldScope(manager: Pick<Manager, 'held'>): () => ReadonlySet<string> {
  return () => new Set(manager.held());
}

/** Subscribes the metrics to the manager; returns the unsubscribes. */
export function watchLeases(manager: Manager, deps: { metrics: Metrics; store: Pick<Store, 'walletState'>; logger: Logger }): Array<() => void> {
  const { metrics, store, logger } = deps;
  return [
    manager.on('lost', ({ why }) => metrics.leaseLost(why)),
    // A wallet taken over comes with its last success as the database has it (its previous owner
    // polled it), not as this daemon read it at start: otherwise it would count as stale until its
    // first poll here. Awaited before the wallet is worked, and never throws: a failed read must
    // not fail the wallet's recovery (its first poll here fills the view in).
    manager.on('acquired', async ({ address }) => {
      try {
        const row = await store.walletState(address);
        if (row !== undefined) metrics.fleet.restore([row]);
      } catch (err) {
        logger.warn({ event: 'metrics.setup_failed', address, err }, 'could not read a wallet taken over for the metrics; they fill in at its first poll');
      }
    }),
  ];
}
