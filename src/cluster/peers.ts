// The lease manager's view of the other daemons at each round: their wallet lists (fetched once per
// digest: a list is sent with a heartbeat only when it changes), their config digests, and from
// those the wallets this daemon should hold (agreement.ts planShare). It says when the cluster
// starts and stops disagreeing: `cluster.wallets_differ` / `cluster.wallets_agree` (wallet-lists.ts)
// and `cluster.config_differs` (error) / `cluster.config_agrees`.
import type { Logger } from '../log/logger.js';
import { planShare, publishedList, readPublished, type Peer, type SharePlan } from './agreement.js';
import { readLists, walletsDigest, type ClusterView, type Queryable } from './sql.js';
import { WalletListWatch } from './wallet-lists.js';

export interface ConfigConflict {
  /** Live daemons whose config digest differs from this one's, or that list a wallet of this one's under other terms. */
  others: string[];
  /** How many of this daemon's wallets they list too: worked by neither. */
  contested: number;
}

export class Peers {
  /** Wallet lists by their digest, as published (checked against the digest before kept). */
  private readonly lists = new Map<string, string[]>();
  private readonly freeSince = new Map<string, number>();
  private readonly walletLists: WalletListWatch;
  private conflict_: ConfigConflict | undefined;
  private said = '';

  constructor(
    private readonly self: string,
    private readonly logger: Logger | undefined,
  ) {
    this.walletLists = new WalletListWatch(self, logger);
  }

  /** Live daemons with another config, and how many of this daemon's wallets neither works; undefined when all agree. */
  conflict(): ConfigConflict | undefined {
    return this.conflict_;
  }

  /** This round's share, from the view read and the lists published. */
  async plan(
    db: Queryable,
    view: ClusterView,
    me: { config: string; addresses: readonly string[]; terms?: ReadonlyMap<string, string> | undefined },
    clock: { now: number; leaseMs: number },
  ): Promise<SharePlan> {
    // Digested as the heartbeat publishes it: each address with its terms.
    const published = publishedList(me.addresses, me.terms);
    const mine = walletsDigest(published);
    this.lists.set(mine, published);
    const live = view.daemons.filter((d) => d.live && d.id !== this.self);
    const unknown = live.filter((d) => d.wallets !== undefined && !this.lists.has(d.wallets)).map((d) => d.id);
    for (const row of (await readLists(db, unknown)).values()) {
      if (row.wallets !== undefined && row.addresses !== undefined && walletsDigest(row.addresses) === row.wallets) this.lists.set(row.wallets, row.addresses);
    }
    // Only the lists of the daemons live now are kept (a reload changes a list; old ones pile up).
    const inUse = new Set([mine, ...live.map((d) => d.wallets)]);
    for (const digest of [...this.lists.keys()]) if (!inUse.has(digest)) this.lists.delete(digest);

    this.walletLists.observe(view.daemons, mine);
    const peers: Peer[] = live.map((d) => {
      const list = d.wallets === undefined ? undefined : this.lists.get(d.wallets);
      if (list === undefined) return { id: d.id, config: d.config, addresses: undefined };
      const read = readPublished(list);
      return { id: d.id, config: d.config, addresses: read.addresses, terms: read.terms };
    });
    const plan = planShare({
      self: { id: this.self, config: me.config, addresses: me.addresses, terms: me.terms },
      live: peers,
      leases: view.leases,
      now: clock.now,
      leaseMs: clock.leaseMs,
      freeSince: this.freeSince,
    });
    this.sayConflict(plan);
    return plan;
  }

  private sayConflict(plan: SharePlan): void {
    this.conflict_ = plan.foreign.length === 0 ? undefined : { others: plan.foreign, contested: plan.contested.size };
    const key = plan.foreign.length === 0 ? '' : `${plan.foreign.join(',')}:${plan.contested.size}`;
    if (key === this.said) return;
    const was = this.said;
    this.said = key;
    if (key === '') {
      if (was !== '') this.logger?.info({ event: 'cluster.config_agrees', daemon: this.self }, 'every live daemon runs the same rules, safety and lease settings again; shared wallets are worked again');
      return;
    }
    this.logger?.error(
      { event: 'cluster.config_differs', daemon: this.self, others: plan.foreign, contested: plan.contested.size },
      `live daemons run other rules, safety or lease settings than this one (or another release of autoclaim, during an upgrade), or list a wallet under other terms (enabled, its rules): the ${plan.contested.size} wallet(s) concerned are worked by neither until the configs agree or one side stops; give every host the same config and reload, and the same release`,
    );
  }
}
