import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLosslessNumber, parseJsonLossless, stringifyLossless } from '../../src/api/json.js';

describe('lossless JSON', () => {
  it('keeps every digit that JSON.parse would lose', () => {
    const text = '{"pending_sol":12345678.987654321,"big":18446744073709551615,"tiny":1e-9}';
    const v = parseJsonLossless(text) as Record<string, unknown>;
    expect(isLosslessNumber(v['pending_sol'])).toBe(true);
    expect(String(v['pending_sol'])).toBe('12345678.987654321');
    expect(String(v['big'])).toBe('18446744073709551615');
    expect(String(JSON.parse(text).pending_sol)).not.toBe('12345678.987654321');
  });

  it('re-serializes numbers byte-for-byte as received, unknown fields included', () => {
    const text = '{"a":1.50,"b":[0.000000001,1E+3,-0],"c":{"x":"y","n":18446744073709551615},"d":null,"e":true}';
    expect(stringifyLossless(parseJsonLossless(text))).toBe(text);
  });

  it('round-trips arbitrary JSON text (compact form)', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        const compact = stringifyLossless(parseJsonLossless(text));
        expect(stringifyLossless(parseJsonLossless(compact))).toBe(compact);
        expect(JSON.parse(compact)).toEqual(JSON.parse(text));
      }),
    );
  });

  it('writes bigints as integers', () => {
    expect(stringifyLossless({ lamports: 18446744073709551615n })).toBe('{"lamports":18446744073709551615}');
  });

  it('refuses malformed JSON and conflicting duplicate keys', () => {
    expect(() => parseJsonLossless('{"a":')).toThrow(SyntaxError);
    expect(() => parseJsonLossless('{"a":1,"a":2}')).toThrow(/Duplicate key/);
  });

  it('keeps "__proto__" as data, never as a prototype', () => {
    const v = parseJsonLossless('{"__proto__":{"polluted":1}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect((v as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(v)).toEqual(['__proto__']);
  });
});
