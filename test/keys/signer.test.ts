import bs58 from 'bs58';
import fc from 'fast-check';
import { inspect } from 'node:util';
import nacl from 'tweetnacl';
import { describe, expect, it } from 'vitest';
import { decodeSignature, deriveSigner, encodeSignature, generateKeypair, publicKeyFromSeed, signerFromSeed } from '../../src/keys/signer.js';
import { verifySignature } from '../../src/keys/verify.js';

describe('Ed25519 via node:crypto', () => {
  it('produces byte-identical signatures and addresses to tweetnacl over random keys and messages', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 512 }), (seed, message) => {
        const reference = nacl.sign.keyPair.fromSeed(seed);
        const signer = signerFromSeed(seed);
        expect(signer.address).toBe(bs58.encode(reference.publicKey));
        expect(Buffer.from(publicKeyFromSeed(seed))).toEqual(Buffer.from(reference.publicKey));
        const sig = signer.sign(message);
        expect(Buffer.from(sig)).toEqual(Buffer.from(nacl.sign.detached(message, reference.secretKey)));
        expect(verifySignature(message, sig, signer.address)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('deriveSigner returns the signer and its raw public key from one derivation, matching tweetnacl', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (seed) => {
        const reference = nacl.sign.keyPair.fromSeed(seed);
        const { signer, publicKey } = deriveSigner(seed);
        expect(Buffer.from(publicKey)).toEqual(Buffer.from(reference.publicKey));
        expect(signer.address).toBe(bs58.encode(reference.publicKey));
        const message = new Uint8Array([1, 2, 3]);
        expect(Buffer.from(signer.sign(message))).toEqual(Buffer.from(nacl.sign.detached(message, reference.secretKey)));
      }),
      { numRuns: 50 },
    );
  });

  it('verification fails for a different message, key or a mangled signature', () => {
    const { secretKey64, address } = generateKeypair();
    const signer = signerFromSeed(secretKey64.slice(0, 32));
    expect(signer.address).toBe(address);
    const msg = new TextEncoder().encode('W|SOL2X|1.5|1700000000');
    const sig = signer.sign(msg);
    expect(verifySignature(new TextEncoder().encode('W|SOL2X|1.6|1700000000'), sig, address)).toBe(false);
    expect(verifySignature(msg, sig, generateKeypair().address)).toBe(false);
    const bent = sig.slice();
    bent[0] = (bent[0] ?? 0) ^ 1;
    expect(verifySignature(msg, bent, address)).toBe(false);
    expect(verifySignature(msg, sig, 'not-base58-0OIl')).toBe(false);
    expect(verifySignature(msg, sig.slice(1), address)).toBe(false);
  });

  it('generateKeypair returns solana-keygen layout (seed ‖ public key)', () => {
    const { secretKey64, address } = generateKeypair();
    expect(secretKey64).toHaveLength(64);
    const reference = nacl.sign.keyPair.fromSeed(secretKey64.slice(0, 32));
    expect(Buffer.from(secretKey64)).toEqual(Buffer.from(reference.secretKey));
    expect(address).toBe(bs58.encode(reference.publicKey));
  });

  it('encodes signatures as base58, base64 or hex, and decodes them back', () => {
    const sig = signerFromSeed(new Uint8Array(32).fill(7)).sign(new Uint8Array([1, 2, 3]));
    expect(encodeSignature(sig, 'hex')).toMatch(/^[0-9a-f]{128}$/);
    expect(encodeSignature(sig, 'base64')).toBe(Buffer.from(sig).toString('base64'));
    expect(encodeSignature(sig, 'base58')).toBe(bs58.encode(sig));
    for (const enc of ['base58', 'base64', 'hex'] as const) {
      expect(Buffer.from(decodeSignature(encodeSignature(sig, enc), enc))).toEqual(Buffer.from(sig));
    }
  });

  it('a signer prints and serializes without key material', () => {
    const seed = new Uint8Array(32).fill(9);
    const signer = signerFromSeed(seed);
    const secretHex = Buffer.from(nacl.sign.keyPair.fromSeed(seed).secretKey).toString('hex');
    const seen = `${inspect(signer, { depth: 5, showHidden: true })} ${JSON.stringify(signer)}`;
    expect(seen).not.toContain(secretHex.slice(0, 16));
    expect(seen).not.toContain(bs58.encode(seed));
    expect(JSON.stringify(signer)).toBe(JSON.stringify({ address: signer.address }));
  });
});
