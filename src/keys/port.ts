// The signer port (SPEC §7): what the executor asks of a wallet's key. The request is the action,
// never bare bytes: each backend builds the message from its own templates (message.ts), so
// nothing can obtain a signature over bytes it did not check.
import type { SignedOp } from '../domain.js';

export interface SignAction {
  op: SignedOp;
  /** base58 address of the wallet. */
  wallet: string;
  symbol?: string;
  /** Canonical SOL text (formatSol). */
  amount?: string;
  /** Unix seconds, as in the `<prefix>-ts` header. */
  ts: number;
  epoch?: string;
  planId?: string;
  stepId?: string;
}

export interface SignResult {
  /** The exact text that was signed. */
  message: string;
  signature: Uint8Array;
}

export type SignerBackend = 'file' | 'env' | 'credential' | 'pkcs11' | 'vault' | 'aws_kms' | 'signer';

export interface WalletSigner {
  readonly address: string;
  readonly backend: SignerBackend;
  sign(action: SignAction, signal: AbortSignal): Promise<SignResult>;
  close?(): Promise<void>;
}

/** A backend refused to sign (its policy, an unknown key, a wrong answer): nothing is sent. */
export class SignerRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SignerRefused';
  }
}
