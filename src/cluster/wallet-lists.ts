// Live daemons may list different wallets (a rolling config change, a host left behind): the split
// is then of the list they all share, and a wallet only some list is taken by one of those after
// a lease free (agreement.ts). Still news for the operator: each daemon publishes a digest of its
// list with its heartbeat (sql.ts walletsDigest); this compares them and says so once each time
// the set of daemons that differ changes, and once when they agree again.
import type { Logger } from '../log/logger.js';
import type { DaemonRow } from './sql.js';

export class WalletListWatch {
  /** The ids of live daemons whose list differs from this one's, as last said ('' = none). */
  private differ = '';

  constructor(
    private readonly self: string,
    private readonly logger: Logger | undefined,
  ) {}

  /** Returns the ids of the live daemons that split another list. */
  observe(daemons: readonly DaemonRow[], mine: string): string[] {
    const others = daemons
      .filter((d) => d.live && d.id !== this.self && d.wallets !== undefined && d.wallets !== mine)
      .map((d) => d.id)
      .sort();
    const key = others.join(',');
    if (key === this.differ) return others;
    this.differ = key;
    if (others.length === 0) {
      this.logger?.info({ event: 'cluster.wallets_agree', daemon: this.self }, 'every live daemon splits the same wallet list again');
    } else {
      this.logger?.warn(
        { event: 'cluster.wallets_differ', daemon: this.self, others },
        'live daemons list different wallets: the ones they all list are split among them, the others taken by a daemon that lists them after a lease free; give every host the same wallets and reload',
      );
    }
    return others;
  }
}
