import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AmountError,
  formatSol,
  isCanonicalSol,
  MAX_LAMPORTS,
  parseCanonicalSol,
  parseServerSol,
  parseSol,
} from '../../src/amount.js';
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

describe('amounts as servers write them (parseServerSol)', () => {
  it('reads every exact amount as parseSol does, not rounded', () => {
    fc.assert(
      fc.property(lamports, (l) => {
        expect(parseServerSol(formatSol(l))).toEqual({ lamports: l, rounded: false });
      }),
      { numRuns: 1000 },
    );
  });

  it('drops digits below the lamport, toward zero, and says so', () => {
    fc.assert(
      fc.property(lamports.filter((l) => l < MAX_LAMPORTS), fc.stringMatching(/^[0-9]{0,12}[1-9]$/), (l, tail) => {
        const whole = l / 1_000_000_000n;
        const frac = (l % 1_000_000_000n).toString().padStart(9, '0');
        expect(parseServerSol(`${whole}.${frac}${tail}`)).toEqual({ lamports: l, rounded: true });
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with cutting the decimal text after 9 digits for any double a server prints without an exponent', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e9, noNaN: true }), (x) => {
        const text = String(x);
        fc.pre(!/e/.test(text));
        const [int = '0', frac = ''] = text.split('.');
        const expected = BigInt(int + frac.padEnd(9, '0').slice(0, 9));
        expect(parseServerSol(text).lamports).toBe(expected);
        expect(parseServerSol(text).rounded).toBe(/[1-9]/.test(frac.slice(9)));
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['0.30000000000000004', 300_000_000n, true],
    ['3.9399999999999995', 3_939_999_999n, true],
    ['1e-9', 1n, false],
    ['1.5E-9', 1n, true],
    ['2.5e3', 2_500_000_000_000n, false],
    ['1.2345678912e+2', 123_456_789_120n, false],
    ['1e-10', 0n, true],
    ['5e-324', 0n, true],
    ['-0', 0n, false],
    ['-0.0', 0n, false],
    ['-2.7755575615628914e-17', 0n, true],
    ['-0.0000000009', 0n, true],
    ['18446744073.7095516159', MAX_LAMPORTS, true],
  ])('%s → %s lamports (rounded: %s)', (text, lamportsOut, rounded) => {
    expect(parseServerSol(text)).toEqual({ lamports: lamportsOut, rounded });
  });

  it('still refuses negatives of a lamport or more, non-numbers, and anything above u64 lamports', () => {
    for (const bad of ['-0.000000001', '-1', '-1e-9', 'NaN', 'Infinity', '-Infinity', '', '-', '1,5', '0x10', '1e300', '18446744073.709551616', '2e10', '1 000', '--1']) {
      expect(() => parseServerSol(bad), bad).toThrow(AmountError);
    }
  });

  it('leaves the strict parsers strict: config and signed bodies never round', () => {
    expect(() => parseSol('0.30000000000000004')).toThrow(/finer than one lamport/);
    expect(() => parseSol('-0')).toThrow(AmountError);
    expect(() => parseCanonicalSol('1e-9')).toThrow(AmountError);
  });
});
