// Everything the sandbox invents (demo keys, tx ids, vault addresses, trading volumes) is derived
// from hashes of fixed labels, so two sandboxes given the same clock and options agree byte for byte.
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import type nacl from 'tweetnacl';
import { lazyRequire } from '../lazy-require.js';

/**
 * tweetnacl, loaded at the first demo key: the runtime imports this file for every config (the
 * demo world is prepared when api.base_url is "sandbox"), and a daemon against the real API never
 * needs tweetnacl's module loading.
 */
const tweetnacl = lazyRequire<typeof nacl>('tweetnacl');

function sha256(label: string): Buffer {
  return createHash('sha256').update(label, 'utf8').digest();
}

/** The Ed25519 seed of demo wallet `index`: sha256("autoclaim-demo-" + index). Public knowledge: sandbox only. */
export function demoWalletSeed(index: number): Uint8Array {
  return new Uint8Array(sha256(`autoclaim-demo-${index}`));
}

export function demoWalletKeyPair(index: number): nacl.SignKeyPair {
  return tweetnacl().sign.keyPair.fromSeed(demoWalletSeed(index));
}

export function demoWalletAddress(index: number): string {
  return bs58.encode(demoWalletKeyPair(index).publicKey);
}

/** A 64-byte base58 string that looks like a Solana transaction signature. */
export function txId(op: string, seq: number, signature: string): string {
  return bs58.encode(createHash('sha512').update(`${op}|${seq}|${signature}`, 'utf8').digest());
}

/** A uniformly spread integer in [0, bound) from a label. */
export function hashBelow(label: string, bound: bigint): bigint {
  return sha256(label).readBigUInt64BE(0) % bound;
}

/** True when `address` decodes to the 32 bytes of an Ed25519 public key. */
export function isWalletAddress(address: string): boolean {
  return decodeAddress(address) !== undefined;
}

export function decodeAddress(address: string): Uint8Array | undefined {
  if (address.length < 32 || address.length > 44) return undefined;
  try {
    const bytes = bs58.decode(address);
    return bytes.length === 32 ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `x-request-id` of the n-th answer: UUID-shaped (the real service's format is not published),
 * and derived from the count so two sandboxes that saw the same requests hand out the same ids.
 */
export function requestId(n: number): string {
  const h = sha256(`request|${n}`).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
