import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AmountError,
  formatSol,
  isCanonicalSol,
  MAX_LAMPORTS,
  parseCanonicalSol,
  parseSol,
} from '../../src/api/amount.js';
import { parseJsonLossless } from '../../src/api/json.js';
import { buildSignedBody } from '../../src/api/signed-request.js';

const lamports = fc.bigInt({ min: 0n, max: MAX_LAMPORTS });

describe('amounts as lamports', () => {
  it('parse ∘ format is the identity over every u64 lamport count', () => {
    fc.assert(
      fc.property(lamports, (l) => {
        expect(parseSol(formatSol(l))).toBe(l);
        expect(parseCanonicalSol(formatSol(l))).toBe(l);
      }),
      { numRuns: 2000 },
    );
  });

  it('formatSol writes the canonical form: no sign, no exponent, ≤ 9 decimals, no trailing zeros', () => {
    fc.assert(
      fc.property(lamports, (l) => {
        const text = formatSol(l);
        expect(isCanonicalSol(text)).toBe(true);
        expect(text).toMatch(/^(0|[1-9][0-9]*)(\.[0-9]{0,8}[1-9])?$/);
      }),
      { numRuns: 2000 },
    );
    expect(formatSol(1n)).toBe('0.000000001');
    expect(formatSol(1_500_000_000n)).toBe('1.5');
    expect(formatSol(12_000_000_000n)).toBe('12');
    expect(formatSol(MAX_LAMPORTS)).toBe('18446744073.709551615');
  });

  it('a redundant spelling parses to the same lamports as the canonical one', () => {
    fc.assert(
      fc.property(lamports, fc.nat({ max: 5 }), (l, zeros) => {
        const canonical = formatSol(l);
        const padded = canonical.includes('.') ? canonical + '0'.repeat(zeros) : `${canonical}.${'0'.repeat(zeros)}`;
        expect(parseSol(padded)).toBe(l);
      }),
    );
  });

  it('refuses negatives, exponent overflow, sub-lamport precision and NaN-likes', () => {
    for (const bad of ['-1', '1e300', '0.0000000001', 'NaN', 'Infinity', '', '1,5', '18446744073.709551616', '0x10']) {
      expect(() => parseSol(bad), bad).toThrow(AmountError);
    }
    for (const notCanonical of ['1.50', '01', '1e3', '.5', '5.']) {
      expect(() => parseCanonicalSol(notCanonical), notCanonical).toThrow(AmountError);
    }
  });

  it('the JSON body carries the amount as a number whose text is exactly the signed string', () => {
    fc.assert(
      fc.property(lamports.filter((l) => l > 0n), (l) => {
        const signed = formatSol(l);
        const body = buildSignedBody('deposit', { wallet: 'W', signature: 'S', symbol: 'SOL2X', amountText: signed });
        const m = /"amount":([^,]+),/.exec(body);
        expect(m?.[1]).toBe(signed);
        const parsed = parseJsonLossless(body) as { amount: { value: string } };
        expect(parsed.amount.value).toBe(signed);
        expect(parseCanonicalSol(parsed.amount.value)).toBe(l);
      }),
      { numRuns: 1000 },
    );
  });
});
