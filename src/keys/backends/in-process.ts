// Today's keys behind the port: a key from a file, an environment variable or a systemd
// credential, held in the daemon's memory as an opaque KeyObject (keys.ts, signer.ts). The
// cheapest backend and the least isolated: whatever runs code in the daemon can sign with it.
import type { Signer } from '../signer.js';
import { DEFAULT_ENDPOINTS } from '../../api/endpoints.js';
import { messageFor, templatesOf, type MessageTemplates } from '../message.js';
import { SignerRefused, type SignAction, type SignerBackend, type SignResult, type WalletSigner } from '../port.js';

export class InProcessSigner implements WalletSigner {
  readonly #key: Signer;
  readonly #templates: MessageTemplates;

  constructor(
    key: Signer,
    readonly backend: Extract<SignerBackend, 'file' | 'env' | 'credential'>,
    templates: MessageTemplates,
  ) {
    this.#key = key;
    this.#templates = templates;
  }

  get address(): string {
    return this.#key.address;
  }

  /** Where the key was read from (never the key), for messages. */
  get source(): string | undefined {
    return (this.#key as { source?: string }).source;
  }

  sign(action: SignAction, signal: AbortSignal): Promise<SignResult> {
    try {
      signal.throwIfAborted();
      refuseOtherWallet(this.address, action);
      const message = messageFor(this.#templates, action);
      return Promise.resolve({ message, signature: this.#key.sign(new TextEncoder().encode(message)) });
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  toJSON(): { address: string; backend: string } {
    return { address: this.address, backend: this.backend };
  }
}

/** A signer asked for another wallet's action refuses it (every backend does). */
export function refuseOtherWallet(address: string, action: SignAction): void {
  if (action.wallet !== address) throw new SignerRefused('UNKNOWN_KEY', `this signer holds the key of ${address}, not of ${action.wallet}`);
}

/** A loaded key behind the port (tests, tools): the default templates unless given. */
export function inProcessSigner(key: Signer, templates: MessageTemplates = templatesOf(DEFAULT_ENDPOINTS)): WalletSigner {
  return new InProcessSigner(key, 'file', templates);
}
