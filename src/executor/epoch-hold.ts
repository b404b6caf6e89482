// Which once_per_epoch holds are said at info. A rule held back because it already planned in this
// epoch is normally debug (it repeats on every poll until the next epoch), but the first such hold
// a process sees for a (wallet, rule, epoch) — after a restart, or a reload — is the only word on
// why nothing fires for the rest of the epoch (~70 s in the demo, up to a day against the real
// API): that one is info. A hold that follows the rule's own firing in this process is not news.
import type { Decision } from '../domain.js';

export class EpochHoldNotice {
  /** address and rule → the epoch last fired or announced in; one entry per wallet and rule. */
  private readonly said = new Map<string, string>();

  /** true when `d` is a once_per_epoch hold not yet said for this epoch (then it counts as said). */
  observe(address: string, epoch: string, d: Pick<Decision, 'rule' | 'fired' | 'reason'>): boolean {
    const key = `${address}\u0000${d.rule}`;
    if (d.fired) {
      this.said.set(key, epoch);
      return false;
    }
    if (d.reason !== 'once_per_epoch' || this.said.get(key) === epoch) return false;
    this.said.set(key, epoch);
    return true;
  }
}
