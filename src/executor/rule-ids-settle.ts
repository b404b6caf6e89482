// A rule replaced by one with the same steps (gone from the config, the new one without plans of
// its own) takes the old rule's id and with it its history and limits (SPEC §2; rules/rule-ids.ts).
// Asked of the journal at every start and reload, so a restart carries as the reload did; the
// daemon's turns wait for it. A newer reload settles its own config.
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

/** Never rejects: a failure is logged, and renamed rules are then not matched with their history. */
export async function settleRuleIds(config: AppConfig, deps: SettleDeps): Promise<void> {
  const { logger } = deps;
  try {
    const plans = await deps.store.latestRulePlans();
    if (deps.current() !== config) return;
    const outcome = carryRuleIds(config.rules, plans);
    for (const c of outcome.carried) {
      const was = plans.find((p) => p.rule === c.id);
      logger.warn(
        { event: 'rule.renamed', rule: c.name, id: c.id },
        `rule ${c.name} has the steps of rule ${c.id}, which is gone from the config: it keeps that rule's history and limits (id ${c.id}${was ? `, last planned for ${was.wallet} in epoch ${was.epoch}` : ''}); give it \`id: ${c.id}\` to say so`,
      );
    }
    for (const a of outcome.ambiguous) {
      logger.warn(
        { event: 'rule.rename_ambiguous', rules: a.names, ids: a.ids },
        `rule(s) ${a.names.join(', ')} have the steps of gone rule(s) ${a.ids.join(', ')}; which replaced which is not guessed, so none carries a history: give the rule meant \`id: <old id>\``,
      );
    }
    if (outcome.carried.length > 0) deps.apply({ ...config, rules: outcome.rules });
  } catch (err) {
    logger.error({ event: 'rule.ids_failed', err }, 'could not read which rules planned before; renamed rules are not matched with their history');
  }
}

/**
 * Until the rule ids in force are settled (`settled` gives the latest settling: a reload during
 * the wait brings its own, waited for too). The turn's decision and the recheck before a signature
 * read the rules right after, with nothing awaited between.
 */
export async function untilRuleIdsSettled(settled: (() => Promise<void>) | undefined): Promise<void> {
  for (let p = settled?.(); p !== undefined; ) {
    await p;
    const next = settled?.();
    if (next === p) return;
    p = next;
  }
}
