// What the store hands out and the raw rows SQLite returns: types only. The mapping between the
// two is codecs.ts's, so this file depends on nothing and nothing circles back to it.
import type { Lamports } from '../amount.js';
import type { AmountSpec, PlanStatus, SignedOp, StepState } from '../domain.js';

export interface WalletStateRow {
  wallet: string;
  address: string;
  lastPollAt: number;
  /** When the last poll that succeeded finished; null until one does. */
  lastOkAt: number | null;
  /** The error of the last poll, null when it succeeded. */
  lastError: string | null;
  // The last good summary; kept across failed polls.
  epoch: string | null;
  pendingLamports: Lamports | null;
  lifetimeLamports: Lamports | null;
  rank: number | null;
  tier: string | null;
  /** The summary response as parsed, as JSON text. */
  summaryRaw: string | null;
  updatedAt: number;
}

export interface PlanRow {
  id: number;
  wallet: string;
  address: string;
  rule: string;
  epoch: string;
  seq: number;
  dry: boolean;
  status: PlanStatus;
  /** What it expects to claim (pending at its decision, raised to the pending its claim was signed against), or its fixed amounts without a claim. */
  estimateLamports: Lamports;
  /** What the claim step was acknowledged (or reconciled) as claiming; null until known. */
  claimedLamports: Lamports | null;
  /**
   * Whether claimedLamports is proved, so the claim's share steps ("N%", "all") may be sized from
   * it: the answer's claimed_sol (bounded by the pending seen), or lifetime's rise (reconciled, or
   * recorded after the answer). False for the pending seen of an answer without claimed_sol, and
   * for every amount a release before the column recorded (the pending seen, then, too).
   */
  claimedProved: boolean;
  /** Why the rule fired (the decision's detail). */
  reason: string;
  /** The id of a one-off `autoclaim send`; null for a rule's plan. */
  manualId: string | null;
  /** When `send --cancel` stopped this plan before anything of it was sent; null otherwise. */
  cancelledAt: number | null;
  /** Who did: the command, user, host and process. */
  cancelledBy: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * What was signed and sent for a step, for the record. Never the Authorization header: the store
 * refuses a request carrying one.
 */
export interface StoredRequest {
  method: string;
  url: string;
  /** The x-svc-ts header: integer Unix seconds, the same {ts} that was signed. */
  ts: number;
  /** The signed message. */
  message: string;
  /**
   * The exact JSON text sent, so amounts keep the byte-for-byte form that was signed. Empty while
   * the step waits for its signer (UNSIGNED_BODY): such a step was provably never sent.
   */
  body: string;
  /** Other headers worth keeping (the x-svc-* ones). */
  headers?: Record<string, string>;
  /** For a claim: the summary just before it was signed; what reconciliation compares against. */
  before?: ClaimBaseline;
}

/** Lamports as decimal text, as in the request JSON. */
export interface ClaimBaseline {
  epoch: string;
  pendingLamports: string;
  lifetimeLamports: string | null;
}

export interface StepRow {
  id: number;
  planId: number;
  idx: number;
  kind: SignedOp;
  /** Set for deposit and mint. */
  symbol: string | null;
  /** Set for deposit and mint. */
  amountSpec: AmountSpec | null;
  /** The resolved amount to send (deposit/mint); null until known. */
  amountLamports: Lamports | null;
  state: StepState;
  /** How many times it was marked sending. */
  attempts: number;
  request: StoredRequest | null;
  responseStatus: number | null;
  responseRaw: string | null;
  /** The server's x-request-id of the last answer. */
  requestId: string | null;
  error: string | null;
  /** How it was settled: reconciliation or operator note, or why it was skipped. */
  resolution: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface PlanWithSteps extends PlanRow {
  steps: StepRow[];
}

/** A rule id's newest plan, and whether the id ever planned for real (not only dry): latestRulePlans. */
export interface RulePlan extends PlanWithSteps {
  hasRealPlans: boolean;
}

export interface AttemptRow {
  id: number;
  stepId: number;
  n: number;
  request: StoredRequest | null;
  startedAt: number;
  finishedAt: number | null;
  outcome: 'acknowledged' | 'rejected' | 'failed' | 'unknown' | 'not_sent' | null;
  status: number | null;
  /** The server's x-request-id of this attempt's answer. */
  requestId: string | null;
  error: string | null;
}

// ---------------------------------------------------------------------------------------------
// Raw rows as SQLite returns them

/** A good poll's record, as both adapters write it to wallet_state (codecs.ts okPollRow). */
export interface OkPollRow {
  wallet: string;
  address: string;
  at: number;
  epoch: string;
  pending: string;
  lifetime: string | null;
  rank: number | null;
  tier: string | null;
  raw: string | null;
}

export interface RawWalletState {
  wallet: string;
  address: string;
  last_poll_at: number;
  last_ok_at: number | null;
  last_error: string | null;
  epoch: string | null;
  pending_lamports: string | null;
  lifetime_lamports: string | null;
  rank: number | null;
  tier: string | null;
  summary_raw: string | null;
  updated_at: number;
}

export interface RawPlan {
  id: number;
  wallet: string;
  address: string;
  rule: string;
  epoch: string;
  seq: number;
  dry: number;
  status: PlanStatus;
  estimate_lamports: string;
  claimed_lamports: string | null;
  claimed_proved: number;
  reason: string;
  manual_id: string | null;
  cancelled_at: number | null;
  cancelled_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface RawStep {
  id: number;
  plan_id: number;
  idx: number;
  kind: SignedOp;
  symbol: string | null;
  amount_spec: string | null;
  amount_lamports: string | null;
  state: StepState;
  attempts: number;
  request: string | null;
  response_status: number | null;
  response_raw: string | null;
  request_id: string | null;
  error: string | null;
  resolution: string | null;
  created_at: number;
  updated_at: number;
}

export interface RawAttempt {
  id: number;
  step_id: number;
  n: number;
  request: string | null;
  started_at: number;
  finished_at: number | null;
  outcome: AttemptRow['outcome'];
  status: number | null;
  request_id: string | null;
  error: string | null;
}

/** What planHistory reads of a plan (the limits' view), as both adapters select it. */
export interface RawHistory {
  id: number;
  rule: string;
  epoch: string;
  seq: number;
  created_at: number;
  dry: number;
  status: PlanStatus;
  estimate_lamports: string;
  claimed_lamports: string | null;
  /** From the plan's steps (codecs.ts historyStepColumns): its fixed amounts, comma-separated; null when it has none. */
  fixed_lamports: string | null;
  /** 1 when it claims. */
  claims: number;
  /** 1 when a step of it is acknowledged, sending or unknown. */
  spent: number;
  /** When its last request that went out (or may have) was started; null when none did. */
  moved_at: number | string | null;
}

/** A notice waiting in the outbox (service/outbox.ts): one row per notice, until delivered or expired. */
export interface OutboxDraft {
  /** Which transport delivers it, e.g. "webhook". */
  channel: string;
  /** The notice's dedupe key, e.g. "rejected:step:42": one row per (channel, key) at a time. */
  key: string;
  /** The notice itself as JSON text, already redacted. */
  body: string;
  /** Wall-clock Unix ms: dropped, undelivered, at this time. */
  expiresAt: number;
}

export interface OutboxRow extends OutboxDraft {
  id: number;
  /** Delivery attempts made so far. */
  attempts: number;
  nextAt: number;
  lastError: string | undefined;
  createdAt: number;
}

/** An outbox row as both adapters read it (snake_case, bigint columns as numbers). */
export interface RawOutboxRow {
  id: number;
  channel: string;
  key: string;
  body: string;
  attempts: number;
  next_at: number;
  expires_at: number;
  last_error: string | null;
  created_at: number;
}

export function outboxRowFromRaw(r: RawOutboxRow): OutboxRow {
  return {
    id: Number(r.id),
    channel: r.channel,
    key: r.key,
    body: r.body,
    attempts: Number(r.attempts),
    nextAt: Number(r.next_at),
    expiresAt: Number(r.expires_at),
    lastError: r.last_error ?? undefined,
    createdAt: Number(r.created_at),
  };
}

/**
 * The body of a step recorded `sending` before its signer answered (SPEC §7): no request exists
 * yet, so none can have gone out. recordSigned fills it in before the first byte is sent; recovery
 * returns a step still carrying it to `planned`.
 */
export const UNSIGNED_BODY = '';

/** Whether a recorded request was never signed, hence never sent. */
export function isUnsigned(request: StoredRequest | null): boolean {
  return request !== null && request.body === UNSIGNED_BODY;
}
