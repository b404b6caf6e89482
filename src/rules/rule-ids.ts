// A rule's limits survive its renaming (SPEC §2). A rule's plans and limits are keyed by its id
// (`id:`, default its name), so a rule renamed without an `id:` would start afresh: a second
// deposit in the same epoch despite once_per_epoch, cooldown and daily caps (issue 24, finding 6).
// At every start and reload the config's rules are matched with the journal: a rule that has no
// plans of its own (dry ones are none: they count for no limit), whose steps are exactly those of a
// rule id that planned before and is gone from the config, takes that id, and so its history. The
// journal is the record: the same config meets the same plans after a restart and carries the same
// way. When more than one rule could be meant on either side, nothing is guessed: the rules keep
// their own ids and a warning says why.
// Pure: the daemon passes in the config's rules and each rule id's newest plan.
import type { AmountSpec, Rule, StepSpec } from '../domain.js';

/** A rule id's newest plan, as the store keeps its steps. */
export interface RuleTrace {
  rule: string;
  steps: ReadonlyArray<{ kind: string; symbol: string | null; amountSpec: AmountSpec | null }>;
  /**
   * False when the id only ever planned dry (a rule watched with `enabled: false`, a paused fleet):
   * no history the limits count, so such a rule is one without plans of its own. Absent: it did.
   */
  hasRealPlans?: boolean;
}

export interface RuleIdOutcome {
  rules: Rule[];
  /** Each rule that took a gone rule's id: `rule.renamed`. */
  carried: Array<{ name: string; id: string }>;
  /** Rules with no history of their own that more than one gone rule (or another rule) could be: `rule.rename_ambiguous`. */
  ambiguous: Array<{ names: string[]; ids: string[] }>;
}

function amountKey(a: AmountSpec | null): string {
  if (a === null) return '-';
  return a.kind === 'fixed' ? `fixed:${a.lamports}` : a.kind === 'percent' ? `percent:${a.ppm}` : 'all';
}

function stepsKey(steps: ReadonlyArray<{ kind: string; symbol: string | null; amountSpec: AmountSpec | null }>): string {
  return steps.map((s) => `${s.kind}|${s.symbol ?? '-'}|${amountKey(s.amountSpec)}`).join(' > ');
}

export function configStepsKey(steps: readonly StepSpec[]): string {
  return stepsKey(steps.map((s) => (s.kind === 'claim' ? { kind: 'claim', symbol: null, amountSpec: null } : { kind: s.kind, symbol: s.symbol, amountSpec: s.amount })));
}

export function carryRuleIds(rules: readonly Rule[], traces: readonly RuleTrace[]): RuleIdOutcome {
  const current = new Set(rules.map((r) => r.id));
  const planned = new Set(traces.filter((t) => t.hasRealPlans !== false).map((t) => t.rule));
  // Gone: ids that planned and that no rule of this config has. Fresh: rules without a plan.
  const gone = traces.filter((t) => !current.has(t.rule)).map((t) => ({ id: t.rule, key: stepsKey(t.steps) }));
  const fresh = rules.filter((r) => !planned.has(r.id)).map((r) => ({ rule: r, key: configStepsKey(r.do) }));
  const out: RuleIdOutcome = { rules: [...rules], carried: [], ambiguous: [] };
  const seenKeys = new Set<string>();
  for (const { key } of fresh) {
    if (seenKeys.has(key)) continue;
    seenKeys.add(key);
    const olds = gone.filter((g) => g.key === key);
    if (olds.length === 0) continue;
    const news = fresh.filter((f) => f.key === key);
    const [old] = olds;
    const [neu] = news;
    if (olds.length === 1 && news.length === 1 && old !== undefined && neu !== undefined) {
      out.rules = out.rules.map((r) => (r === neu.rule ? { ...r, id: old.id } : r));
      out.carried.push({ name: neu.rule.name, id: old.id });
    } else {
      out.ambiguous.push({ names: news.map((n) => n.rule.name), ids: olds.map((o) => o.id) });
    }
  }
  return out;
}
