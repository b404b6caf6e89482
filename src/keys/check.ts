// What the daemon checks of every answer a signer gives, whichever backend (SPEC §7): the text is
// the one it rendered itself from the same templates, and the signature verifies against the
// wallet's address. A backend that signed other bytes, or with another key, is refused: its
// signature is never sent. node:crypto verifies (~50 µs), so tweetnacl stays out of the daemon.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import bs58 from 'bs58';
import { SignerRefused, type SignResult } from './port.js';

const publicKeys = new Map<string, KeyObject>();
const MAX_CACHED = 100_000;

/** The node:crypto public key of a base58 address (cached); undefined when it is not a 32-byte key. */
export function publicKeyOf(address: string): KeyObject | undefined {
  let key = publicKeys.get(address);
  if (key !== undefined) return key;
  let raw: Uint8Array;
  try {
    raw = bs58.decode(address);
  } catch {
    return undefined;
  }
  if (raw.length !== 32) return undefined;
  key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
  if (publicKeys.size >= MAX_CACHED) publicKeys.clear();
  publicKeys.set(address, key);
  return key;
}

/** Whether `signature` is `address`'s Ed25519 signature of `message`. */
export function signatureValid(address: string, message: Uint8Array, signature: Uint8Array): boolean {
  const key = publicKeyOf(address);
  if (key === undefined || signature.length !== 64) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/** Throws SignerRefused (BAD_SIGNATURE) unless the answer is the expected message, signed by `address`. */
export function checkSignResult(address: string, expectedMessage: string, result: SignResult): Uint8Array {
  if (result.message !== expectedMessage) {
    throw new SignerRefused('BAD_SIGNATURE', 'the signer signed another message than the one this action renders to; nothing was sent');
  }
  if (!(result.signature instanceof Uint8Array) || !signatureValid(address, new TextEncoder().encode(expectedMessage), result.signature)) {
    throw new SignerRefused('BAD_SIGNATURE', `the signer's signature does not verify against ${address}; nothing was sent`);
  }
  return result.signature;
}
