// The state store's contract, declared once: what the daemon, the worker and the CLI may ask of the
// journal, whatever keeps it. Two adapters stand behind it and pass the same contract tests:
// sqlite/ (the default, one state file, synchronous because better-sqlite3 is) and postgres/
// (shared state for several daemons, asynchronous because every query is a round trip).
//
// The methods are declared once, in SyncStore, in the shape a synchronous adapter has; `Store`, the
// port every caller uses, is the same methods answering now or later (T | Promise<T>). Callers
// await every call, so the SQLite adapter needs no wrapper and costs no extra promise, and the
// executor still commits `sending` (awaited) before the first byte of a request. Narrower users take
// a Pick<Store, ...> (the worker's ports.ts, the wallet cycle, the CLI's state access).
import type { Lamports } from '../amount.js';
import type { PlanDraft, PlanHistoryEntry, PlanStatus, StepState, WalletSummary } from '../domain.js';
import type { AttemptRow, OutboxDraft, OutboxRow, PlanWithSteps, RulePlan, StepRow, StoredRequest, WalletStateRow } from './rows.js';
import type { PollView } from './poll-view.js';

export type { PollView } from './poll-view.js';

export type PollResult = { ok: true; summary: WalletSummary } | { ok: false; error: string };

/** What the store keeps of an answer. */
export interface ResponseRecord {
  status?: number | undefined;
  responseRaw?: string | undefined;
  /** The server's x-request-id, kept with the step and its attempt. */
  requestId?: string | undefined;
}

/** What a claim's acknowledgement says it claimed, and whether that is proved (PlanRow.claimedProved): a claim's only. */
export interface ClaimedRecord {
  claimedLamports?: Lamports;
  claimedProved?: boolean;
}

export interface InsertPlanOptions {
  dry: boolean;
  now: number;
  /** Why the rule fired, kept with the plan. */
  reason: string;
}

/**
 * A step, or a step and the attempt a write judges (1-based, as markSending counts them). A write
 * about one signed request must not land on a later request of the same step, which another daemon
 * may have signed since the write's judgement began (a paused daemon's late markNotSent or
 * reconcile: the claim-gap model's STATE_GUARD_ONLY double claim, docs/reliability.md).
 */
export type StepRef = number | { readonly id: number; readonly attempt: number };

/** The id, and the attempt to guard on (null: any). */
export function stepRef(ref: StepRef): { id: number; attempt: number | null } {
  return typeof ref === 'number' ? { id: ref, attempt: null } : { id: ref.id, attempt: ref.attempt };
}

/** How many plans listPlans answers when the query says no limit. */
export const DEFAULT_LIST_LIMIT = 100;

export interface ListPlansQuery {
  /** Only plans having at least one step in this state. */
  state?: StepState;
  /** Only plans of this wallet address. */
  address?: string;
  /** Most recent first; default 100. */
  limit?: number;
}

/**
 * Times are wall-clock Unix ms; when `now` is omitted the store's clock is asked. Every failure is
 * a StateError, so a caller that cannot record cannot send (fail closed).
 */
export interface SyncStore {
  readonly path: string;
  readonly schemaVersion: number;

  /** Every key below is the wallet's address; `wallet` (the configured name) is kept as a label. */
  /**
   * One transaction (fenced on PostgreSQL), committed when this answers: the polls are stored
   * before any plan decided from them. A record the table cannot hold throws.
   */
  recordPoll(wallet: string, address: string, at: number, result: PollResult): { newEpoch: boolean };
  walletStates(): WalletStateRow[];
  walletState(address: string): WalletStateRow | undefined;
  /** The newest epoch a good poll recorded for this address: what a polled epoch must not go back before (SPEC §2). */
  lastEpoch(address: string): string | undefined;
  /**
   * What a wallet's turn reads before it decides, in one read (poll-view.ts): the answers of
   * lastEpoch, activePlans (whether there is any), claimInDoubt, hasUnknownSignedStep and
   * planHistory(address, sinceMs, epoch), as asked one after the other with nothing written between.
   */
  pollView(address: string, sinceMs: number, epoch: string): PollView;

