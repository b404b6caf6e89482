// The cluster's series (state.url): leases held, live daemons, leases lost. A daemon on its own
// SQLite file exports them too, at 0, so the rules and the dashboard find every series they name on
// any daemon; the rules tell the two apart by autoclaim_cluster_daemons_live, 0 only outside a cluster.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { LossReason } from '../cluster/leases.js';

const PREFIX = 'autoclaim_';

/** Every reason a lease is lost (leases.ts's LossReason), so each counter series exists from the start. */
export const LEASE_LOSS_REASONS = ['expired', 'taken', 'deadline', 'recovery_failed', 'schema_newer'] as const satisfies readonly LossReason[];
// A reason added to LossReason and not here fails the typecheck.
const everyLossReason: [Exclude<LossReason, (typeof LEASE_LOSS_REASONS)[number]>] extends [never] ? true : never = true;
void everyLossReason;

/** What the lease manager says at scrape time (state.url only). */
export interface ClusterCounts {
  /** Wallets this daemon holds and works (recovered, not draining). */
  held: number;
  /** Daemons live in the cluster at the last lease tick, this one included. */
  live: number;
}

export function registerClusterMetrics(registers: Registry[], cluster: (() => ClusterCounts | undefined) | undefined): { leaseLost(reason: LossReason): void } {
  new Gauge({
    name: `${PREFIX}leases_held`,
    help: 'Wallets this daemon holds a lease on and works (shared state only; 0 on a SQLite state, which needs no lease).',
    registers,
    collect() {
      this.set(cluster?.()?.held ?? 0);
    },
  });
  new Gauge({
    name: `${PREFIX}cluster_daemons_live`,
    help: 'Daemons live in the cluster at the last lease round, this one included; 0 when the state is not shared (SQLite).',
    registers,
    collect() {
      this.set(cluster?.()?.live ?? 0);
    },
  });
  const leaseLosses = new Counter({
    name: `${PREFIX}lease_losses_total`,
    help: 'Leases lost without being handed back, by reason: expired (lapsed in the database), taken (another daemon holds it), deadline (no renewal in time), recovery_failed; the wallet\'s work stopped.',
    labelNames: ['reason'] as const,
    registers,
  });
  for (const reason of LEASE_LOSS_REASONS) leaseLosses.inc({ reason }, 0);
  return {
    leaseLost: (reason) => leaseLosses.inc({ reason }),
  };
}
