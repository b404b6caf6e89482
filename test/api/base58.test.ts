// The base58 encoder key loading uses (src/api/base58.ts) writes exactly what bs58 writes.
import bs58 from 'bs58';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBase58 } from '../../src/api/base58.js';

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
