import { errors } from 'undici';
import { describe, expect, it } from 'vitest';
import { classifyError, classifyStatus, oneLine } from '../../src/api/classify.js';

const errno = (code: string, syscall?: string) => Object.assign(new Error(`${syscall ?? ''} ${code}`), { code, syscall });

describe('classifyError', () => {
  it('not_sent only for failures before the connection existed', () => {
    for (const e of [
      errno('ECONNREFUSED', 'connect'),
      errno('ENOTFOUND', 'getaddrinfo'),
      errno('EAI_AGAIN', 'getaddrinfo'),
      errno('ENETUNREACH', 'connect'),
      errno('EHOSTUNREACH', 'connect'),
      errno('ETIMEDOUT', 'connect'),
      new errors.ConnectTimeoutError(),
    ]) {
      expect(classifyError(e).disposition, e.message).toBe('not_sent');
    }
  });

  it('ambiguous for everything after the request may have been written', () => {
    for (const e of [
      new errors.HeadersTimeoutError(),
      new errors.BodyTimeoutError(),
      new errors.SocketError('other side closed'),
      errno('ECONNRESET', 'read'),
      errno('EPIPE', 'write'),
      errno('ETIMEDOUT', 'read'),
      // An ICMP unreachable on a connection already up, reported when the kernel gives it up.
      errno('EHOSTUNREACH', 'read'),
      errno('ENETUNREACH', 'write'),
      errno('ECONNREFUSED', 'read'),
      errno('EHOSTDOWN', 'read'),
      errno('ENETDOWN', 'writev'),
      new errors.RequestAbortedError(),
      new errors.ClientDestroyedError(),
    ]) {
      expect(classifyError(e).disposition, e.message).toBe('ambiguous');
    }
  });

  it('treats anything unknown as ambiguous', () => {
    expect(classifyError(new Error('something new'))).toMatchObject({ disposition: 'ambiguous', reason: 'something new' });
    expect(classifyError('a string').disposition).toBe('ambiguous');
    expect(classifyError(undefined).disposition).toBe('ambiguous');
  });

  it('looks through causes (fetch-style wrapping) and AggregateErrors (happy eyeballs)', () => {
    expect(classifyError(new TypeError('fetch failed', { cause: errno('ECONNREFUSED', 'connect') })).disposition).toBe('not_sent');
    const allRefused = Object.assign(new AggregateError([errno('ECONNREFUSED', 'connect'), errno('ECONNREFUSED', 'connect')]), {
      code: 'ECONNREFUSED',
    });
    expect(classifyError(allRefused).disposition).toBe('not_sent');
    const mixed = Object.assign(new AggregateError([errno('ECONNREFUSED', 'connect'), errno('ECONNRESET', 'read')]), {
      code: 'ECONNREFUSED',
    });
    expect(classifyError(mixed).disposition).toBe('ambiguous');
  });
});

describe('classifyStatus', () => {
  it('4xx and 429 refused, 5xx and the unexpected ambiguous', () => {
    expect(classifyStatus(429)).toMatchObject({ disposition: 'refused', code: 'RATE_LIMITED' });
    for (const s of [400, 401, 403, 404, 408, 409, 422]) expect(classifyStatus(s).disposition).toBe('refused');
    for (const s of [500, 502, 503, 504]) expect(classifyStatus(s).disposition).toBe('ambiguous');
    for (const s of [101, 301, 303, 307]) expect(classifyStatus(s)).toMatchObject({ disposition: 'ambiguous', code: 'UNEXPECTED_STATUS' });
  });
});

describe('oneLine', () => {
  it('collapses whitespace and truncates', () => {
    expect(oneLine('a\n  b\tc')).toBe('a b c');
    expect(oneLine('x'.repeat(300), 10)).toBe(`${'x'.repeat(10)}...`);
  });
});
