// The hint of a refused signed request comes from the server's words, never from the status alone
// (issue 27), and `clock.skew` only from a clock signal: a message that merely names the `-ts`
// header is a header problem.
import { describe, expect, it } from 'vitest';
import { clockSignal, refusalHint, serverRefusal } from '../../src/executor/refusal.js';

describe('refusalHint', () => {
  it.each([
    // issue 27's case: a 401 whose words are about the headers, not the key
    ['bad_signature', 'missing x-acme-ts / x-acme-wallet headers', 'headers'],
    ['missing_header', 'missing x-svc-ts header', 'headers'],
    ['invalid_timestamp', 'x-svc-ts must be integer Unix seconds', 'headers'],
    [undefined, 'x-acme-wallet differs from the body', 'headers'],
    ['stale_timestamp', 'x-svc-ts is more than 300s away from the server clock', 'clock'],
    [undefined, 'request expired', 'clock'],
    [undefined, 'timestamp outside the allowed window', 'clock'],
    ['invalid_signature', 'signature does not verify for this wallet and message', 'signature'],
    [undefined, 'could not verify request', 'signature'],
    ['unauthorized', 'invalid api key', 'key'],
    [undefined, 'missing Authorization header', 'key'],
    [undefined, 'token expired', 'key'],
    ['unauthorized', undefined, 'key'],
    ['forbidden', 'this key may not deposit', 'permission'],
    [undefined, 'insufficient permission for /actions/mint', 'permission'],
    [undefined, undefined, 'unknown'],
    ['', '', 'unknown'],
    ['E1234', 'nope', 'unknown'],
  ] as const)('%s / %s → %s', (code, message, hint) => {
    expect(refusalHint(code, message)).toBe(hint);
  });
});

describe('clockSignal', () => {
  it('a clock hint is one; a header hint is not, unless the Date header says so', () => {
    expect(clockSignal('clock', undefined, 30_000)).toBe(true);
    expect(clockSignal('headers', undefined, 30_000)).toBe(false);
    expect(clockSignal('headers', 5_000, 30_000)).toBe(false);
    expect(clockSignal('headers', -45_000, 30_000)).toBe(true);
    expect(clockSignal('unknown', Number.NaN, 30_000)).toBe(false);
  });
});

describe('serverRefusal', () => {
  it('names the fields as notices and status --json carry them, leaving out what was not said', () => {
    expect(serverRefusal({ status: 401, serverCode: 'bad_signature', serverMessage: 'missing x-acme-ts / x-acme-wallet headers', requestId: 'r-1' })).toEqual({
      code: 'bad_signature',
      server_message: 'missing x-acme-ts / x-acme-wallet headers',
      http_status: 401,
      request_id: 'r-1',
      hint: 'headers',
    });
    expect(serverRefusal({ status: 401 })).toEqual({ http_status: 401, hint: 'unknown' });
  });
});
