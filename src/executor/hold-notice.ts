// Which held-back rules are said at info. A rule held back repeats its reason on every poll until
// the reason lapses: once_per_epoch until the next epoch, a cooldown for hours, a day cap for up to
// a day, an unknown step until an operator resolves it. Said at info each time, a fleet paid a log
// line per wallet per poll for it (10,000 wallets under a 6 h cooldown, a poll every 4 min: 3.6
// million lines a day; docs/reliability.md, "Months of running review"). So a hold is said at info
// when it is news — the first a process sees for a (wallet, rule), or a reason other than the last
// one said, or a new epoch — and at debug while it repeats. A hold that follows the rule's own
// firing in this process in the same epoch for once_per_epoch is not news (the firing was said).
// A condition that does not hold is the normal case: never news, and it leaves the record as it was.
import type { Decision } from '../domain.js';

export class HoldNotice {
  /** address and rule → `epoch NUL reason` last said (or `epoch NUL fired`); one entry per wallet and rule. */
  private readonly said = new Map<string, string>();

  /** true when `d` is a hold to say at info (then it counts as said). */
  observe(address: string, epoch: string, d: Pick<Decision, 'rule' | 'fired' | 'reason'>): boolean {
    const key = `${address}\u0000${d.rule}`;
    if (d.fired) {
      this.said.set(key, `${epoch}\u0000fired`);
      return false;
    }
    if (d.reason === 'condition') return false;
    const last = this.said.get(key);
    const mark = `${epoch}\u0000${d.reason}`;
    if (last === mark || (d.reason === 'once_per_epoch' && last === `${epoch}\u0000fired`)) return false;
    this.said.set(key, mark);
    return true;
  }
}
