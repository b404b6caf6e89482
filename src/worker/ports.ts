// What the worker needs from its edges, stated narrowly. The SQLite store and the undici client
// satisfy these structurally; tests can hand in anything that does.
import type { Disposition } from '../errors.js';
import type { Lamports, PlanHistoryEntry, PlanStatus, SignedOp, WalletSummary } from '../domain.js';
import type { Signer } from '../api/signer.js';
import type { PreparedRequest } from '../api/signed-request.js';
import type { PlanWithSteps, StoredRequest } from '../store/rows.js';

// The data shapes are the store's and the client's own (type-only imports: no runtime coupling);
// what is narrowed here is the set of operations the worker may call.
export type { Signer } from '../api/signer.js';
export type { PreparedRequest } from '../api/signed-request.js';
export type { PlanWithSteps, StepRow, StoredRequest } from '../store/rows.js';

export interface ActionResult {
  status: number;
  body: { claimedLamports?: Lamports | null; status?: string | null; raw?: unknown } & Record<string, unknown>;
  rawText: string;
  requestId?: string | undefined;
}

/** What the store keeps of an answer. */
export interface ResponseRecord {
  status?: number | undefined;
  responseRaw?: string | undefined;
  /** The server's x-request-id. */
  requestId?: string | undefined;
}

export interface ApiPort {
  walletSummary(address: string): Promise<WalletSummary>;
  prepare(
    input: { op: SignedOp; wallet: string; epoch?: string; symbol?: string; amount?: Lamports },
    signer: Signer,
    nowMs: number,
  ): PreparedRequest;
  send(prepared: PreparedRequest): Promise<ActionResult>;
}

export interface StorePort {
  openPlans(address?: string): PlanWithSteps[];
  getPlan(id: number): PlanWithSteps | undefined;
  /** Every wallet argument here is the wallet's address. */
  hasUnknownSignedStep(address: string): boolean;
  /** A claim of this address other than `exceptStepId` is sending or unknown. */
  claimInDoubt(address: string, exceptStepId?: number): boolean;
  lastRequestTs(address: string): number | undefined;
  planHistory(address: string, sinceMs: number, epoch?: string): PlanHistoryEntry[];
  setStepAmount(stepId: number, lamports: Lamports): void;
  markSending(stepId: number, request: StoredRequest, now: number): void;
  markAcknowledged(
    stepId: number,
    r: ResponseRecord & { claimedLamports?: Lamports | undefined },
    now: number,
  ): void;
  markRejected(stepId: number, r: ResponseRecord & { error: string }, now: number): void;
  markUnknown(stepId: number, r: ResponseRecord & { error: string }, now: number): void;
  /** sending → failed: the request itself was refused (signature, timestamp, headers, auth). */
  markFailed(stepId: number, r: ResponseRecord & { error: string }, now: number): void;
  markNotSent(stepId: number, error: string, now: number): void;
  /** planned → rejected without sending: refused by our own safety limits. */
  markRefused(stepId: number, error: string, now: number): void;
  reconcile(
    stepId: number,
    applied: boolean,
    r: { claimedLamports?: Lamports | undefined; note: string },
    now: number,
  ): void;
  skipRemaining(planId: number, reason: string, now: number): void;
  finishPlan(planId: number, now: number): PlanStatus;
}

export type { Disposition };
