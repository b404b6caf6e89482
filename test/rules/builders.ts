// Small builders so the decision tables read as the case, not as object literals.
import { parseSol } from '../../src/amount.js';
import type { AmountSpec, Condition, PlanHistoryEntry, Rule, RuleLimits, StepSpec, WalletSummary } from '../../src/domain.js';
import type { DecideInput } from '../../src/rules/decide.js';

export const SOL = (text: string): bigint => parseSol(text);
export const MIN = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;
/** A fixed instant: tests never read the real clock. */
export const NOW = Date.UTC(2024, 4, 1, 12, 0, 0);
export const EPOCH = '2024-05-01';

export function summary(over: Partial<WalletSummary> = {}): WalletSummary {
  return {
    address: 'Wa11et1111111111111111111111111111111111111',
    epoch: EPOCH,
    pendingLamports: SOL('1'),
    lifetimeLamports: SOL('10'),
    rank: 5,
    tier: 'gold',
    breakdown: [],
    raw: {},
    ...over,
  };
}

export const NO_LIMITS: RuleLimits = {
  oncePerEpoch: false,
  cooldownMs: undefined,
  maxPlansPerDay: undefined,
  maxLamportsPerDay: undefined,
};

export const claim: StepSpec = { kind: 'claim' };
export const pct = (percent: number): AmountSpec => ({ kind: 'percent', ppm: Math.round(percent * 10_000) });
export const fixed = (sol: string): AmountSpec => ({ kind: 'fixed', lamports: SOL(sol) });
export const all: AmountSpec = { kind: 'all' };
export const deposit = (amount: AmountSpec, symbol = 'SOL2X'): StepSpec => ({ kind: 'deposit', symbol, amount });
export const mint = (amount: AmountSpec, symbol = 'JLP2X'): StepSpec => ({ kind: 'mint', symbol, amount });

export function rule(
  name: string,
  over: { id?: string; when?: Condition[]; do?: StepSpec[]; limits?: Partial<RuleLimits> } = {},
): Rule {
  return { name, id: over.id ?? name, when: over.when ?? [], do: over.do ?? [claim], limits: { ...NO_LIMITS, ...over.limits } };
}

export function planned(over: Partial<PlanHistoryEntry> = {}): PlanHistoryEntry {
  return { rule: 'r', epoch: EPOCH, seq: 0, createdAt: NOW - DAY * 2, dry: false, status: 'done', lamports: 0n, ...over };
}

/** One wallet to which every given rule applies, real (not dry) run, 100 SOL per action. */
export function input(rules: Rule[], over: Partial<DecideInput> = {}): DecideInput {
  return {
    wallet: { name: 'treasury', address: summary().address, key: { env: 'X' }, rules: rules.map((r) => r.name) },
    summary: summary(),
    history: [],
    rules,
    safety: { maxLamportsPerAction: SOL('100') },
    now: NOW,
    dry: false,
    ...over,
  };
}