  insertPlan(draft: PlanDraft, opts: Omit<InsertPlanOptions, 'now'> & { now?: number }): PlanWithSteps | undefined;
  planHistory(address: string, sinceMs: number, epoch?: string): PlanHistoryEntry[];
  /** Plans still to be worked on (status open, not dry), oldest first; of one address if given. */
  openPlans(address?: string): PlanWithSteps[];
  /** Plans of this address that still have work: status open or blocked, oldest first. */
  activePlans(address: string): PlanWithSteps[];
  getPlan(id: number): PlanWithSteps | undefined;
  /** The plan of a one-off `send --id ID`, if that id was ever used. */
  planByManualId(id: string): PlanWithSteps | undefined;
  /**
   * For every rule id that ever planned (one-off sends left out), its newest plan, steps included,
   * and whether it ever planned for real: what a rule replaced by one with the same steps carries
   * its history from (rules/rule-ids.ts).
   */
  latestRulePlans(): RulePlan[];
  listPlans(q?: ListPlansQuery): PlanWithSteps[];
  getStep(id: number): StepRow | undefined;
  stepAttempts(stepId: number): AttemptRow[];

  /** planned → sending, committed before the first byte of the request goes out. */
  markSending(stepId: number, request: StoredRequest, now?: number): StepRow;
  /**
   * The signed request of a step recorded `sending` with an unsigned one (rows.ts UNSIGNED_BODY),
   * committed before its first byte goes out; guarded on the attempt, so a step recovery returned
   * to planned (or another daemon re-sent) is never given a signature.
   */
  recordSigned(stepId: StepRef, request: StoredRequest, now?: number): StepRow;
  markAcknowledged(stepId: StepRef, res: ResponseRecord & ClaimedRecord, now?: number): StepRow;
  /**
   * The plan's claimed amount, for its claim step already acknowledged without one (an answer with
   * no claimed_sol, proved by a summary read after it was recorded: executor/outcome.ts). Refused
   * (STATE_TRANSITION) unless the step is an acknowledged claim whose plan has no claimed amount.
   */
  recordClaimed(stepId: number, lamports: Lamports, now?: number): StepRow;
  markRejected(stepId: StepRef, res: ResponseRecord & { error: string }, now?: number): StepRow;
  /** sending → failed: the request itself was refused (signature, timestamp, headers, auth). */
  markFailed(stepId: StepRef, res: ResponseRecord & { error: string }, now?: number): StepRow;
  markUnknown(stepId: StepRef, res: ResponseRecord & { error: string }, now?: number): StepRow;
  /** sending → planned: provably not applied (not sent, or a 429); tried again later, freshly signed. */
  markNotSent(stepId: StepRef, error: string, now?: number): StepRow;
  /** planned → rejected without sending: refused by our own safety limits. */
  markRefused(stepId: number, error: string, now?: number): StepRow;
  reconcile(stepId: StepRef, applied: boolean, opts: { claimedLamports?: Lamports; note: string }, now?: number): StepRow;
  /**
   * An unknown claim whose summary moved without proving it (claimLooksApplied's `moved`): its
   * resolution says so (HELD_FOR_OPERATOR, plan-status.ts) and it stays `unknown`, reconciled no
   * more by any daemon, until an operator resolves it. The state does not change.
   */
  holdForOperator(stepId: StepRef, note: string, now?: number): StepRow;
  /** An operator's verdict on an unknown step (`actions resolve`). */
  resolve(stepId: StepRef, applied: boolean, note: string, now?: number): StepRow;
  setStepAmount(stepId: number, lamports: Lamports, now?: number): StepRow;
  skipRemaining(planId: number, reason: string, now?: number): number;
  /**
   * `send --cancel`: every still-planned step of the plan becomes skipped with a note of `by` and
   * `now`, and the plan records both; at most once. Throws STATE_TRANSITION (saying why) when
   * anything of the plan may be on the wire or applied (a step sending or unknown), when nothing is
   * left to send, or when it was already cancelled (plan-status.ts cancelRefusal). Serialised with
   * markSending: whichever commits first wins.
   */
  cancelPlan(planId: number, by: string, now?: number): PlanWithSteps;
  finishPlan(planId: number, now?: number): PlanStatus;

