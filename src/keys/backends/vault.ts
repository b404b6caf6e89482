// HashiCorp Vault transit (SPEC §7): an `ed25519` key that never leaves Vault. The public key
// from GET /v1/<mount>/keys/<key>; signatures from POST /v1/<mount>/sign/<key>, answered as
// `vault:v1:<base64>`. The token comes only from env, a mode-0600 file or a systemd credential,
// and is registered with the redactor when read; no message here carries it or Vault's answer text.
import bs58 from 'bs58';
import type { VaultKeyConfig } from '../../domain.js';
import { readBackendSecret } from '../keys.js';
import { SIGNER_UNAVAILABLE, SignerRefused } from '../port.js';
import type { BackendOptions } from './index.js';
import { RemoteSignerBase } from './remote.js';

const MAX_ANSWER = 64 * 1024;

export class VaultSigner extends RemoteSignerBase {
  readonly backend = 'vault' as const;
  #token: string;
  /** Reads the token from its source again: token_file is where Vault Agent writes a renewed one. */
  readonly #readToken: () => string;
  /** The key version whose public key is the address's: signed with by key_version, whatever the latest is. */
  #version: number | undefined;

  constructor(
    private readonly cfg: VaultKeyConfig,
    address: string,
    opts: BackendOptions,
  ) {
    super(address, opts.templates);
    const source = cfg.tokenEnv !== undefined ? { env: cfg.tokenEnv } : cfg.tokenFile !== undefined ? { file: cfg.tokenFile } : { credential: cfg.tokenCredential ?? '' };
    this.#readToken = () => readBackendSecret(source, 'the Vault token', opts);
    this.#token = this.#readToken();
  }

  get location(): string {
    return `vault ${this.cfg.address}`;
  }

  protected describe(): string {
    return `Vault transit key ${this.cfg.mount}/${this.cfg.key} at ${this.cfg.address}`;
  }

  protected async fetchPublicKey(signal: AbortSignal): Promise<Uint8Array> {
    const answer = await this.call('GET', `keys/${encodeURIComponent(this.cfg.key)}`, undefined, signal);
    const data = (answer as { data?: { type?: unknown; latest_version?: unknown; keys?: Record<string, { public_key?: unknown }> } }).data;
    if (data?.type !== 'ed25519') throw new SignerRefused('VAULT_KEY_TYPE', `${this.describe()} is not an ed25519 key (type ${String(data?.type)})`);
    const latest = typeof data.latest_version === 'number' ? data.latest_version : undefined;
    const pub = latest === undefined ? undefined : data.keys?.[String(latest)]?.public_key;
    if (latest === undefined || typeof pub !== 'string') throw new SignerRefused('VAULT_BAD_ANSWER', `${this.describe()}: no public key in Vault's answer`);
    // A key rotated (by hand, or by its auto_rotate_period months into a run) has another key as
    // its latest version; the wallet is the version whose public key derives its address, which
    // Vault signs with when asked by key_version (unless min_encryption_version is raised past it).
    for (const [version, entry] of Object.entries(data.keys ?? {})) {
      const raw = typeof entry.public_key === 'string' ? Buffer.from(entry.public_key, 'base64') : undefined;
      if (raw?.length === 32 && bs58.encode(raw) === this.address && /^[1-9][0-9]*$/.test(version)) {
        this.#version = Number(version);
        return new Uint8Array(raw);
      }
    }
    // None is: the latest's, which the address check refuses naming the address it derives.
    this.#version = latest;
    return new Uint8Array(Buffer.from(pub, 'base64'));
  }

  protected async signMessage(message: Uint8Array, signal: AbortSignal): Promise<Uint8Array> {
    const body: Record<string, unknown> = { input: Buffer.from(message).toString('base64') };
    if (this.#version !== undefined) body['key_version'] = this.#version;
    const answer = await this.call('POST', `sign/${encodeURIComponent(this.cfg.key)}`, body, signal);
    const sig = (answer as { data?: { signature?: unknown } }).data?.signature;
    const m = typeof sig === 'string' ? /^vault:v\d+:([A-Za-z0-9+/=]+)$/.exec(sig) : null;
    if (m?.[1] === undefined) throw new SignerRefused('VAULT_BAD_ANSWER', `${this.describe()}: the answer carries no vault:v<n>:<base64> signature`);
    return new Uint8Array(Buffer.from(m[1], 'base64'));
  }

  private async call(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
    const token = this.#token;
    try {
      return await this.callWith(token, method, path, body, signal);
    } catch (first) {
      if (!(first instanceof SignerRefused) || first.code !== 'VAULT_DENIED') throw first;
      let err = first;
      // The token ran out or was revoked; Vault Agent (or the operator) may have put a new one
      // where it is read from. Asked once more with that one, if it is another.
      const fresh = this.freshToken(token);
      if (fresh !== undefined) {
        try {
          return await this.callWith(fresh, method, path, body, signal);
        } catch (again) {
          if (!(again instanceof SignerRefused) || again.code !== 'VAULT_DENIED') throw again;
          err = again;
        }
      }
      // At a signature, a token refused is no judgement of the action: SIGNER_UNAVAILABLE puts the
      // step back to planned (a refusal would cost a deposit whose claim was sent its epoch). At a
      // connect (start, `check`, a reload) it stays VAULT_DENIED: a start refuses either way.
      if (method === 'POST') throw new SignerRefused(SIGNER_UNAVAILABLE, `${err.message}; the step waits until Vault takes the token`, { cause: err });
      throw err;
    }
  }

  /** The token at its source now, if it differs from `used` (and reads); the one used from now on. */
  private freshToken(used: string): string | undefined {
    let fresh: string;
    try {
      fresh = this.#readToken();
    } catch {
      return undefined;
    }
    if (fresh === used) return undefined;
    this.#token = fresh;
    return fresh;
  }

  private async callWith(token: string, method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
    const headers: Record<string, string> = { 'x-vault-token': token, accept: 'application/json' };
    if (this.cfg.namespace !== undefined) headers['x-vault-namespace'] = this.cfg.namespace;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(`${this.cfg.address}/v1/${this.cfg.mount}/${path}`, { method, headers, signal, redirect: 'error', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new SignerRefused(SIGNER_UNAVAILABLE, `${this.describe()} cannot be reached (${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message})`);
    }
    const text = await res.text();
    if (res.status >= 500) throw new SignerRefused(SIGNER_UNAVAILABLE, `${this.describe()} answered HTTP ${res.status}`);
    if (res.status === 401 || res.status === 403) throw new SignerRefused('VAULT_DENIED', `${this.describe()} refused the token (HTTP ${res.status}); check its policy allows ${method === 'GET' ? 'read on keys' : 'update on sign'}`);
    if (res.status === 404) throw new SignerRefused('VAULT_NO_KEY', `${this.describe()} does not exist (HTTP 404)`);
    if (res.status < 200 || res.status > 299) throw new SignerRefused('VAULT_REFUSED', `${this.describe()} answered HTTP ${res.status}`);
    if (text.length > MAX_ANSWER) throw new SignerRefused('VAULT_BAD_ANSWER', `${this.describe()}: answer too large`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new SignerRefused('VAULT_BAD_ANSWER', `${this.describe()}: the answer is not JSON`);
    }
  }
}
