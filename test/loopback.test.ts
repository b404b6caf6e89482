import { describe, expect, it } from 'vitest';
import { isLoopback } from '../src/loopback.js';

// One answer for plain-http base_url/webhook checks and for the metrics listener's warning.
describe('isLoopback', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.255.254', true],
    ['[127.0.0.1]', false], // brackets hold IPv6 only
    ['::1', true],
    ['[::1]', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::ffff:127.0.0.1', true],
    ['[::ffff:7f00:1]', true],
    ['localhost', true],
    ['LocalHost', true],
    ['', false],
    ['128.0.0.1', false],
    ['10.0.0.1', false],
    ['::2', false],
    ['0.0.0.0', false],
    ['::', false],
    ['example.org', false],
    ['127.0.0.2', true],
    ['::ffff:10.0.0.1', false],
    ['127.attacker.example', false],
    ['127.0.0.1.nip.io', false],
    ['localhost.evil.com', false],
    ['evil-localhost', false],
    ['[localhost]', false],
    ['0x7f000001', false], // not normalised here: only a URL's host is, and base_url goes through URL
  ])('%s → %s', (host, expected) => {
    expect(isLoopback(host)).toBe(expected);
  });
});
