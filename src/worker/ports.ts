// What the worker needs from its edges, stated narrowly. The SQLite store and the undici client
// satisfy these structurally; tests can hand in anything that does.
import type { Disposition } from '../errors.js';
import type { AmountSpec, Lamports, PlanStatus, SignedOp, StepState, WalletSummary } from '../domain.js';

export interface Signer {
  address: string;
  sign(message: Uint8Array): Uint8Array;
}

export interface PreparedRequest {
  op: SignedOp;
  method: string;
  path: string;
  url: string;
  ts: number;
  message: string;
  body: string;
  headers: Record<string, string>;
}

export interface ActionResult {
  status: number;
  body: { claimedLamports?: Lamports | null } & Record<string, unknown>;
  rawText: string;
}

export interface ApiPort {
  walletSummary(address: string): Promise<WalletSummary>;
  prepare(
    input: { op: SignedOp; wallet: string; symbol?: string; amount?: Lamports },
    signer: Signer,
    nowMs: number,
  ): PreparedRequest;
  send(prepared: PreparedRequest): Promise<ActionResult>;
}

export interface StepRow {
  id: number;
  planId: number;
  idx: number;
  kind: SignedOp;
  symbol: string | null;
  amountSpec: AmountSpec | null;
  amountLamports: Lamports | null;
  state: StepState;
  attempts: number;
  request: StoredRequest | null;
  error: string | null;
}

export interface PlanWithSteps {
  id: number;
  wallet: string;
  address: string;
  rule: string;
  epoch: string;
  dry: boolean;
  status: PlanStatus;
  estimateLamports: Lamports;
  claimedLamports: Lamports | null;
  createdAt: number;
  steps: StepRow[];
}

/** What is recorded of a request: enough to audit and reconcile it, never a credential. */
export interface StoredRequest {
  method: string;
  url: string;
  ts: number;
  message: string;
  body: string;
  /** For a claim: what the summary said just before it was signed; reconciliation compares against it. */
  before?: { pendingLamports: string; lifetimeLamports: string | null; epoch: string };
}

export interface StorePort {
  openPlans(wallet?: string): PlanWithSteps[];
  getPlan(id: number): PlanWithSteps | undefined;
  hasUnknownSignedStep(wallet: string): boolean;
  lastRequestTs(wallet: string): number | undefined;
  setStepAmount(stepId: number, lamports: Lamports): void;
  markSending(stepId: number, request: StoredRequest, now: number): void;
  markAcknowledged(
    stepId: number,
    r: { status: number; responseRaw: string; claimedLamports?: Lamports | undefined },
    now: number,
  ): void;
  markRejected(stepId: number, r: { status?: number | undefined; responseRaw?: string | undefined; error: string }, now: number): void;
  markUnknown(stepId: number, r: { status?: number | undefined; responseRaw?: string | undefined; error: string }, now: number): void;
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
