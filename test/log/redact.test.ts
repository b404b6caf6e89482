import fc from 'fast-check';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../../src/log/redact.js';

/** Every spelling of a secret the redactor registers: itself, JSON-escaped once and twice, URL-encoded. */
function forms(s: string): string[] {
  const json = (t: string) => JSON.stringify(t).slice(1, -1);
  const out = [s, json(s), json(json(s))];
  try {
    out.push(encodeURIComponent(s), new URLSearchParams([['', s]]).toString().slice(1));
  } catch {
    // a lone surrogate has no URL encoding
  }
  return out;
}

/** The obvious implementation the indexed scan must agree with: one longest-first alternation. */
function reference(secrets: string[], text: string): string {
  const trimmed = secrets.map((s) => s.trim()).filter((s) => s.length >= 8);
  const kept = [...new Set(trimmed.flatMap(forms))].sort((a, b) => b.length - a.length);
  if (kept.length === 0) return text;
  const pattern = new RegExp(kept.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return text.replace(pattern, REDACTED);
}

describe('Redactor', () => {
  it.each([
    ['a secret anywhere in a line', ['s3cr3t-value'], 'x=s3cr3t-value;', `x=${REDACTED};`],
    ['at the very start and end', ['abcdefgh'], 'abcdefgh mid abcdefgh', `${REDACTED} mid ${REDACTED}`],
    ['back to back', ['abcdefgh'], 'abcdefghabcdefgh', `${REDACTED}${REDACTED}`],
    ['the longer of two secrets sharing a prefix', ['abcdefgh', 'abcdefghijkl'], '[abcdefghijkl]', `[${REDACTED}]`],
    ['a secret inside a longer one', ['cdefghij', 'abcdefghijkl'], 'abcdefghijkl cdefghij', `${REDACTED} ${REDACTED}`],
    ['nothing shorter than 8 characters', ['short'], 'a short line', 'a short line'],
    ['regex metacharacters literally', ['a.b*c+d?(e)'], 'a.b*c+d?(e) aXbbcdd(e)', `${REDACTED} aXbbcdd(e)`],
    ['non-ASCII text around a secret', ['clé-secrète-42'], 'ünïcødé clé-secrète-42 ✓', `ünïcødé ${REDACTED} ✓`],
  ])('scrubs %s', (_name, secrets, text, expected) => {
    const r = new Redactor();
    for (const s of secrets) r.add(s);
    expect(r.redact(text)).toBe(expected);
    expect(r.redact(text)).toBe(reference(secrets, text));
  });

  it('leaves a line without secrets unchanged (and the same string)', () => {
    const r = new Redactor().add('0123456789abcdef');
    const line = '{"event":"poll.ok","wallet":"w1"}';
    expect(r.redact(line)).toBe(line);
  });

  it('registers key bytes in every printable encoding', () => {
    const bytes = Uint8Array.from({ length: 32 }, (_, i) => i * 7 + 1);
    const r = new Redactor().addBytes(bytes, (b) => `b58:${Buffer.from(b).toString('hex').toUpperCase()}`);
    const buf = Buffer.from(bytes);
    const forms = [buf.toString('hex'), buf.toString('base64'), buf.toString('base64url'), `b58:${buf.toString('hex').toUpperCase()}`, [...bytes].join(',')];
    for (const form of forms) expect(r.redact(`key=${form}!`)).toBe(`key=${REDACTED}!`);
    // The JSON array is not registered on its own: the number list inside it is, and is scrubbed.
    expect(r.redact(`key=${JSON.stringify([...bytes])}!`)).toBe(`key=[${REDACTED}]!`);
    // base64 ('+', '/', '=') and the comma list also have URL-encoded spellings, registered too
    expect(r.size).toBe(new Set(forms.flatMap((f) => [f, encodeURIComponent(f), new URLSearchParams([['', f]]).toString().slice(1)])).size);
    expect(r.redact(`key=${encodeURIComponent(buf.toString('base64'))}!`)).toBe(`key=${REDACTED}!`);
  });

  it('scrubs a secret in its JSON-escaped and URL-encoded spellings, as a log line or a URL carries it', () => {
    const secret = 'k3y"with\\quote & slash/+ é';
    const r = new Redactor().add(secret);
    const once = JSON.stringify(secret).slice(1, -1);
    const line = JSON.stringify({ msg: `Bearer ${secret}` });
    expect(line).toContain(once); // the escaped form is what a JSON log line holds
    expect(r.redact(line)).toBe(JSON.stringify({ msg: `Bearer ${REDACTED}` }));
    // a stored body (JSON) logged inside a JSON line: escaped twice
    const twice = JSON.stringify({ raw: JSON.stringify({ error: { message: secret } }) });
    expect(r.redact(twice)).not.toContain('k3y');
    expect(r.redact(`GET /x?key=${encodeURIComponent(secret)}&a=1`)).toBe(`GET /x?key=${REDACTED}&a=1`);
    expect(r.redact(`key=${new URLSearchParams([['', secret]]).toString().slice(1)}`)).toBe(`key=${REDACTED}`);
    expect(r.redact(`raw ${secret} end`)).toBe(`raw ${REDACTED} end`);
    // No copy of any form is kept either.
    const seen = inspect(r, { depth: Infinity, showHidden: true, maxArrayLength: Infinity, maxStringLength: Infinity });
    expect(seen).not.toContain('k3y');
  });

  it('counts distinct secrets, ignoring repeats and surrounding whitespace', () => {
    const r = new Redactor().add('0123456789abcdef').add('  0123456789abcdef\n').add('0123456789abcdeF').add('short').add(undefined);
    expect(r.size).toBe(2);
  });

  it('keeps no copy of a secret, only hashes of it', () => {
    const secret = 'sk_live_4f9a1c2e8b7d6a5f3e2d1c0b';
    const r = new Redactor().add(secret);
    expect(r.redact(`Bearer ${secret}`)).toBe(`Bearer ${REDACTED}`);
    const seen = inspect(r, { depth: Infinity, showHidden: true, maxArrayLength: Infinity, maxStringLength: Infinity });
    for (let i = 0; i + 8 <= secret.length; i++) expect(seen).not.toContain(secret.slice(i, i + 8));
  });

  it('keeps lookups exact when many secrets share a prefix and a length', () => {
    // One window (and one length) for every secret: the full-text hash tells them apart.
    const r = new Redactor();
    for (let i = 0; i < 20_000; i++) r.add(`prefix--${i.toString().padStart(6, '0')}`);
    expect(r.size).toBe(20_000);
    expect(r.redact('a prefix--012345 b prefix--0123456 c prefix--999999')).toBe(`a ${REDACTED} b ${REDACTED}6 c prefix--999999`);
  });

  it('agrees with a longest-first alternation regex on arbitrary secrets and text', () => {
    // A small alphabet makes overlaps, shared prefixes and hash-bucket neighbours common.
    // '"', '\\', '%', '~', ' ', '(', a control and a lone surrogate give secrets escaped spellings
    // (JSON's, form encoding's own), which pieces of text can then spell out; a secret of only
    // 'a'-'c', '2', '.', '-' and '_' has none (the redactor's shortcut).
    const str = (min: number, max: number) =>
      fc.string({
        unit: fc.constantFrom('a', 'b', 'c', '.', '-', '_', 'é', '\u{1F600}', '"', '\\', '%', '~', ' ', '(', '\n', '\ud800', '2'),
        minLength: min,
        maxLength: max,
      });
    fc.assert(
      fc.property(fc.array(str(6, 14), { maxLength: 8 }), fc.array(fc.oneof(str(0, 6), fc.nat(39)), { maxLength: 12 }), (secrets, parts) => {
        // Text built from pieces of the secrets and noise, so matches actually happen.
        const text = parts
          .map((p) => (typeof p === 'number' ? (forms(secrets[p % 8] ?? '')[Math.floor(p / 8) % 5] ?? '') : p))
          .join('');
        const r = new Redactor();
        for (const s of secrets) r.add(s);
        expect(r.redact(text)).toBe(reference(secrets, text));
      }),
      { numRuns: 2000 },
    );
  });

  it('finds every secret of a fleet whose secrets all begin differently', () => {
    // Distinct first characters: a window each, as with 10,000 keys' base58 and base64 forms.
    const secret = (i: number) => `${i.toString(36).padStart(8, '0')}-key`;
    const r = new Redactor();
    for (let i = 0; i < 100_000; i++) r.add(secret(i));
    for (let i = 0; i < 100_000; i += 7) expect(r.redact(`x ${secret(i)} y`)).toBe(`x ${REDACTED} y`);
    expect(r.redact(`x ${secret(100_000)} y`)).toBe(`x ${secret(100_000)} y`);
  });

  it('finds one secret among a fleet-sized set of them', () => {
    const r = new Redactor();
    for (let i = 0; i < 130_000; i++) r.add(`secret-${i.toString(36).padStart(8, '0')}`);
    const line = `{"event":"poll.ok","wallet":"w1","note":"secret-${(4242).toString(36).padStart(8, '0')}"}`;
    expect(r.redact(line)).toBe(`{"event":"poll.ok","wallet":"w1","note":"${REDACTED}"}`);
    expect(r.size).toBe(130_000);
  });
});
