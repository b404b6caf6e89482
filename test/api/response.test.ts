// The body's JSON, scrubbed a second time where decoding could spell a secret the text did not.
import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../src/api/response.js';
import { keptText } from '../../src/api/server-text.js';
import { Redactor } from '../../src/log/redact.js';

const KEY = 'plainKEY-7Qk2ZxW9pLmN4vR8sT1u';
const ctx = { method: 'GET', url: 'http://127.0.0.1/x', status: 200, rawBody: '' };
const redactor = new Redactor().add(KEY);
const scrub = (t: string) => redactor.redact(t);
const escaped = [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

describe('parseJsonBody', () => {
  it('scrubs a secret spelled with escapes even when the text held none', () => {
    const text = `{"note":"${escaped}","${escaped}":1}`;
    expect(scrub(text)).toBe(text);
    expect(JSON.stringify(parseJsonBody(text, ctx, scrub))).toBe('{"note":"[REDACTED]","[REDACTED]":{"value":"1","isLosslessNumber":true}}');
  });

  it('scrubs every decoded string, always', () => {
    expect(parseJsonBody(`{"note":"${KEY}"}`, ctx, scrub)).toEqual({ note: '[REDACTED]' });
  });
});

describe('keptText: a body as the state file keeps it', () => {
  it.each([
    ['no escape: kept as it came, whitespace and all', '{ "status": "ok" }', '{ "status": "ok" }'],
    ['a secret in \\u escapes: written out, then scrubbed', `{"note":"${escaped}"}`, '{"note":"[REDACTED]"}'],
    ['a secret in a body the strict parser refuses', `{"a":"${escaped}","b":1,"b":2}`, '{"a":"[REDACTED]","b":1,"b":2}'],
    ['\\/ is /; the escapes JSON.stringify writes stay', '{"a":"x\\/y \\" \\\\ \\n \\t"}', '{"a":"x/y \\" \\\\ \\n \\t"}'],
    ['\\u0022, \\u005c and a control character become the escapes JSON.stringify writes', '{"a":"\\u0022\\u005c\\u0001\\u00e9"}', '{"a":"\\"\\\\\\u0001é"}'],
    // An escaped backslash before "u0041" is a backslash and text: no new escape is made of it.
    ['\\u005cu0041 stays a backslash and "u0041"', '{"a":"\\u005cu0041"}', '{"a":"\\\\u0041"}'],
  ])('%s', (_name, body, kept) => {
    expect(keptText(scrub(body), scrub)).toBe(kept);
  });

  it('a JSON body reads the same after, to any JSON reader', () => {
    const body = '{"a":"\\u0048\\u0069 \\ud83d\\ude00 \\u2028","b":[1.50,"\\u005c\\u0022"]}';
    expect(JSON.parse(keptText(body, scrub))).toEqual(JSON.parse(body));
  });
});
