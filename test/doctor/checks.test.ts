// doctor's checks, one table each: what was seen → what doctor says, at which level.
import { describe, expect, it } from 'vitest';
import {
  apiKeyFinding,
  clockSkewFinding,
  dnsFailure,
  healthFinding,
  rateLimitFinding,
  rateLimitHeaders,
  reachFailure,
  requestIdFinding,
  requestIdOf,
  summaryFindings,
  tiersFinding,
  walletKeyProblem,
} from '../../src/cli/commands/doctor/checks.js';
import { ApiError, KeyError } from '../../src/errors.js';

const ADDR = 'FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf';
const BASE = 'https://api.example.com/v1';
const answer = (rawText: string, status = 200) => ({ url: `${BASE}/rewards/wallet/${ADDR}`, status, rawText });
const summary = (extra: string) => `{"address":"${ADDR}","epoch":"2025-10-31","pending_sol":3.94${extra}}`;

describe('clockSkewFinding', () => {
  it.each([
    [undefined, 'note', /no Date header/],
    [0, 'ok', /agrees with the server's Date/],
    [1_000, 'ok', /agrees/],
    [-5_000, 'note', /5s ahead of the server's/],
    [25_000, 'note', /25s behind the server's/],
    [600_000, 'problem', /10m behind the server's .* refused as stale: sync the clock/],
    [-600_000, 'problem', /10m ahead of the server's/],
  ] as const)('skew %s ms → %s', (skew, level, text) => {
    const f = clockSkewFinding(skew, 30_000);
    expect(f.level).toBe(level);
    expect(f.text).toMatch(text);
  });

  it('takes its threshold from alerts.clock_skew', () => {
    expect(clockSkewFinding(45_000, 60_000).level).toBe('note');
    expect(clockSkewFinding(45_000, 30_000).level).toBe('problem');
  });
});

describe('rate-limit headers and x-request-id', () => {
  it('picks the usual rate-limit names and Retry-After, and nothing else', () => {
    const headers = {
      'x-ratelimit-remaining': '499',
      'x-ratelimit-limit': '500',
      ratelimit: 'limit=500, remaining=499, reset=60',
      'ratelimit-policy': '500;w=60',
      'retry-after': '3',
      'x-request-id': 'abc',
      'content-type': 'application/json',
      'x-ratelimited-user': 'nope',
    };
    expect(rateLimitHeaders(headers)).toEqual({
      ratelimit: 'limit=500, remaining=499, reset=60',
      'ratelimit-policy': '500;w=60',
      'retry-after': '3',
      'x-ratelimit-limit': '500',
      'x-ratelimit-remaining': '499',
    });
    expect(rateLimitHeaders({ date: 'x' })).toEqual({});
  });

  it('says what it saw next to what api.rate_limit allows', () => {
    const limit = { perMinute: 500, burst: 100 };
    expect(rateLimitFinding({}, limit)).toMatchObject({ level: 'ok', text: expect.stringMatching(/no rate-limit headers.*500\/min, burst 100/) });
    expect(rateLimitFinding({ 'x-ratelimit-limit': '1000' }, limit)).toMatchObject({
      level: 'note',
      text: expect.stringContaining('x-ratelimit-limit: 1000; api.rate_limit allows 500/min'),
    });
  });

  it('keeps a request id to one printable bounded line', () => {
    expect(requestIdOf({ 'x-request-id': 'req-1' })).toBe('req-1');
    expect(requestIdOf({ 'x-request-id': `a\u0007b${'x'.repeat(300)}` })).toMatch(/^a\?bx+\.\.\.$/);
    expect(requestIdOf({})).toBeUndefined();
    expect(requestIdFinding([], 2)?.level).toBe('note');
    expect(requestIdFinding([{ request: 'GET /health', id: 'r1' }], 2)?.text).toMatch(/on 1 of 2 answer\(s\), e\.g\. r1 \(GET \/health\)/);
    expect(requestIdFinding([], 0)).toBeUndefined();
  });
});

describe('reaching the service', () => {
  const transport = (code: string, reason: string) =>
    new ApiError('UNREACHABLE', `GET ${BASE}/health : ${reason}`, {
      method: 'GET',
      url: `${BASE}/health`,
      disposition: 'not_sent',
      cause: Object.assign(new Error(reason), { code }),
    });

  it('names a refused connection and what to check', () => {
    const f = reachFailure(BASE, transport('ECONNREFUSED', 'connection refused'));
    expect(f).toEqual({
      area: 'reach',
      level: 'problem',
      text: `cannot reach ${BASE}: connection refused; check api.base_url (scheme, host, port) and that the service is up`,
    });
  });

  it('names a failed TLS handshake by its code', () => {
    const f = reachFailure(BASE, transport('CERT_HAS_EXPIRED', 'certificate has expired'));
    expect(f.text).toMatch(/^cannot reach https:\/\/api\.example\.com\/v1: the TLS handshake failed \(CERT_HAS_EXPIRED\)/);
    expect(reachFailure(BASE, transport('ERR_TLS_CERT_ALTNAME_INVALID', 'x')).text).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('names a host that does not resolve', () => {
    const f = dnsFailure(BASE, 'api.example.com', Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    expect(f.level).toBe('problem');
    expect(f.text).toMatch(/cannot reach .*: the host name api\.example\.com does not resolve \(DNS ENOTFOUND\); check the host in api\.base_url/);
  });

  it.each([
    [200, '{"status":"ok","network":"solana-mainnet","ts":1}', true, 'ok', /HTTP 200 in 12 ms over TLS \(status ok, network solana-mainnet\)/],
    [204, '', false, 'ok', /HTTP 204 in 12 ms$/],
    [404, 'not found', true, 'problem', /must end in the version prefix/],
    [503, '', true, 'problem', /HTTP 503 .* not healthy/],
  ] as const)('GET /health %s → %s', (status, body, https, level, text) => {
    const f = healthFinding(status, body, 12.4, https);
    expect(f.level).toBe(level);
    expect(f.text).toMatch(text);
  });
});

describe('summaryFindings: what a summary says, and how oddly', () => {
  it('reads a plain summary without notes', () => {
    const { wallet, findings } = summaryFindings('a', ADDR, answer(summary(',"rank":3,"tier":"Gold","lifetime_sol":10')));
    expect(wallet).toMatchObject({ epoch: '2025-10-31', pendingSol: '3.94', rank: 3, tier: 'Gold', roundedFields: [], unknownFields: [] });
    expect(findings).toEqual([{ area: 'wallets', level: 'ok', text: 'wallet a: epoch 2025-10-31, pending 3.94 SOL, rank 3, tier Gold' }]);
  });

  it('notes rank 0 as unranked', () => {
    const { wallet, findings } = summaryFindings('a', ADDR, answer(summary(',"rank":0')));
    expect(wallet.rank).toBeNull();
    expect(findings.map((f) => f.text)).toContain('wallet a: rank 0, read as unranked');
    expect(findings.every((f) => f.level !== 'problem')).toBe(true);
  });

  it('notes float artefacts with the text as written and the amount as read', () => {
    const raw = `{"address":"${ADDR}","epoch":"2025-10-31","pending_sol":0.30000000000000004,"lifetime_sol":"1.0000000009"}`;
    const { wallet, findings } = summaryFindings('a', ADDR, answer(raw));
    expect(wallet.roundedFields).toEqual(['pending_sol', 'lifetime_sol']);
    expect(findings.map((f) => f.text)).toEqual(
      expect.arrayContaining([
        'wallet a: pending_sol written as 0.30000000000000004, read as 0.3 SOL (rounded toward zero to the lamport)',
        'wallet a: lifetime_sol written as 1.0000000009, read as 1 SOL (rounded toward zero to the lamport)',
      ]),
    );
  });

  it('notes fields autoclaim does not use', () => {
    const { wallet, findings } = summaryFindings('a', ADDR, answer(summary(',"streak":4,"boost":{"x":1}')));
    expect(wallet.unknownFields).toEqual(['streak', 'boost']);
    expect(findings.at(-1)).toEqual({ area: 'wallets', level: 'note', text: 'wallet a: fields autoclaim does not use, kept as sent: streak, boost' });
  });

  it.each([
    [200, '{"address":"x"', /not JSON/],
    [200, summary('').replace('3.94', '"lots"'), /pending_sol: expected a non-negative decimal amount.*every poll of it would fail/],
    [200, summary('').replace(ADDR, 'Crs71UyAv56yeSVraCRocDCGB9ZD8m3CZAVY672CPRya'), /address: expected FNjv/],
    [401, '', /refused \(HTTP 401\); check the API key, or set api\.auth_reads: false/],
    [404, '', /HTTP 404 for FNjv.*check the address/],
    [500, '', /HTTP 500/],
  ] as const)('HTTP %s %s is a problem', (status, body, text) => {
    const { findings } = summaryFindings('a', ADDR, answer(body, status));
    expect(findings).toHaveLength(1);
    expect(findings[0]?.level).toBe('problem');
    expect(findings[0]?.text).toMatch(text);
  });

  it('a 429 is a note, not a problem', () => {
    expect(summaryFindings('a', ADDR, answer('', 429)).findings[0]?.level).toBe('note');
  });

  it('lists the tiers seen as the server wrote them', () => {
    const seen = ['Gold', 'gold', 'Silver'].map((tier) => summaryFindings('a', ADDR, answer(summary(`,"tier":"${tier}"`))).wallet);
    expect(tiersFinding(seen)?.text).toBe('tiers seen: Gold, gold, Silver (rules compare tiers without regard to case)');
    expect(tiersFinding([])).toBeUndefined();
  });
});

describe('keys', () => {
  it('says where the API key comes from, or what to set', () => {
    expect(apiKeyFinding({ kind: 'present', source: '$AUTOCLAIM_API_KEY' })).toMatchObject({ level: 'ok', text: expect.stringContaining('$AUTOCLAIM_API_KEY') });
    expect(apiKeyFinding({ kind: 'sandbox' }).level).toBe('ok');
    expect(apiKeyFinding({ kind: 'missing' })).toMatchObject({ level: 'problem', text: expect.stringMatching(/^no API key: set \$AUTOCLAIM_API_KEY/) });
    expect(apiKeyFinding({ kind: 'unusable', message: 'the API key from x is too short' })).toMatchObject({ level: 'problem' });
  });

  it('says what to change for a key that derives another address', () => {
    const err = new KeyError('KEY_MISMATCH', `key file /k/b.json is the key of address X, but wallet b is configured with address ${ADDR}`);
    expect(walletKeyProblem('b', err)).toEqual({
      area: 'keys',
      level: 'problem',
      text: `wallet b: key file /k/b.json is the key of address X, but wallet b is configured with address ${ADDR}; point wallet b at its own key, or correct its address`,
    });
    expect(walletKeyProblem('b', new KeyError('KEY_MISSING', 'key file /k/b.json does not exist')).text).toBe(
      "wallet b: key file /k/b.json does not exist; fix wallet b's key source",
    );
  });
});