  /**
   * Steps left `sending` by a crash become unknown; returned so each can be logged. Only those of
   * `address` when given: a daemon taking over one wallet's lease recovers that wallet alone.
   * Steps in `except` (those this process is sending right now) are left alone: a wallet's turn
   * recovers what a process gone (or a daemon that lost the lease) left `sending`, never its own.
   */
  recoverInFlight(now?: number, address?: string, except?: ReadonlySet<number>): StepRow[];
  hasUnknownSignedStep(address: string): boolean;
  /**
   * A claim of this address (other than `exceptStepId`) is sending or unknown: until it is
   * settled, another claim would move the summary that reconciles it, and a claim never applied
   * could be credited with another's money.
   */
  claimInDoubt(address: string, exceptStepId?: number): boolean;
  /** The newest request timestamp (Unix seconds) this address ever signed. */
  lastRequestTs(address: string): number | undefined;
  /**
   * The distinct request timestamps (Unix seconds) this address signed at or after `fromTs`,
   * ascending, at most `limit`: which seconds are taken, once a clock that was wrong has left
   * signed seconds ahead of the one the clock gives now.
   */
  requestTsFrom(address: string, fromTs: number, limit: number): number[];
  unknownSteps(): StepRow[];
  /**
   * The store's clock now, Unix ms: what judges whether a signed request can still be accepted by
   * the service. PostgreSQL's clock_timestamp(), the one clock all daemons of a cluster share;
   * SQLite's is this machine's (the store's clock), since one machine has the state file.
   */
  clockNow(): number;

  /**
   * The outbox (service/outbox.ts): notices kept until delivered or expired. A notice whose
   * (channel, key) is already waiting is not added twice (false).
   */
  outboxAdd(draft: OutboxDraft, now?: number): boolean;
  /**
   * Takes up to `limit` notices of `channel` due at `now` (next_at reached, not expired, not claimed
   * by anyone until after `now`), oldest first, and claims them until `claimUntil`: another daemon
   * on the same PostgreSQL skips them (FOR UPDATE SKIP LOCKED), and a claim left by a daemon that
   * died lapses at `claimUntil`, so its notices are delivered by whoever comes next.
   */
  outboxClaim(channel: string, now: number, limit: number, claimUntil: number): OutboxRow[];
  /** Delivered: the notice is gone. */
  outboxDelivered(ids: readonly number[]): void;
  /** Not delivered: tried again at `nextAt` (the claim released), with the reason kept. */
  outboxRetry(ids: readonly number[], nextAt: number, error: string): void;
  /** Removes the notices of `channel` that expired at or before `now`; returns them (for the log and metrics). */
  outboxExpire(channel: string, now: number): OutboxRow[];

  /** 'ok', or what is wrong with the stored tables (SQLite's integrity_check; PostgreSQL: tables and schema version). */
  integrityCheck(): string;
  /**
   * Proves a write would go through now (readiness): takes the write lock, writes a row and rolls
   * it back, so nothing reaches the disk and nothing is fsynced. Throws a StateError when it cannot.
   */
  probeWrite(): void;
  close(): void;
}

/** A method's answer, now (SQLite) or later (PostgreSQL). */
export type Awaitable<T> = T | Promise<T>;

/** The store port: SyncStore's methods, each answering now or later. */
export type Store = {
  readonly [K in keyof SyncStore]: SyncStore[K] extends (...args: infer A) => infer R ? (...args: A) => Awaitable<R> : SyncStore[K];
};
