// AWS KMS (SPEC §7): an ECC_NIST_EDWARDS25519 key; Sign with ED25519_SHA_512 over the RAW
// message; credentials from the SDK's default chain (no secret in the config). The SDK is loaded
// on first use.
import type { KmsKeyConfig } from '../../domain.js';
import { lazyRequire } from '../../lazy-require.js';
import type { MessageTemplates } from '../message.js';
import { SIGNER_UNAVAILABLE, SignerRefused } from '../port.js';
import { RemoteSignerBase } from './remote.js';

type KmsModule = typeof import('@aws-sdk/client-kms');
const kms = lazyRequire<KmsModule>('@aws-sdk/client-kms');

// SubjectPublicKeyInfo of an Ed25519 key (RFC 8410): this prefix, then the 32 bytes.
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Errors that say the client's credentials are refused: ran out, rotated, or taken away. */
const CREDENTIALS_REFUSED = new Set(['ExpiredTokenException', 'UnrecognizedClientException', 'InvalidSignatureException', 'IncompleteSignature', 'AccessDeniedException']);
/** Errors that say KMS is busy: over the account's request quota (HTTP 400, not a 5xx). */
const BUSY = new Set(['ThrottlingException', 'LimitExceededException']);

type Client = InstanceType<KmsModule['KMSClient']>;

/**
 * One SDK client per region and endpoint, shared by the wallets signing there: each client
 * resolves its credentials itself (an instance role: an IMDS round at the first signature and at
 * each refresh) and keeps its own pool of connections — one per wallet was 10,000 of each.
 */
const clients = new Map<string, { client: Client; users: number }>();

/** How long a client replaced (credentials refused) lives on for the requests still on it. */
const REPLACED_CLIENT_GRACE_MS = 60_000;

export class KmsSigner extends RemoteSignerBase {
  readonly backend = 'aws_kms' as const;
  /** Whether this signer counts among its location's client's users. */
  #using = false;

  constructor(
    private readonly cfg: KmsKeyConfig,
    address: string,
    templates: MessageTemplates,
  ) {
    super(address, templates);
  }

  get location(): string {
    return `aws_kms ${this.cfg.region}${this.cfg.endpoint !== undefined ? ` ${this.cfg.endpoint}` : ''}`;
  }

  protected describe(): string {
    return `AWS KMS key ${this.cfg.keyId} (${this.cfg.region})`;
  }

  private client(): Client {
    let entry = clients.get(this.location);
    if (entry === undefined) {
      entry = { client: this.newClient(), users: 0 };
      clients.set(this.location, entry);
    }
    if (!this.#using) {
      this.#using = true;
      entry.users++;
    }
    return entry.client;
  }

  /**
   * Credentials refused: the shared client is replaced by one that resolves its chain again (the
   * SDK keeps static credentials for a client's life). Only if `used` is still the current one: a
   * wallet that failed on a client another already replaced just takes the new one.
   */
  private renewClient(used: Client): void {
    const entry = clients.get(this.location);
    if (entry === undefined || entry.client !== used) return;
    entry.client = this.newClient();
    setTimeout(() => used.destroy(), REPLACED_CLIENT_GRACE_MS).unref();
  }

  private newClient(): Client {
    const { KMSClient } = kms();
    // The SDK's documented switch for the notice it writes to stderr once per process when a
    // client is made on Node < 22 (that SDK releases after January 2027 will need Node 22): it is
    // about a future upgrade of the SDK, which package-lock.json pins, not about this process —
    // and on the daemon's or the signer's stderr (journald) it reads as a fault. Set only here,
    // where the SDK is used, and only when the operator has not set it either way.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    return new KMSClient({ region: this.cfg.region, maxAttempts: 2, ...(this.cfg.endpoint !== undefined ? { endpoint: this.cfg.endpoint } : {}) });
  }

