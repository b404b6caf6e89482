// Every response is checked here before anything downstream sees it. A response that does not
// fit becomes an ApiError (BAD_RESPONSE / invalid_response) naming each bad field, with the raw
// body kept: a NaN or a string where an amount should be must never reach a decision.
import { z } from 'zod';
import type { Lamports, LeaderboardEntry, VaultBreakdown, WalletSummary } from '../domain.js';
import { ApiError } from '../errors.js';
import { formatPath } from '../json.js';
import { isLosslessNumber } from './json.js';
import {
  describe,
  optionalAmount,
  optionalDecimalText,
  optionalNumberText,
  optionalRank,
  optionalString,
  requiredAddress,
  requiredAmount,
  requiredEpoch,
  requiredPositiveInt,
  requiredString,
  said,
  roundedAmountFields,
} from './schema-fields.js';

export { isEpochDate, looksLikeAddress, roundedAmountFields } from './schema-fields.js';

/** Where a response came from, for the error a bad one becomes. */
export interface ResponseContext {
  method: string;
  url: string;
  status: number;
  rawBody: string;
  /** The answer's x-request-id, when it had one. */
  requestId?: string | undefined;
}

// A LosslessNumber is a JS object too; only a JSON object may pass as one.
const jsonObject = z.custom<Record<string, unknown>>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v) && !isLosslessNumber(v),
  { error: (iss) => `expected a JSON object, got ${describe(iss.input)}` },
);

const object = <T extends z.core.$ZodLooseShape>(shape: T) => jsonObject.pipe(z.looseObject(shape));

const breakdownEntry = object({
  vault: requiredString,
  volume: optionalNumberText,
  score: optionalNumberText,
});

export const walletSummarySchema = object({
  address: requiredString,
  epoch: requiredEpoch,
  pending_sol: requiredAmount,
  lifetime_sol: optionalAmount,
  rank: optionalRank,
  tier: optionalString,
  breakdown: z
    .array(breakdownEntry, { error: (iss) => `expected an array, got ${describe(iss.input)}` })
    .nullish()
    .transform((v) => v ?? []),
});

const leaderboardEntry = object({
  rank: requiredPositiveInt,
  address: requiredAddress,
  score: optionalNumberText,
  total_rewards_sol: optionalAmount,
});

const leaderboardSchema = z
  .array(leaderboardEntry, { error: (iss) => `expected an array of entries, got ${describe(iss.input)}` })
  .superRefine((entries, ctx) => {
    let previous = 0;
    entries.forEach((e, i) => {
      if (i === 0 && e.rank !== 1) {
        ctx.addIssue({ code: 'custom', path: [i, 'rank'], message: `expected the first rank to be 1, got ${e.rank}` });
      } else if (i > 0 && e.rank <= previous) {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'rank'],
          message: `expected ranks ascending without duplicates, got ${e.rank} after ${previous}`,
        });
      }
      previous = e.rank;
    });
  });

/**
 * Answers to signed requests (claim, deposit, mint, withdraw, burn): everything optional, unknown
 * fields kept. What decides is checked (status; claimed_sol, which sizes steps); what is said for
 * the reader is read as absent when it is of another shape (`said`).
 */
const actionResponseSchema = object({
  status: optionalString,
  tx: said(optionalString),
  claimed_sol: optionalAmount,
  epoch: said(optionalString),
  vault: said(optionalString),
  share_mint: said(optionalString),
  estimated_shares: said(optionalDecimalText),
  mint: said(optionalString),
  received: said(optionalDecimalText),
});

// A type alias (not an interface) so it is assignable to Record<string, unknown> ports.
export type ActionResponse = {
  status: string | null;
  tx: string | null;
  claimedLamports: Lamports | null;
  epoch: string | null;
  vault: string | null;
  shareMint: string | null;
  estimatedShares: string | null;
  mint: string | null;
  received: string | null;
  /** The response as parsed (numbers as exact text), unknown fields included. */
  raw: unknown;
  /** Amount fields written finer than a lamport and rounded toward zero (e.g. ["claimed_sol"]); usually empty. */
  roundedFields: string[];
};

