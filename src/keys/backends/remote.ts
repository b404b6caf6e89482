// What every backend whose key lives outside the daemon shares: the public key is fetched once
// (connect, at start and on first use after a reload) and must derive the configured address;
// each action is rendered to its message here (message.ts), never handed in as bytes; the
// signature each backend returns is checked again by the executor (keys/check.ts).
import bs58 from 'bs58';
import { messageFor, type MessageTemplates } from '../message.js';
import { SIGNER_UNAVAILABLE, SignerRefused, type SignAction, type SignerBackend, type SignResult, type WalletSigner } from '../port.js';
import { refuseOtherWallet } from './in-process.js';

/** Codes of a connect that say the backend cannot be used now, not that its key is wrong. */
const NOT_NOW = new Set(['VAULT_DENIED', 'KMS_DENIED', 'KMS_KEY_STATE', 'PKCS11_NO_TOKEN', 'PKCS11_PIN', 'PKCS11_PIN_LOCKED', 'PKCS11_OPEN']);

export abstract class RemoteSignerBase implements WalletSigner {
  abstract readonly backend: SignerBackend;
  #connected: Promise<void> | undefined;

  constructor(
    readonly address: string,
    private readonly templates: MessageTemplates,
  ) {}

  /** The backend's raw 32-byte Ed25519 public key. */
  protected abstract fetchPublicKey(signal: AbortSignal): Promise<Uint8Array>;
  /** The backend's signature of `message` (already rendered from the action here). */
  protected abstract signMessage(message: Uint8Array, signal: AbortSignal): Promise<Uint8Array>;
  /** Where the key is, for messages (never a secret). */
  protected abstract describe(): string;

  /** Fetches the public key and checks it derives the configured address; a failure is kept only until the next try. */
  connect(signal: AbortSignal): Promise<void> {
    this.#connected ??= this.check(signal).catch((err: unknown) => {
      this.#connected = undefined;
      throw err;
    });
    return this.#connected;
  }

  /**
   * The backend lost what connect set up (a token's sessions, say): the next signature connects
   * again, and so checks the key against the address again before anything is signed with it.
   */
  protected forget(): void {
    this.#connected = undefined;
  }

  private async check(signal: AbortSignal): Promise<void> {
    const pub = await this.fetchPublicKey(signal);
    const derived = pub.length === 32 ? bs58.encode(pub) : `(a ${pub.length}-byte key, not Ed25519)`;
    if (derived !== this.address) {
      throw new SignerRefused('KEY_MISMATCH', `${this.describe()} is the key of address ${derived}, but the wallet is configured with address ${this.address}`);
    }
  }

  async sign(action: SignAction, signal: AbortSignal): Promise<SignResult> {
    refuseOtherWallet(this.address, action);
    const message = messageFor(this.templates, action);
    try {
      await this.connect(signal);
    } catch (err) {
      // Connected at a signature (a reload's signer, a token's sessions opened again): credentials
      // or a token that cannot be used now judge nothing — the step goes back to planned. A key
      // that is not there or not the address's is the backend's answer: refused.
      if (err instanceof SignerRefused && NOT_NOW.has(err.code)) throw new SignerRefused(SIGNER_UNAVAILABLE, err.message, { cause: err });
      throw err;
    }
    signal.throwIfAborted();
    return { message, signature: await this.signMessage(new TextEncoder().encode(message), signal) };
  }

  toJSON(): { address: string; backend: string } {
    return { address: this.address, backend: this.backend };
  }
}
