// Ed25519 signing with node:crypto (OpenSSL), which is far faster than tweetnacl's pure JS.
// tweetnacl stays as the independent verifier (verify.ts): two implementations agreeing
// byte-for-byte is the check that the PKCS#8 wrapping below is right.
import { createPrivateKey, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import bs58 from 'bs58';
import type { SignatureEncoding } from '../domain.js';

export interface Signer {
  /** base58 public key. */
  readonly address: string;
  sign(message: Uint8Array): Uint8Array;
}

// DER prefix of a PKCS#8 Ed25519 private key (RFC 8410): SEQ { INT 0, SEQ { OID 1.3.101.112 }, OCTET STRING { OCTET STRING (32) } }
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SEED_LENGTH = 32;
const PUBLIC_KEY_LENGTH = 32;

function privateKeyFromSeed(seed: Uint8Array): KeyObject {
  if (seed.length !== SEED_LENGTH) throw new RangeError(`an Ed25519 seed is ${SEED_LENGTH} bytes, got ${seed.length}`);
  // The JWK import goes straight to OpenSSL's raw-key constructor; the PKCS#8 one runs OpenSSL 3's
  // decoder lookup, many times slower: seconds of start-up for a large fleet. Node requires `x`
  // to be a string but derives the public key from `d`; the address check catches any surprise.
  try {
    const d = Buffer.from(seed.buffer, seed.byteOffset, seed.byteLength).toString('base64url'); // a view: no copy of the seed left behind
    return createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d, x: '' }, format: 'jwk' });
  } catch {
    // A Node that insists on a matching `x`: fall back to the PKCS#8 route.
  }
  const der = Buffer.concat([PKCS8_ED25519_PREFIX, seed]);
  try {
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } finally {
    der.fill(0);
  }
}

/** The raw 32-byte public key of a private KeyObject. */
function publicKeyBytes(privateKey: KeyObject): Uint8Array {
  // The JWK export, not the SPKI DER one, which goes through OpenSSL's encoder lookup again.
  const x = createPublicKey(privateKey).export({ format: 'jwk' }).x;
  const raw = x === undefined ? undefined : Buffer.from(x, 'base64url');
  if (raw?.length === PUBLIC_KEY_LENGTH) return new Uint8Array(raw);
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return new Uint8Array(spki.subarray(spki.length - PUBLIC_KEY_LENGTH));
}

export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  return publicKeyBytes(privateKeyFromSeed(seed));
}

/** Holds the key as an opaque KeyObject: printing or serializing a signer shows no key material. */
class Ed25519Signer implements Signer {
  readonly #key: KeyObject;

  constructor(
    key: KeyObject,
    readonly address: string,
  ) {
    this.#key = key;
  }

  sign(message: Uint8Array): Uint8Array {
    return new Uint8Array(sign(null, message, this.#key));
  }

  toJSON(): { address: string } {
    return { address: this.address };
  }
}

export function signerFromSeed(seed: Uint8Array): Signer {
  return deriveSigner(seed).signer;
}

/**
 * A signer and its raw public key, from one derivation (the costly part of loading a key): for a
 * caller that also checks the public key against one it was given.
 */
export function deriveSigner(seed: Uint8Array): { signer: Signer; publicKey: Uint8Array } {
  const key = privateKeyFromSeed(seed);
  const publicKey = publicKeyBytes(key);
  // The encoder key loading spells a key's given public half with: LoadedKey compares the two.
  return { signer: new Ed25519Signer(key, bs58.encode(publicKey)), publicKey };
}

/** A fresh keypair in solana-keygen layout (seed ‖ public key), for demo wallets and tests. */
export function generateKeypair(): { secretKey64: Uint8Array; address: string } {
  // An Ed25519 private key is 32 random bytes; it goes through the same import as a loaded key.
  // Not generateKeyPairSync: on Node 20 the benchmark hung in a JWK export of such a key — a GC
  // during the export finalized the finished generation job, whose destructor waited on the key
  // mutex the export held (seen in gdb: ExportJWK → GC → ~KeyGenJob → uv_mutex_lock).
  const seed = randomBytes(SEED_LENGTH);
  try {
    const pub = publicKeyBytes(privateKeyFromSeed(seed));
    const secretKey64 = new Uint8Array(64);
    secretKey64.set(seed, 0);
    secretKey64.set(pub, SEED_LENGTH);
    return { secretKey64, address: bs58.encode(pub) };
  } finally {
    seed.fill(0);
  }
}

export function encodeSignature(signature: Uint8Array, encoding: SignatureEncoding): string {
  switch (encoding) {
    case 'base58':
      return bs58.encode(signature);
    case 'base64':
      return Buffer.from(signature).toString('base64');
    case 'hex':
      return Buffer.from(signature).toString('hex');
  }
}

export function decodeSignature(text: string, encoding: SignatureEncoding): Uint8Array {
  switch (encoding) {
    case 'base58':
      return bs58.decode(text);
    case 'base64':
      return new Uint8Array(Buffer.from(text, 'base64'));
    case 'hex':
      return new Uint8Array(Buffer.from(text, 'hex'));
  }
}
