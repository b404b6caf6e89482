// The body's JSON, scrubbed a second time where decoding could spell a secret the text did not.
import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../src/api/response.js';
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
