// Redactor.exportHashed / addHashed (issue 14): the deferred key check registers keys on a worker
// thread's Redactor and hands the main thread hashes, not text. What one Redactor learned that way
// must scrub exactly what the Redactor that hashed it scrubs.
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/log/redact.js';

describe('Redactor hashes handed to another', () => {
  it('scrubs every registered form, escaped ones included, and nothing else', () => {
    const source = new Redactor().add('plainSecret-7Qk2ZxW9pLmN4vR8').add('q"uo\\ted-Key-7Qk2ZxW9pLmN4vR8').addBytes(new Uint8Array(32).fill(7), (b) => Buffer.from(b).toString('hex'));
    const taught = new Redactor().add('already-known-secret-value');
    const before = taught.size;
    taught.addHashed(source.exportHashed());
    expect(taught.size).toBe(before + source.size);
    const texts = [
      'a plainSecret-7Qk2ZxW9pLmN4vR8 b',
      JSON.stringify({ k: 'q"uo\\ted-Key-7Qk2ZxW9pLmN4vR8' }),
      `hex ${'07'.repeat(32)} list ${new Array(32).fill(7).join(',')}`,
      'nothing secret in this line at all',
    ];
    for (const t of texts) expect(taught.redact(t)).toBe(source.redact(t));
    expect(taught.redact(texts[0]!)).toBe('a [REDACTED] b');
  });

  it('adds nothing twice and takes an empty export', () => {
    const source = new Redactor().add('plainSecret-7Qk2ZxW9pLmN4vR8');
    const taught = new Redactor().addHashed(source.exportHashed()).addHashed(source.exportHashed()).addHashed(new Redactor().exportHashed());
    expect(taught.size).toBe(source.size);
  });
});
