// The per-rule limits, judged against the plans already recorded for this wallet and rule.
import type { Lamports } from '../amount.js';
import type { PlanHistoryEntry, Rule, RuleLimits } from '../domain.js';
import { formatDuration, sol } from './format.js';

export const DAY_MS = 86_400_000;

/**
 * How far back the plan history judged by these rules' limits must reach: the rolling day, or the
 * longest cooldown when that is longer. Read over a day only, a `cooldown: 3d` lost its plan from
 * the history after 24 h (once its epoch was over) and the rule fired every day.
 */
export function historyLookbackMs(rules: readonly Pick<Rule, 'limits'>[]): number {
  return rules.reduce((ms, r) => Math.max(ms, r.limits.cooldownMs ?? 0), DAY_MS);
}

export type LimitReason = 'once_per_epoch' | 'cooldown' | 'max_plans_per_day' | 'max_sol_per_day';

/**
 * safety.max_sol_per_wallet_per_day (SPEC §2: a wallet-level daily cap backs every rule). `plans`
 * are every plan of the address that counts (all rules, one-off sends too, same dry-ness, not
 * failed unless spent, the plan judged left out), each counted as a rule's max_sol_per_day counts
 * it: its claim (amounts.ts claimDayLamports) and its fixed amounts (planDayLamports). Over the
 * same 24 h as the rule caps. Undefined when within the cap or there is none.
 */
export function walletDayBreach(input: {
  maxLamports: Lamports | undefined;
  plans: readonly PlanHistoryEntry[];
  now: number;
  estimateLamports: Lamports;
}): { reason: 'max_sol_per_wallet_per_day'; detail: string } | undefined {
  const { maxLamports, now, estimateLamports } = input;
  if (maxLamports === undefined) return undefined;
  const spent = input.plans.filter((p) => inLastDay(p, now)).reduce((sum, p) => sum + p.lamports, 0n);
  const total = spent + estimateLamports;
  if (total <= maxLamports) return undefined;
  return {
    reason: 'max_sol_per_wallet_per_day',
    detail:
      `safety.max_sol_per_wallet_per_day ${sol(maxLamports)}: ${sol(spent)} SOL by this wallet's plans in the last 24h ` +
      `+ ${sol(estimateLamports)} SOL now = ${sol(total)} SOL`,
  };
}

/**
 * Whether a recorded plan counts for the limits. A `failed` plan (the server refused a request of
 * it as invalid: the setup, not the action) counts for nothing, so a fixed setup fires the rule
 * again (SPEC §2) — unless a step of it was applied or may have been before that refusal: its
 * claim or its first deposit moved money, and firing the rule again in the epoch would move it
 * twice (`spent`, from the store).
 */
export function countsForLimits(p: PlanHistoryEntry): boolean {
  return p.status !== 'failed' || p.spent === true;
}

interface LimitBreach {
  reason: LimitReason;
  detail: string;
}

interface LimitInput {
  limits: RuleLimits;
  /** Plans of this rule for this wallet, already filtered to the same dry-ness. */
  plans: readonly PlanHistoryEntry[];
  epoch: string;
  now: number;
  estimateLamports: Lamports;
}

/**
 * In the rolling day: createdAt in (now - 24h, now], and also anything dated after now — a plan
 * from "the future" means the clock stepped back, and leaving it out would let a rule fire again.
 * A plan recorded earlier whose request went out in the day (movedAt) moved its money in it, and
 * counts too: a plan resumed after a day down would otherwise fall out of the window it spent in.
 */
function inLastDay(p: PlanHistoryEntry, now: number): boolean {
  return p.createdAt > now - DAY_MS || (p.movedAt !== undefined && p.movedAt > now - DAY_MS);
}

function cmp<T extends number | bigint | string>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byPlanOrder(a: PlanHistoryEntry, b: PlanHistoryEntry): number {
  return cmp(a.seq, b.seq) || cmp(a.createdAt, b.createdAt) || cmp(a.status, b.status) || cmp(a.lamports, b.lamports);
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The first limit that stops this plan, in the documented order, or undefined. */
export function firstLimitBreach(input: LimitInput): LimitBreach | undefined {
  const { limits, plans, epoch, now, estimateLamports } = input;

  if (limits.oncePerEpoch) {
    // The lowest seq names it, so the detail does not depend on the order history came in.
    const existing = plans.filter((p) => p.epoch === epoch).sort(byPlanOrder)[0];
    if (existing) {
      return {
        reason: 'once_per_epoch',
        detail: `once_per_epoch: already planned in epoch ${epoch} (seq ${existing.seq}, ${existing.status})`,
      };
    }
  }

  if (limits.cooldownMs !== undefined && plans.length > 0) {
    // From the last money a plan moved, too: one held for hours (an unknown step an operator
    // resolved, a daemon down) that sends now would otherwise let the rule fire again at once.
    const last = plans.reduce((max, p) => Math.max(max, p.createdAt, p.movedAt ?? -Infinity), -Infinity);
    const endsAt = last + limits.cooldownMs;
    if (now < endsAt) {
      const skew = last > now ? `; the last plan is dated ${formatDuration(last - now)} in the future (clock stepped back?)` : '';
      return {
        reason: 'cooldown',
        detail: `cooldown ${formatDuration(limits.cooldownMs)} ends in ${formatDuration(endsAt - now)}${skew}`,
      };
    }
  }

  if (limits.maxPlansPerDay !== undefined || limits.maxLamportsPerDay !== undefined) {
    const day = plans.filter((p) => inLastDay(p, now));
    if (limits.maxPlansPerDay !== undefined && day.length >= limits.maxPlansPerDay) {
      return {
        reason: 'max_plans_per_day',
        detail: `max_plans_per_day ${limits.maxPlansPerDay}: ${plural(day.length, 'plan', 'plans')} in the last 24h`,
      };
    }
    if (limits.maxLamportsPerDay !== undefined) {
      const spent = day.reduce((sum, p) => sum + p.lamports, 0n);
      const total = spent + estimateLamports;
      if (total > limits.maxLamportsPerDay) {
        return {
          reason: 'max_sol_per_day',
          detail:
            `max_sol_per_day ${sol(limits.maxLamportsPerDay)}: ${sol(spent)} SOL in the last 24h ` +
            `+ ${sol(estimateLamports)} SOL now = ${sol(total)} SOL`,
        };
      }
    }
  }
  return undefined;
}
