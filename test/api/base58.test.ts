// The base58 encoder key loading uses (src/api/base58.ts) writes exactly what bs58 writes, and its
// decoder (for a fleet's addresses) reads exactly what bs58 reads.
import bs58 from 'bs58';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase58, encodeBase58 } from '../../src/api/base58.js';

describe('encodeBase58', () => {
  it('writes what bs58 writes for any bytes, leading zeros included', () => {
    const bytes = fc.tuple(fc.nat(6), fc.uint8Array({ maxLength: 96 })).map(([zeros, rest]) => Uint8Array.from([...new Array<number>(zeros).fill(0), ...rest]));
    fc.assert(
      fc.property(bytes, (b) => {
        expect(encodeBase58(b)).toBe(bs58.encode(b));
      }),
      { numRuns: 20_000 },
    );
  });

  it('writes keys and seeds as bs58 does, and the edge cases', () => {
    for (const b of [new Uint8Array(0), new Uint8Array(1), new Uint8Array(32), new Uint8Array(64).fill(255), Uint8Array.from([0, 0, 1]), Uint8Array.from([57]), Uint8Array.from([58])]) {
      expect(encodeBase58(b)).toBe(bs58.encode(b));
    }
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 64, maxLength: 64 }), (seed, key) => {
        expect(encodeBase58(seed)).toBe(bs58.encode(seed));
        expect(encodeBase58(key)).toBe(bs58.encode(key));
      }),
      { numRuns: 5_000 },
    );
  });
});

/** bs58's bytes, or undefined where it throws. */
function bs58Decode(text: string): Uint8Array | undefined {
  try {
    return bs58.decode(text);
  } catch {
    return undefined;
  }
}

describe('decodeBase58', () => {
  const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

  it('reads what bs58 reads from any text of the alphabet, leading ones included', () => {
    const text = fc.tuple(fc.nat(5), fc.array(fc.constantFrom(...ALPHABET), { maxLength: 90 })).map(([ones, rest]) => '1'.repeat(ones) + rest.join(''));
    fc.assert(
      fc.property(text, (t) => {
        expect(decodeBase58(t)).toEqual(bs58Decode(t));
      }),
      { numRuns: 20_000 },
    );
  });

  it('reads back what bs58 wrote, addresses and keys among it', () => {
    const bytes = fc.tuple(fc.nat(4), fc.uint8Array({ maxLength: 80 })).map(([zeros, rest]) => Uint8Array.from([...new Array<number>(zeros).fill(0), ...rest]));
    fc.assert(
      fc.property(fc.oneof(bytes, fc.uint8Array({ minLength: 32, maxLength: 32 })), (b) => {
        expect(decodeBase58(bs58.encode(b))).toEqual(b);
      }),
      { numRuns: 10_000 },
    );
  });

  it('refuses what bs58 refuses: a character outside the alphabet', () => {
    for (const t of ['0', 'O', 'I', 'l', ' 2', '2 ', 'é', '2\u0000', 'abc+', '\u{1F600}']) {
      expect(bs58Decode(t), t).toBeUndefined();
      expect(decodeBase58(t), t).toBeUndefined();
    }
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (t) => {
        expect(decodeBase58(t)).toEqual(bs58Decode(t));
      }),
      { numRuns: 5_000 },
    );
    expect(decodeBase58('')).toEqual(new Uint8Array(0));
  });
});