  protected async fetchPublicKey(signal: AbortSignal): Promise<Uint8Array> {
    const { GetPublicKeyCommand } = kms();
    const out = await this.call(() => this.client().send(new GetPublicKeyCommand({ KeyId: this.cfg.keyId }), { abortSignal: signal }), false);
    if (out.KeySpec !== 'ECC_NIST_EDWARDS25519') throw new SignerRefused('KMS_KEY_SPEC', `${this.describe()} is a ${String(out.KeySpec)} key, not ECC_NIST_EDWARDS25519`);
    if (out.KeyUsage !== undefined && out.KeyUsage !== 'SIGN_VERIFY') throw new SignerRefused('KMS_KEY_USAGE', `${this.describe()} is not a signing key`);
    const der = out.PublicKey === undefined ? undefined : Buffer.from(out.PublicKey);
    if (der?.length !== 44 || !der.subarray(0, 12).equals(SPKI_ED25519_PREFIX)) throw new SignerRefused('KMS_BAD_ANSWER', `${this.describe()}: its public key is not an Ed25519 SubjectPublicKeyInfo`);
    return new Uint8Array(der.subarray(12));
  }

  protected async signMessage(message: Uint8Array, signal: AbortSignal): Promise<Uint8Array> {
    const { SignCommand } = kms();
    const out = await this.call(() =>
      this.client().send(new SignCommand({ KeyId: this.cfg.keyId, Message: message, MessageType: 'RAW', SigningAlgorithm: 'ED25519_SHA_512' }), { abortSignal: signal }),
      true,
    );
    if (out.Signature === undefined) throw new SignerRefused('KMS_BAD_ANSWER', `${this.describe()}: no signature in the answer`);
    return new Uint8Array(out.Signature);
  }

  /** `fn` (which makes its client through client()); `atSignature` for a Sign, as opposed to a connect. */
  private async call<T>(fn: () => Promise<T>, atSignature: boolean): Promise<T> {
    const used = this.client();
    try {
      return await fn();
    } catch (err) {
      if (!CREDENTIALS_REFUSED.has((err as { name?: string }).name ?? '')) throw this.refusal(err, atSignature);
      // The SDK resolves its credential chain once per client and keeps static credentials (the
      // environment, ~/.aws/credentials) for the client's life: a client made anew reads them
      // again, and is asked once more.
      this.renewClient(used);
      try {
        return await fn();
      } catch (again) {
        throw this.refusal(again, atSignature);
      }
    }
  }

  private refusal(err: unknown, atSignature: boolean): SignerRefused {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number }; message?: string };
    const name = e.name ?? 'error';
    const status = e.$metadata?.httpStatusCode;
    if (status === undefined || status >= 500 || name === 'KMSInternalException' || name === 'DependencyTimeoutException' || BUSY.has(name)) {
      return new SignerRefused(SIGNER_UNAVAILABLE, `${this.describe()} cannot be reached (${name})`);
    }
    if (name === 'NotFoundException') return new SignerRefused('KMS_NO_KEY', `${this.describe()} does not exist`);
    const denied = CREDENTIALS_REFUSED.has(name);
    const disabled = name === 'DisabledException' || name === 'KMSInvalidStateException';
    // At a signature, credentials refused or a key disabled are no judgement of the action: the
    // step goes back to planned (a refusal would cost a deposit whose claim was sent its epoch).
    // At a connect (start, `check`, a reload) they keep their codes: a start refuses either way.
    if (atSignature && (denied || disabled)) return new SignerRefused(SIGNER_UNAVAILABLE, `${this.describe()}: ${name} (HTTP ${status}); the step waits until KMS signs again`);
    if (denied) return new SignerRefused('KMS_DENIED', `${this.describe()}: access denied (${name})`);
    if (disabled) return new SignerRefused('KMS_KEY_STATE', `${this.describe()} is disabled or pending deletion`);
    return new SignerRefused('KMS_REFUSED', `${this.describe()}: ${name} (HTTP ${status})`);
  }

  close(): Promise<void> {
    const entry = clients.get(this.location);
    if (this.#using && entry !== undefined && --entry.users <= 0) {
      entry.client.destroy();
      clients.delete(this.location);
    }
    this.#using = false;
    return Promise.resolve();
  }
}
