// A rule replaced by one with the same steps (gone from the config, the new one without plans of
// its own) takes the old rule's id and with it its history and limits (SPEC §2; rules/rule-ids.ts).
// Asked of the journal at every start and reload, so a restart carries as the reload did; the
// daemon's turns wait for it. A newer reload settles its own config. A read that failed is asked
// again at the next turn, and nothing new is decided until it answers: a journal unreadable for a
// moment at a SIGHUP left the renamed rule with an id of its own for the process's life, and its
// once-per-epoch deposit went out a second time in the epoch.
import type { AppConfig } from '../domain.js';
import type { Logger } from '../log/logger.js';
import { carryRuleIds } from '../rules/rule-ids.js';
import type { Store } from '../store/port.js';

interface SettleDeps {
  store: Pick<Store, 'latestRulePlans'>;
  logger: Logger;
  /** The daemon's config now: a reload since this began settles its own. */
  current: () => AppConfig;
  /** Puts the config with the carried ids in force. */
  apply: (config: AppConfig) => void;
}

/**
 * Never rejects: false when the journal could not be read (logged; renamed rules are then not
 * matched with their history), true otherwise (settled, or a newer config settles its own).
 */
export async function settleRuleIds(config: AppConfig, deps: SettleDeps): Promise<boolean> {
  const { logger } = deps;
  try {
    const plans = await deps.store.latestRulePlans();
    if (deps.current() !== config) return true;
    const outcome = carryRuleIds(config.rules, plans);
    for (const c of outcome.carried) {
      const was = plans.find((p) => p.rule === c.id);
      logger.warn(
        { event: 'rule.renamed', rule: c.name, id: c.id },
        `rule ${c.name} has the steps of rule ${c.id}, which is gone from the config: it keeps that rule's history and limits (id ${c.id}${was ? `, last planned for ${was.wallet} in epoch ${was.epoch}` : ''}); give it \`id: ${c.id}\` before you edit its steps: it is matched by them, and an edit without the id starts a history of its own`,
      );
    }
    for (const a of outcome.ambiguous) {
      logger.warn(
        { event: 'rule.rename_ambiguous', rules: a.names, ids: a.ids },
        `rule(s) ${a.names.join(', ')} have the steps of gone rule(s) ${a.ids.join(', ')}; which replaced which is not guessed, so none carries a history: give the rule meant \`id: <old id>\``,
      );
    }
    if (outcome.carried.length > 0) deps.apply({ ...config, rules: outcome.rules });
    return true;
  } catch (err) {
    logger.error({ event: 'rule.ids_failed', err }, 'could not read which rules planned before; nothing new is decided until they are read (asked again at the next turn)');
    return false;
  }
}

/** The daemon's settling of the config in force: what its turns wait for, and asked again after a failure. */
export class RuleIdsSettling {
  private current: Promise<boolean> = Promise.resolve(true);
  private failed = false;
  /** Since when every read has failed (none answered since): /readyz says so (supervisor.ts). */
  private failingSince: number | undefined;

  constructor(private readonly deps: SettleDeps & { now: () => number }) {}

  /** Settles the config in force now (a start, a reload). */
  settle(): void {
    this.failed = false;
    const settling: Promise<boolean> = settleRuleIds(this.deps.current(), this.deps).then((ok) => {
      // Only the settling in force speaks: a superseded one that failed after a reload's had
      // answered left /readyz at "cannot be read" for good (nothing asks again), and one that
      // answered after the reload's had failed said ready while no turn decided.
      if (this.current !== settling) return ok;
      if (ok) this.failingSince = undefined;
      else {
        this.failingSince ??= this.deps.now();
        this.failed = true;
      }
      return ok;
    });
    this.current = settling;
  }

  /**
   * Why nothing new is decided, while the journal cannot be read; undefined once it was. A `run`
   * whose every turn decided nothing (rule.ids_failed at each) otherwise stayed ready: its polls
   * succeed, and the database took the readiness probe's write. A read that failed is asked again
   * here, as a turn asks it: a daemon with no turn for a while (a daily schedule, a cluster member
   * holding no lease) stayed unready after the database came back, until a turn or a lease came.
   */
  unread(): string | undefined {
    this.again();
    const since = this.failingSince;
    return since === undefined ? undefined : `which rules planned before cannot be read from the state since ${new Date(since).toISOString()}: nothing new is decided until it is (rule.ids_failed)`;
  }

  /** Settles again if the last settling could not read the journal (a turn asks before it starts). */
  again(): void {
    if (this.failed) this.settle();
  }

  /** The latest settling (the same promise until the next settle): true once the ids in force are settled. */
  readonly settled = (): Promise<boolean> => this.current;
}

/**
 * Until the rule ids in force are settled (`settled` gives the latest settling: a reload during
 * the wait brings its own, waited for too). The turn's decision and the recheck before a signature
 * read the rules right after, with nothing awaited between. False when the journal could not be read.
 */
export async function untilRuleIdsSettled(settled: (() => Promise<boolean>) | undefined): Promise<boolean> {
  let ok = true;
  for (let p = settled?.(); p !== undefined; ) {
    ok = await p;
    const next = settled?.();
    if (next === p) return ok;
    p = next;
  }
  return ok;
}
