// The signer port (SPEC §7): a wallet's key is reached through `sign(action)`, never through bare
// bytes. The action says what is to be done; the backend renders the signed text from the
// configured templates itself (message.ts), so whatever stands behind the port — the daemon's own
// memory, an HSM, Vault, KMS or the signer service with its policy — signs only messages it built.
import type { SignedOp } from '../domain.js';

/** What is to be signed: the action, not its bytes. */
export interface SignAction {
  op: SignedOp;
  /** The wallet's address (base58); must be the signer's. */
  wallet: string;
  /** Every op but claim. */
  symbol?: string;
  /** Every op but claim: the canonical SOL text (formatSol), exactly what the body carries. */
  amount?: string;
  /** Unix seconds; the same integer goes in the `<prefix>-ts` header. */
  ts: number;
  /** The plan's epoch ("YYYY-MM-DD"), when known. */
  epoch?: string;
  planId?: string;
  stepId?: string;
}

export interface SignResult {
  /** The exact text that was signed (UTF-8). */
  message: string;
  /** The 64-byte Ed25519 signature. */
  signature: Uint8Array;
}

export type SignerBackend = 'file' | 'env' | 'credential' | 'pkcs11' | 'vault' | 'aws_kms' | 'signer';

export interface WalletSigner {
  readonly address: string;
  readonly backend: SignerBackend;
  /**
   * Where a remote backend answers (a Vault address, a KMS region and endpoint, a PKCS#11 module
   * and token, a signer socket), shared by the wallets it signs for; never a secret. After one of
   * its requests goes unanswered the executor stops waiting on the others for a while
   * (executor/signing-guard.ts). Absent for an in-process key.
   */
  readonly location?: string;
  /** Rejects with SignerRefused when the backend (or its policy) refuses; aborts with `signal`. */
  sign(action: SignAction, signal: AbortSignal): Promise<SignResult>;
  /** Releases sessions, sockets, handles. */
  close?(): Promise<void>;
}

/**
 * A signer that answered no: policy (SPEC §7 codes: POLICY_OP, POLICY_SYMBOL, POLICY_ACTION_CAP,
 * POLICY_DAY_CAP, ALREADY_SIGNED_EPOCH, TS_SKEW, UNKNOWN_KEY), a malformed action
 * (INVALID_ACTION), or a backend's own failure (e.g. PKCS11_*, VAULT_*, KMS_*, BAD_SIGNATURE).
 * The daemon records the step refused before sending: nothing was sent.
 */
export class SignerRefused extends Error {
  override readonly name = 'SignerRefused';
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * A backend's code for "could not be reached" (a connection refused, a 5xx from Vault or KMS, a
 * token not present): like a deadline passed, the executor puts the step back to planned, to be
 * signed afresh later, rather than refusing it on the word of a signer that never judged it.
 */
export const SIGNER_UNAVAILABLE = 'SIGNER_UNAVAILABLE';
