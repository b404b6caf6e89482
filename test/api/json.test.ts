import fc from 'fast-check';
import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { isLosslessNumber, parseJsonLossless, stringifyLossless } from '../../src/api/json.js';

describe('lossless JSON', () => {
  it('reads every text as lossless-json does: the same value, or an error where it refuses', () => {
    // JSON texts, pretty or compact, with escapes, duplicate keys and "__proto__" among the keys,
    // and the same texts with a character changed, dropped or doubled (mostly broken JSON).
    const key = fc.constantFrom('a', 'b', '__proto__', 'pending_sol', 'é', 'x\ny', '');
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(true, false, null, 0, -0, 1.5, 1e-9, 12345678.987654321, 'str', 'q"uote', 'back\\slash', 'ctl\u0001', '\ud800'),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).map((pairs) => pairs),
      ),
    })).value;
    const text = (v: unknown, pretty: boolean): string =>
      Array.isArray(v) && v.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string')
        ? `{${(v as Array<[string, unknown]>).map(([k, x]) => `${JSON.stringify(k)}:${pretty ? ' ' : ''}${text(x, pretty)}`).join(pretty ? ',\n ' : ',')}}`
        : Array.isArray(v)
          ? `[${v.map((x) => text(x, pretty)).join(pretty ? ', ' : ',')}]`
          : JSON.stringify(v);
    const edit = fc.tuple(fc.nat(), fc.constantFrom('drop', 'double', ' ', '\t', '\u0001', '"', ',', '}', ']', '0', '-', '.', 'e', '\\', 'n'));
    const outcome = (t: string): unknown => {
      try {
        return { value: parseJsonLossless(t) };
      } catch {
        return 'refused';
      }
    };
    const reference = (t: string): unknown => {
      try {
        return { value: parse(t) };
      } catch {
        return 'refused';
      }
    };
    fc.assert(
      fc.property(json, fc.boolean(), fc.option(edit), (v, pretty, change) => {
        let t = text(v, pretty);
        if (change !== null) {
          const [at, what] = change;
          const k = t.length === 0 ? 0 : at % t.length;
          t = what === 'drop' ? t.slice(0, k) + t.slice(k + 1) : what === 'double' ? t.slice(0, k + 1) + t.slice(k) : t.slice(0, k) + what + t.slice(k);
        }
        expect(outcome(t)).toEqual(reference(t));
      }),
      { numRuns: 20_000 },
    );
  });

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
