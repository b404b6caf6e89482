// The rules section of the config schema (schema.ts): conditions on what a poll saw, the steps of
// a plan with their amounts, and the limits on how often a rule fires. What the steps mean
// together (a percent needs a claim before it, ...) is checked afterwards, in cross-checks.ts.
import { z } from 'zod';
import { Duration, name, posInt, SOL_DECIMAL_PATTERN, SolAmount, whenPresent } from './schema-fields.js';

const PERCENT_PATTERN = '^[0-9]+(?:\\.[0-9]{1,4})?%$';
const StepAmount = z
  .union(
    [
      z.number().nonnegative({ error: 'a SOL amount cannot be negative' }),
      z.string().regex(new RegExp(SOL_DECIMAL_PATTERN)).describe('a fixed SOL amount as a decimal string'),
      z.string().regex(new RegExp(PERCENT_PATTERN)).describe("a percent of what this plan's claim received"),
      z.literal('all').describe("everything this plan's claim received"),
    ],
    {
      error: whenPresent(
        'expected a SOL amount (0.5), a percent of what the claim received ("50%", at most 4 decimals) or "all"',
      ),
    },
  )
  .describe('SOL amount (0.5), "N%" of what this plan claimed (up to 4 decimals), or "all"');

const SYMBOL_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$';
const symbol = z
  .string()
  .regex(new RegExp(SYMBOL_PATTERN), { error: 'a symbol is 1 to 32 letters, digits, "_", "." or "-", e.g. SOL2X' })
  .describe('vault or token symbol, e.g. SOL2X');

/** A map of comparison operators to values, e.g. { gte: 0.5 }. */
function comparisons<T extends z.ZodType>(value: T, example: string) {
  return z
    .strictObject(
      {
        gt: value.optional(),
        gte: value.optional(),
        lt: value.optional(),
        lte: value.optional(),
        eq: value.optional(),
        ne: value.optional(),
        in: z.array(value).min(1).optional(),
      },
      { error: whenPresent(`expected operators and values, e.g. ${example}`) },
    )
    .describe(`operator → value, e.g. ${example}`);
}

const amountOps = comparisons(SolAmount, '{ gte: 0.5 }');
const rankOps = comparisons(posInt().describe('leaderboard rank, 1 is first'), '{ lte: 10 }');

// Tiers are words the service writes ("Gold"), compared without case. A look-alike letter (a
// Cyrillic "о"), an invisible or a padding space never matches one, which turns `ne` into
// "always": only what can match is accepted.
const TIER_PATTERN = '^[A-Za-z0-9](?:[A-Za-z0-9 _.+-]{0,62}[A-Za-z0-9+])?$';
const tierValue = z
  .string()
  .regex(new RegExp(TIER_PATTERN), { error: 'a tier is 1 to 64 letters, digits, spaces, "_", ".", "+" or "-" as the service writes it, e.g. Gold' })
  .describe('a tier as the service writes it, e.g. Gold (compared without case)');
const tierOps = z
  .strictObject(
    { eq: tierValue.optional(), ne: tierValue.optional(), in: z.array(tierValue).min(1).optional() },
    { error: whenPresent('expected operators and values, e.g. { in: [gold, platinum] }') },
  )
  .describe('operator → value, e.g. { in: [gold, platinum] }');

const When = z
  .strictObject(
    {
      pending_sol: amountOps.optional(),
      lifetime_sol: amountOps.optional(),
      rank: rankOps.optional(),
      tier: tierOps.optional(),
    },
    { error: whenPresent('expected conditions by field, e.g. { pending_sol: { gte: 0.5 } }') },
  )
  .describe('conditions, all of which must hold');

const Transfer = z.strictObject({ symbol, amount: StepAmount });
const Step = z
  .union(
    [
      z.literal('claim').describe("claim the wallet's pending rewards"),
      z.strictObject({ deposit: Transfer.describe('deposit into a vault') }),
      z.strictObject({ mint: Transfer.describe('mint a leveraged token') }),
      z.strictObject({ withdraw: Transfer.describe('withdraw from a vault') }),
      z.strictObject({ burn: Transfer.describe('burn (redeem) a leveraged token') }),
    ],
    { error: whenPresent('expected claim, or one of { deposit | mint | withdraw | burn: { symbol, amount } }') },
  )
  .describe('one action; steps run in order');

const Limits = z
  .strictObject({
    once_per_epoch: z.boolean().default(true).describe('at most one plan per wallet and epoch'),
    cooldown: Duration.optional().describe('least time between two plans of this rule for a wallet'),
    max_plans_per_day: posInt().optional().describe('plans of this rule per wallet in any 24 hours'),
    max_sol_per_day: SolAmount.optional().describe("SOL claimed by this rule per wallet in any 24 hours, plus the SOL its fixed deposits and mints move (a withdraw's shares and a burn's tokens are not SOL)"),
  })
  .prefault({});

export const Rule = z.strictObject({
  name: name('rule').describe('unique rule name'),
  id: name('rule id')
    .optional()
    .describe("what the rule's plans and limits are keyed by (default: its name); keep it when renaming the rule"),
  when: When.optional()
    .describe('conditions, all of which must hold; none means every epoch'),
  do: z.array(Step).min(1, { error: 'a rule needs at least one step' }).describe('steps, in order'),
  limits: Limits,
  enabled: z
    .boolean()
    .default(true)
    .describe('false: the rule is still decided, in dry mode (plan.dry, nothing signed), so its decisions stay visible'),
});