function formatIssues(error: z.ZodError): string[] {
  // The whole body has no path: call it "body".
  return error.issues.map((i) => `${formatPath(i.path) || 'body'}: ${i.message}`);
}

export function badResponse(ctx: ResponseContext, issues: string[], cause?: unknown, code: 'BAD_RESPONSE' | 'INVALID_EPOCH' = 'BAD_RESPONSE'): ApiError {
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new ApiError(code, `${ctx.method} ${ctx.url} : invalid response: ${issues[0] ?? 'unreadable'}${more}`, {
    method: ctx.method,
    url: ctx.url,
    disposition: 'invalid_response',
    status: ctx.status,
    rawBody: ctx.rawBody,
    issues,
    requestId: ctx.requestId,
    cause,
  });
}

function check<S extends z.ZodType>(schema: S, value: unknown, ctx: ResponseContext): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw badResponse(ctx, formatIssues(result.error));
  return result.data;
}

/**
 * A wallet summary; `expectedAddress` must be the address that was asked for. A summary whose only
 * fault is its epoch (not a real date: "2025-02-30", 20250601) is INVALID_EPOCH, the code the wallet
 * cycle gives an epoch it refuses for the calendar (SPEC §2): one code for "the epoch is not believed".
 */
export function parseWalletSummary(value: unknown, expectedAddress: string, ctx: ResponseContext): WalletSummary {
  const s = checkSummary(value, ctx);
  if (s.address !== expectedAddress) {
    throw badResponse(ctx, [`address: expected ${expectedAddress} (the wallet asked for), got ${s.address}`]);
  }
  const breakdown: VaultBreakdown[] = s.breakdown.map((b) => ({ vault: b.vault, volume: b.volume, score: b.score }));
  return {
    address: s.address,
    epoch: s.epoch,
    pendingLamports: s.pending_sol,
    lifetimeLamports: s.lifetime_sol,
    rank: s.rank,
    tier: s.tier,
    breakdown,
    raw: value,
  };
}

function checkSummary(value: unknown, ctx: ResponseContext): z.output<typeof walletSummarySchema> {
  const result = walletSummarySchema.safeParse(value);
  if (result.success) return result.data;
  const onlyEpoch = result.error.issues.every((i) => i.path.length === 1 && i.path[0] === 'epoch');
  throw badResponse(ctx, formatIssues(result.error), undefined, onlyEpoch ? 'INVALID_EPOCH' : 'BAD_RESPONSE');
}

export function parseLeaderboard(value: unknown, ctx: ResponseContext): LeaderboardEntry[] {
  return check(leaderboardSchema, value, ctx).map((e) => ({
    rank: e.rank,
    address: e.address,
    score: e.score,
    totalRewardsLamports: e.total_rewards_sol,
  }));
}

export function parseActionResponse(value: unknown, ctx: ResponseContext): ActionResponse {
  const a = check(actionResponseSchema, value, ctx);
  return {
    status: a.status,
    tx: a.tx,
    claimedLamports: a.claimed_sol,
    epoch: a.epoch,
    vault: a.vault,
    shareMint: a.share_mint,
    estimatedShares: a.estimated_shares,
    mint: a.mint,
    received: a.received,
    raw: value,
    roundedFields: roundedAmountFields(value),
  };
}

/** What an error body says, best effort: `{error, message, code}` or `{error: {code, message}}`. */
interface ErrorBody {
  code: string | undefined;
  message: string | undefined;
}

export function parseErrorBody(value: unknown): ErrorBody {
  const out: ErrorBody = { code: undefined, message: undefined };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return out;
  const rec = value as Record<string, unknown>;
  const inner = rec['error'];
  const src =
    typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? (inner as Record<string, unknown>) : rec;
  const text = (v: unknown): string | undefined =>
    typeof v === 'string' ? v : isLosslessNumber(v) ? v.value : undefined;
  out.code = text(src['code']);
  out.message = text(src['message']) ?? text(src['detail']) ?? (typeof inner === 'string' ? inner : undefined);
  return out;
}
