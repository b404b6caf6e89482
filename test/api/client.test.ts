// The client against undici's MockAgent (no network): what goes out byte-for-byte, and how every
// answer is classified. Transport failures on real sockets are in client-transport.test.ts.
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { stringifyLossless } from '../../src/api/json.js';
import { decodeSignature, generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import { verifySignature } from '../../src/keys/verify.js';
import type { ApiConfig } from '../../src/domain.js';
import { KeyError } from '../../src/errors.js';
import { FakeClock } from '../support/clock.js';
import { captureLog } from '../support/log.js';
import { apiConfig, apiError } from './helpers.js';

const API_KEY = 'canary-api-key-3f9d2b7c1e';
const ORIGIN = 'http://api.test';

interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

const agents: MockAgent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.close();
});

function setup(over: Partial<ApiConfig> = {}, apiKey: string | null = API_KEY) {
  const config = apiConfig(over);
  const time = new FakeClock();
  const agent = new MockAgent();
  agent.disableNetConnect();
  agents.push(agent);
  const pool = agent.get(ORIGIN);
  const log = captureLog('debug');
  const limiter = new RateLimiter({ ...config.rateLimit, clock: time, sleep: time.autoSleep, headroom: 0, arrivalSlackMs: 0 });
  const client = new ApiClient({
    config,
    apiKey: apiKey ?? undefined,
    dispatcher: agent,
    limiter,
    clock: time,
    logger: log.logger,
    sleep: time.autoSleep,
    random: () => 0.5,
  });
  const seen: Seen[] = [];
  /** Replies in order with the given answers, recording each request. */
  const answer = (method: string, path: string, ...replies: Array<[number, string, Record<string, string>?]>) => {
    for (const [status, body, headers] of replies) {
      pool.intercept({ path, method }).reply((opts) => {
        seen.push({
          method: opts.method,
          path: opts.path,
          headers: { ...(opts.headers as Record<string, string>) },
          body: typeof opts.body === 'string' ? opts.body : undefined,
        });
        return { statusCode: status, data: body, responseOptions: { headers: headers ?? {} } };
      });
    }
  };
  return { config, time, agent, pool, log, limiter, client, seen, answer };
}

const kp = generateKeypair();
const signer = signerFromSeed(kp.secretKey64.slice(0, 32));
const WALLET = kp.address;
const SUMMARY_PATH = `/v1/rewards/wallet/${WALLET}`;
const summaryBody = (extra = '') =>
  `{"address":"${WALLET}","epoch":"2025-06-01","pending_sol":123456789.123456789,"lifetime_sol":"2"${extra}}`;

