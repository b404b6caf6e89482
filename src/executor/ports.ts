// What the worker needs from its edges, stated narrowly. The store's is a Pick of the one store port;
// the undici client satisfies ApiPort structurally; tests can hand in anything that does.
import type { Disposition } from '../errors.js';
import type { Lamports, WalletSummary } from '../domain.js';
import type { PreparedRequest, SignedInput, UnsignedRequest } from '../api/signed-request.js';
import type { Store } from '../store/port.js';

// The data shapes are the store's and the client's own (type-only imports: no runtime coupling);
// what is narrowed here is the set of operations the worker may call.
export type { WalletSigner } from '../keys/port.js';
export type { PreparedRequest, UnsignedRequest } from '../api/signed-request.js';
export type { PlanWithSteps, StepRow, StoredRequest } from '../store/rows.js';
export type { ResponseRecord } from '../store/port.js';

interface ActionResult {
  status: number;
  body: { claimedLamports?: Lamports | null; status?: string | null; raw?: unknown } & Record<string, unknown>;
  rawText: string;
  requestId?: string | undefined;
}

export interface ApiPort {
  walletSummary(address: string): Promise<WalletSummary>;
  /** Everything of a request but its signature, and the action the wallet's signer is asked for. */
  unsigned(input: SignedInput, nowMs: number): UnsignedRequest;
  /** The request with its signature, already checked against the message and the address. */
  seal(unsigned: UnsignedRequest, signature: Uint8Array): PreparedRequest;
  /** `gate`: asked after every wait, right before the first byte (api/client.ts SendGate). */
  send(prepared: PreparedRequest, gate?: () => string | undefined): Promise<ActionResult>;
  /** Server Date minus our clock at the last response, when measured: a refusal's clock signal. */
  clockSkewMs?(): number | undefined;
}

/**
 * The store operations the executor may call: a view of the one store port (store/port.ts), so
 * the two cannot drift apart.
 */
export type WorkerStore = Pick<
  Store,
  | 'getPlan'
  | 'hasUnknownSignedStep'
  | 'claimInDoubt'
  | 'lastRequestTs'
  | 'requestTsFrom'
  | 'planHistory'
  | 'setStepAmount'
  | 'markSending'
  | 'recordSigned'
  | 'markAcknowledged'
  | 'recordClaimed'
  | 'markRejected'
  | 'markUnknown'
  | 'markFailed'
  | 'markNotSent'
  | 'markRefused'
  | 'reconcile'
  | 'holdForOperator'
  | 'clockNow'
  | 'skipRemaining'
  | 'finishPlan'
>;

export type { Disposition };
