// The backend factory: a wallet's `key:` (SPEC §7) picks what signs for it. In-process sources are
// loaded here and now (a key that does not load or derive the address stops the start); a remote
// backend is set up here (its secret read and registered for redaction) and connected by
// connectSigners, which fetches its public key and compares it with the configured address.
import type { InProcessKeySource, KeySource } from '../../domain.js';
import { checkAddress, loadKey, type LoadKeyOptions } from '../keys.js';
import type { MessageTemplates } from '../message.js';
import type { SignerBackend, WalletSigner } from '../port.js';
import { InProcessSigner } from './in-process.js';
import { Pkcs11Signer } from './pkcs11.js';
import { VaultSigner } from './vault.js';
import { KmsSigner } from './aws-kms.js';
// ---- signer service: h28service's client (src/keys/backends/signer-service.ts) ----
import { SignerServiceClient } from './signer-service.js';

export interface BackendOptions extends LoadKeyOptions {
  templates: MessageTemplates;
}

/** A signer whose key lives elsewhere: `connect` fetches its public key and checks it derives the address. */
export interface RemoteSigner extends WalletSigner {
  connect(signal: AbortSignal): Promise<void>;
}

export function isRemote(signer: WalletSigner): signer is RemoteSigner {
  return typeof (signer as Partial<RemoteSigner>).connect === 'function';
}

export function isInProcess(key: KeySource): key is InProcessKeySource {
  return 'file' in key || 'env' in key || 'credential' in key;
}

/** Which backend a `key:` names. */
export function backendOf(key: KeySource): SignerBackend {
  if ('file' in key) return 'file';
  if ('env' in key) return 'env';
  if ('credential' in key) return 'credential';
  if ('pkcs11' in key) return 'pkcs11';
  if ('vault' in key) return 'vault';
  if ('aws_kms' in key) return 'aws_kms';
  return 'signer';
}

/**
 * The signer for one wallet. Throws KeyError for what can be judged now (a key file, a PIN or
 * token that cannot be read, an in-process key of another address); a remote key is judged by
 * connectSigners.
 */
export function openSigner(key: KeySource, address: string, walletName: string, opts: BackendOptions): WalletSigner {
  if (isInProcess(key)) {
    const loaded = loadKey(key, opts);
    checkAddress(loaded, address, walletName);
    return new InProcessSigner(loaded, backendOf(key) as 'file' | 'env' | 'credential', opts.templates);
  }
  if ('pkcs11' in key) return new Pkcs11Signer(key.pkcs11, address, opts);
  if ('vault' in key) return new VaultSigner(key.vault, address, opts);
  if ('aws_kms' in key) return new KmsSigner(key.aws_kms, address, opts.templates);
  return new SignerServiceClient(key.signer, address, opts.templates);
}

/** A wallet whose remote signer did not connect, or whose key is not the configured address's. */
export interface ConnectProblem {
  address: string;
  backend: SignerBackend;
  message: string;
}

/** Connects every remote signer (at start, `check`, `doctor`); their problems, none when all answered and match. */
export async function connectSigners(signers: Iterable<WalletSigner>, timeoutMs = 15_000): Promise<ConnectProblem[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const remote = [...signers].filter(isRemote);
  const results = await Promise.allSettled(remote.map((s) => s.connect(signal)));
  const problems: ConnectProblem[] = [];
  results.forEach((r, i) => {
    const s = remote[i];
    if (r.status === 'rejected' && s !== undefined) {
      problems.push({ address: s.address, backend: s.backend, message: r.reason instanceof Error ? r.reason.message : String(r.reason) });
    }
  });
  return problems;
}

/** Closes every signer that holds something open (sessions, sockets). */
export async function closeSigners(signers: Iterable<WalletSigner>): Promise<void> {
  for (const s of signers) await s.close?.().catch(() => undefined);
}

/**
 * A reload's signers replace the running ones in place. A remote backend of the new config
 * connects now, in the background; until its public key is fetched and matches, it refuses to sign
 * (remote.ts connects before its first signature). The old ones may be signing for a step right
 * now: they are closed once that is surely over.
 */
export function swapSigners(
  signers: Map<string, WalletSigner>,
  next: ReadonlyMap<string, WalletSigner>,
  logger: { error(fields: { event: 'config.invalid'; issues: string[] }, msg: string): void },
): void {
  const old = [...signers.values()];
  signers.clear();
  for (const [address, signer] of next) signers.set(address, signer);
  void connectSigners(next.values()).then((problems) => {
    for (const p of problems) {
      logger.error({ event: 'config.invalid', issues: [`wallet ${p.address}: the ${p.backend} signer: ${p.message}`] }, `wallet ${p.address}: its ${p.backend} signer does not answer or is not its key; nothing is signed with it until fixed (a key of another address: its steps refused; a backend that cannot sign now: they wait)`);
    }
  });
  const kept = new Set(next.values());
  setTimeout(() => void closeSigners(old.filter((s) => !kept.has(s))), 60_000).unref();
}