describe('reads', () => {
  it('GETs a wallet summary with the bearer, returns exact lamports, the body parsed losslessly and the server date', async () => {
    const { client, seen, answer } = setup();
    const body = summaryBody(',"extra":{"n":1.10}');
    answer('GET', SUMMARY_PATH, [200, body, { date: 'Sun, 01 Jun 2025 12:00:07 GMT', 'content-type': 'application/json' }]);
    const s = await client.walletSummary(WALLET);
    expect(s.pendingLamports).toBe(123_456_789_123_456_789n);
    expect(s.lifetimeLamports).toBe(2_000_000_000n);
    expect(stringifyLossless(s.raw)).toBe(body);
    expect(seen[0]?.headers['authorization']).toBe(`Bearer ${API_KEY}`);
    expect(seen[0]?.headers['accept']).toBe('application/json');
    expect(client.lastServerDateMs).toBe(Date.UTC(2025, 5, 1, 12, 0, 7));
    expect(client.clockSkewMs()).toBe(7_000);
  });

  it('sends no bearer on reads when auth_reads is off or no key is set, and never on /health', async () => {
    const off = setup({ authReads: false });
    off.answer('GET', SUMMARY_PATH, [200, summaryBody()]);
    await off.client.walletSummary(WALLET);
    expect(off.seen[0]?.headers['authorization']).toBeUndefined();

    const noKey = setup({}, null);
    noKey.answer('GET', SUMMARY_PATH, [200, summaryBody()]);
    await noKey.client.walletSummary(WALLET);
    expect(noKey.seen[0]?.headers['authorization']).toBeUndefined();

    const health = setup();
    health.answer('GET', '/v1/health', [204, '']);
    await health.client.health();
    expect(health.seen[0]?.headers['authorization']).toBeUndefined();
  });

  it('reads the leaderboard with its limit', async () => {
    const { client, seen, answer } = setup();
    const body = `[{"rank":1,"address":"${WALLET}","score":99.5,"total_rewards_sol":10.000000001}]`;
    answer('GET', '/v1/rewards/leaderboard?limit=5', [200, body]);
    const board = await client.leaderboard(5);
    expect(board.entries).toEqual([{ rank: 1, address: WALLET, score: '99.5', totalRewardsLamports: 10_000_000_001n }]);
    expect(stringifyLossless(board.raw)).toBe(body);
    expect(seen).toHaveLength(1);
  });

  it('turns a summary for another wallet, non-JSON or an empty 2xx into invalid_response with the body kept', async () => {
    const other = generateKeypair().address;
    for (const body of [summaryBody().replace(WALLET, other), '<html>oops</html>', '']) {
      const { client, answer } = setup();
      answer('GET', SUMMARY_PATH, [200, body]);
      const err = await apiError(client.walletSummary(WALLET));
      expect(err.code).toBe('BAD_RESPONSE');
      expect(err.disposition).toBe('invalid_response');
      expect(err.rawBody).toBe(body);
      expect(err.message.startsWith(`GET ${ORIGIN}${SUMMARY_PATH} : invalid response`)).toBe(true);
    }
  });

  it('retries 5xx and 429 (honouring Retry-After) with backoff, then succeeds', async () => {
    const { client, seen, answer, time, limiter, log } = setup();
    answer('GET', SUMMARY_PATH, [503, '{"error":"busy"}'], [429, '', { 'retry-after': '3' }], [200, summaryBody()]);
    const start = time.mono;
    const s = await client.walletSummary(WALLET);
    expect(s.address).toBe(WALLET);
    expect(seen).toHaveLength(3);
    // 503: full-jitter backoff (random 0.5 × 250 ms); 429: the limiter holds everyone for 3 s
    expect(time.sleeps).toEqual([125, 3_000]);
    expect(time.mono - start).toBe(3_125);
    expect(limiter.pauses).toBe(1);
    expect(client.stats).toMatchObject({ requests: 3, retries: 2, rateLimited: 1 });
    const rateLines = log.lines.filter((l) => l['event'] === 'api.rate_limited');
    expect(rateLines).toHaveLength(1);
    expect(rateLines[0]?.['level']).toBe('debug');
    expect(log.lines.some((l) => l['level'] === 'warn' || l['level'] === 'error')).toBe(false);
  });

  it('gives up after read_attempts and throws the last classified error', async () => {
    const { client, seen, answer } = setup({ readAttempts: 2 });
    answer('GET', SUMMARY_PATH, [500, 'x'], [502, '{"message":"bad gateway\\nupstream"}']);
    const err = await apiError(client.walletSummary(WALLET));
    expect(seen).toHaveLength(2);
    expect(err).toMatchObject({ code: 'SERVER_ERROR', disposition: 'ambiguous', status: 502 });
    expect(err.message).toBe(`GET ${ORIGIN}${SUMMARY_PATH} : HTTP 502 bad gateway upstream`);
  });

  it('does not retry a 4xx read', async () => {
    const { client, seen, answer } = setup();
    answer('GET', SUMMARY_PATH, [404, '{"error":"unknown wallet"}']);
    const err = await apiError(client.walletSummary(WALLET));
    expect(seen).toHaveLength(1);
    expect(err).toMatchObject({ code: 'REFUSED', disposition: 'refused', status: 404 });
    expect(err.message).toContain('unknown wallet');
  });

  it('stops reading past max_response_bytes', async () => {
    for (const headers of [{ 'content-length': '5000' }, {}] as Array<Record<string, string>>) {
      const { client, answer } = setup({ maxResponseBytes: 1_000 });
      answer('GET', SUMMARY_PATH, [200, 'x'.repeat(5_000), headers]);
      const err = await apiError(client.walletSummary(WALLET));
      expect(err).toMatchObject({ code: 'RESPONSE_TOO_LARGE', disposition: 'invalid_response', status: 200 });
      expect((err.rawBody ?? '').length).toBeLessThanOrEqual(1_000);
    }
  });
});

