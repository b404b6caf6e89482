// Ed25519 verification with node:crypto (OpenSSL), for the daemon's own check of a remote
// backend's answer before it is sent (SPEC §7): a signature from another process or device,
// checked here by a second implementation, at ~0.05 ms where tweetnacl's pure-JS verify.ts takes
// ~5 ms (~100x, bench/signer-service.mjs) — on every signed step. verify.ts stays the independent
// check of this process's own signing (tests, the sandbox).
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import bs58 from 'bs58';

const ED25519_LENGTH = { publicKey: 32, signature: 64 };

/** The public key of a base58 address, for verifyWith; undefined when it is not a 32-byte key. */
export function publicKeyOf(addressBase58: string): KeyObject | undefined {
  let raw: Uint8Array;
  try {
    raw = bs58.decode(addressBase58);
  } catch {
    return undefined;
  }
  if (raw.length !== ED25519_LENGTH.publicKey) return undefined;
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
  } catch {
    return undefined;
  }
}

/** False for any malformed input rather than a throw. */
export function verifyWith(publicKey: KeyObject, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== ED25519_LENGTH.signature) return false;
  try {
    return verify(null, message, publicKey, signature);
  } catch {
    return false;
  }
}
