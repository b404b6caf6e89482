// The shapes the simulated world takes in and gives out, apart from the class that keeps it, so
// world.ts stays about behaviour.
import type { Lamports } from '../amount.js';
import type { EndpointConfig, SignedOp } from '../domain.js';

/**
 * Every signed operation the sandbox serves: the client's own, plus withdraw and burn (the real
 * service has them whether or not a client sends them).
 */
export type SandboxOp = SignedOp | 'withdraw' | 'burn';
export const SANDBOX_OPS: readonly SandboxOp[] = ['claim', 'deposit', 'mint', 'withdraw', 'burn'];

/** The part of a client's endpoint config a server cares about (how answers are read is the client's business). */
export type SandboxEndpoint = Pick<EndpointConfig, 'method' | 'path' | 'message'>;

export interface WalletInit {
  address: string;
  pendingLamports?: Lamports;
  lifetimeLamports?: Lamports;
  balanceLamports?: Lamports;
  accrualLamportsPerSec?: Lamports;
  tier?: string;
  /** false: the summary says `rank: 0` (how the real service writes "unranked") and the leaderboard leaves it out. */
  ranked?: boolean;
  /** Vault shares and minted tokens already held, in 10^-9 units, by symbol. */
  shares?: Record<string, Lamports>;
  tokens?: Record<string, Lamports>;
}

/** What the admin surface may change; `tier: null` goes back to the tier derived from lifetime. */
export interface WalletPatch {
  pendingLamports?: Lamports;
  lifetimeLamports?: Lamports;
  balanceLamports?: Lamports;
  accrualLamportsPerSec?: Lamports;
  tier?: string | null;
  ranked?: boolean;
  /** Set per symbol; symbols not named keep what they hold. */
  shares?: Record<string, Lamports>;
  tokens?: Record<string, Lamports>;
}

export interface WalletState {
  address: string;
  pendingLamports: Lamports;
  lifetimeLamports: Lamports;
  balanceLamports: Lamports;
  accrualLamportsPerSec: Lamports;
  tier: string;
  tierOverride: string | null;
  ranked: boolean;
  /** Vault shares and minted tokens held, in 10^-9 units, by symbol. */
  shares: Record<string, Lamports>;
  tokens: Record<string, Lamports>;
  createdAt: number;
}

export interface LedgerEntry {
  seq: number;
  op: SandboxOp;
  wallet: string;
  symbol: string | null;
  /** SOL for claim, deposit and mint; shares for withdraw, tokens for burn (10^-9 units either way). */
  amountLamports: Lamports;
  epoch: string;
  /** Wall ms (world clock) when applied. */
  ts: number;
  tx: string;
  signature: string;
  /** The `x-request-id` of the answer, when the action came over HTTP. */
  requestId?: string;
}

/** Decimal text with 3 fractional digits of precision (volumes and scores are not money). */
interface BreakdownRow {
  vault: string;
  volume: string;
  score: string;
}

export interface SummaryData {
  address: string;
  epoch: string;
  pendingLamports: Lamports;
  lifetimeLamports: Lamports;
  /** From 1; 0 for an unranked wallet, as the real service writes it. */
  rank: number;
  tier: string;
  breakdown: BreakdownRow[];
}

export interface LeaderboardRow {
  rank: number;
  address: string;
  score: string;
  totalRewardsLamports: Lamports;
}

export type WorldErrorCode =
  | 'invalid_address'
  | 'unknown_wallet'
  | 'unknown_symbol'
  | 'insufficient_balance'
  | 'insufficient_shares'
  | 'insufficient_tokens'
  | 'nothing_to_claim'
  | 'invalid_amount';

export class WorldError extends Error {
  constructor(
    readonly code: WorldErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WorldError';
  }
}