describe('signed requests', () => {
  const nowMs = Date.UTC(2025, 5, 1, 12, 0, 0, 999);
  const ts = Math.floor(nowMs / 1000);

  it('prepares a deposit: exact message, body bytes, headers without Authorization', () => {
    const { client } = setup();
    const p = client.prepare({ op: 'deposit', wallet: WALLET, symbol: 'SOL2X', amount: 1_500_000_000n }, signer, nowMs);
    expect(p.message).toBe(`${WALLET}|SOL2X|1.5|${ts}`);
    expect(p.body).toBe(`{"symbol":"SOL2X","amount":1.5,"wallet":"${WALLET}","signature":"${p.signature}"}`);
    expect(p.headers).toEqual({
      'content-type': 'application/json',
      accept: 'application/json',
      'x-svc-ts': String(ts),
      'x-svc-wallet': WALLET,
    });
    expect(JSON.stringify(p)).not.toContain(API_KEY);
    expect(p.url).toBe(`${ORIGIN}/v1/actions/deposit`);
    expect(verifySignature(new TextEncoder().encode(p.message), decodeSignature(p.signature, 'base58'), WALLET)).toBe(true);
  });

  it('sends the prepared bytes with the bearer and parses the answer', async () => {
    const { client, seen, answer } = setup();
    answer('POST', '/v1/actions/mint', [200, '{"status":"ok","tx":"T1","mint":"M","received":"0.75","new":true}']);
    const p = client.prepare({ op: 'mint', wallet: WALLET, symbol: 'SOL3X', amount: 1n }, signer, nowMs);
    expect(p.message).toBe(`${WALLET}|SOL3X|0.000000001|${ts}`);
    const r = await client.send(p);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'ok', tx: 'T1', mint: 'M', received: '0.75' });
    const req = seen[0];
    expect(req?.body).toBe(p.body);
    expect(req?.body).toContain('"amount":0.000000001,');
    expect(req?.headers).toMatchObject({
      authorization: `Bearer ${API_KEY}`,
      'content-type': 'application/json',
      'x-svc-ts': String(ts),
      'x-svc-wallet': WALLET,
    });
  });

  it('claims with {wallet, signature}, a custom header prefix and hex signatures', async () => {
    const { client, seen, answer } = setup({ headerPrefix: 'x-rwd', signatureEncoding: 'hex' });
    answer('POST', '/v1/rewards/claim', [200, '{"status":"claimed","claimed_sol":"0.5","tx":"T","epoch":"2025-06-01"}']);
    const p = client.prepare({ op: 'claim', wallet: WALLET }, signer, nowMs);
    expect(p.message).toBe(`${WALLET}|${ts}`);
    expect(p.signature).toMatch(/^[0-9a-f]{128}$/);
    expect(p.body).toBe(`{"wallet":"${WALLET}","signature":"${p.signature}"}`);
    const r = await client.send(p);
    expect(r.body.claimedLamports).toBe(500_000_000n);
    expect(seen[0]?.headers['x-rwd-ts']).toBe(String(ts));
    expect(seen[0]?.headers['x-rwd-wallet']).toBe(WALLET);
    expect(seen[0]?.headers['x-svc-ts']).toBeUndefined();
  });

  it('accepts an empty 2xx as an acknowledgement', async () => {
    const { client, answer } = setup();
    answer('POST', '/v1/rewards/claim', [204, '']);
    const r = await client.send(client.prepare({ op: 'claim', wallet: WALLET }, signer, nowMs));
    expect(r).toMatchObject({ status: 204, rawText: '', body: { status: null } });
  });

  it('refuses to prepare for another wallet, a zero amount or a missing symbol', () => {
    const { client } = setup();
    expect(() => client.prepare({ op: 'claim', wallet: generateKeypair().address }, signer, nowMs)).toThrow(KeyError);
    expect(() => client.prepare({ op: 'deposit', wallet: WALLET, symbol: 'S', amount: 0n }, signer, nowMs)).toThrow(/positive amount/);
    expect(() => client.prepare({ op: 'mint', wallet: WALLET, amount: 5n }, signer, nowMs)).toThrow(/symbol/);
  });

  const statuses: Array<[number, string, string]> = [
    [400, 'refused', 'REFUSED'],
    [401, 'refused', 'REFUSED'],
    [403, 'refused', 'REFUSED'],
    [404, 'refused', 'REFUSED'],
    [409, 'refused', 'REFUSED'],
    [422, 'refused', 'REFUSED'],
    [429, 'refused', 'RATE_LIMITED'],
    [500, 'ambiguous', 'SERVER_ERROR'],
    [502, 'ambiguous', 'SERVER_ERROR'],
    [503, 'ambiguous', 'SERVER_ERROR'],
    [504, 'ambiguous', 'SERVER_ERROR'],
    [302, 'ambiguous', 'UNEXPECTED_STATUS'],
  ];
  for (const [status, disposition, code] of statuses) {
    it(`classifies HTTP ${status} as ${disposition} and never re-sends it`, async () => {
      const { client, seen, answer } = setup();
      answer('POST', '/v1/actions/deposit', [status, '{"error":{"code":"E","message":"why"}}', { 'retry-after': '2' }]);
      const p = client.prepare({ op: 'deposit', wallet: WALLET, symbol: 'SOL2X', amount: 7n }, signer, nowMs);
      const err = await apiError(client.send(p));
      expect(seen).toHaveLength(1);
      expect(err).toMatchObject({ disposition, code, status, method: 'POST', url: p.url });
      expect(err.message).toBe(`POST ${p.url} : ${status === 429 ? 'HTTP 429 rate limited' : `HTTP ${status}`} E: why`);
      expect(err.retryAfterMs).toBe(status === 429 || status === 503 ? 2_000 : undefined);
    });
  }

  it('a 2xx whose body fails the schema is invalid_response with the raw body', async () => {
    const { client, answer } = setup();
    const body = '{"status":"ok","claimed_sol":"-1"}';
    answer('POST', '/v1/rewards/claim', [200, body]);
    const err = await apiError(client.send(client.prepare({ op: 'claim', wallet: WALLET }, signer, nowMs)));
    expect(err).toMatchObject({ code: 'BAD_RESPONSE', disposition: 'invalid_response', rawBody: body, status: 200 });
    expect(err.issues[0]).toMatch(/^claimed_sol: expected a non-negative decimal amount/);
  });

  it('re-sends only a provably unsent request; a reset after sending is never re-sent', async () => {
    const refused = setup({ readAttempts: 3 });
    const connErr = () => Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED', syscall: 'connect' });
    refused.pool.intercept({ path: '/v1/rewards/claim', method: 'POST' }).replyWithError(connErr());
    refused.pool.intercept({ path: '/v1/rewards/claim', method: 'POST' }).replyWithError(connErr());
    refused.answer('POST', '/v1/rewards/claim', [200, '{"status":"ok"}']);
    const p = refused.client.prepare({ op: 'claim', wallet: WALLET }, signer, nowMs);
    const r = await refused.client.send(p);
    expect(r.body.status).toBe('ok');
    expect(refused.seen[0]?.body).toBe(p.body);
    expect(refused.client.stats.requests).toBe(3);

    const reset = setup({ readAttempts: 3 });
    reset.pool
      .intercept({ path: '/v1/rewards/claim', method: 'POST' })
      .replyWithError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' }));
    const err = await apiError(reset.client.send(reset.client.prepare({ op: 'claim', wallet: WALLET }, signer, nowMs)));
    expect(err).toMatchObject({ disposition: 'ambiguous', code: 'CONNECTION_LOST' });
    expect(reset.client.stats.requests).toBe(1);
    expect(err.message).toBe(`POST ${ORIGIN}/v1/rewards/claim : connection reset`);
  });

  it('never writes the API key into a log line or an error message', async () => {
    const { client, answer, log } = setup();
    answer('POST', '/v1/rewards/claim', [401, `{"error":"bad token"}`]);
    const err = await apiError(client.send(client.prepare({ op: 'claim', wallet: WALLET }, signer, nowMs)));
    log.logger.error({ event: 'action.rejected', err }, 'failed');
    expect(log.text()).not.toContain(API_KEY);
    expect(err.message).not.toContain(API_KEY);
    expect(JSON.stringify(err)).not.toContain(API_KEY);
  });
});

describe('rate limit shared by all requests', () => {
  it('every request acquires the limiter first', async () => {
    const { client, answer, limiter, time } = setup({ rateLimit: { perMinute: 60, burst: 2 } });
    answer('GET', SUMMARY_PATH, [200, summaryBody()], [200, summaryBody()], [200, summaryBody()]);
    const start = time.mono;
    await client.walletSummary(WALLET);
    await client.walletSummary(WALLET);
    await client.walletSummary(WALLET);
    expect(limiter.waits).toBe(1);
    expect(time.mono - start).toBe(1_000);
  });
});
