// The client against the real sandbox on loopback: signatures verify on the other side, amounts
// arrive exact, and each of the sandbox's faults lands in the disposition SPEC §2 requires,
// checked against the sandbox's ledger (what was really applied).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient, createDispatcher } from '../../src/api/client.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import { systemClock, type ApiConfig } from '../../src/domain.js';
import { silentLogger } from '../../src/log/logger.js';
import { startSandbox, type FaultSpec, type Sandbox } from '../../src/sandbox/server.js';
import { apiConfig, apiError } from './helpers.js';

const API_KEY = 'sandbox-test-key-123456';
const kp = generateKeypair();
const signer = signerFromSeed(kp.secretKey64.slice(0, 32));
const WALLET = kp.address;

let sandbox: Sandbox;
const closers: Array<() => Promise<void>> = [];

beforeEach(async () => {
  sandbox = await startSandbox({
    apiKey: API_KEY,
    clock: systemClock,
    defaultAccrualLamportsPerSec: 0n,
    wallets: [{ address: WALLET, pendingLamports: 2_500_000_000n, balanceLamports: 10_000_000_000n, accrualLamportsPerSec: 0n }],
  });
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  await sandbox.close();
});

function client(over: Partial<ApiConfig> = {}, apiKey = API_KEY): ApiClient {
  const config = apiConfig({ baseUrl: sandbox.url, timeoutMs: 1_000, ...over });
  const dispatcher = createDispatcher(config);
  closers.push(() => dispatcher.destroy());
  return new ApiClient({
    config,
    apiKey,
    dispatcher,
    limiter: new RateLimiter({ perMinute: 0, burst: 1, clock: systemClock }),
    clock: systemClock,
    logger: silentLogger(),
    sleep: () => Promise.resolve(),
  });
}

const deposit = (api: ApiClient, lamports: bigint) =>
  api.send(api.prepare({ op: 'deposit', wallet: WALLET, symbol: 'SOL2X', amount: lamports }, signer, Date.now()));
const claim = (api: ApiClient) => api.send(api.prepare({ op: 'claim', wallet: WALLET }, signer, Date.now()));
const fault = (spec: FaultSpec) => sandbox.addFault(spec);

describe('client ↔ sandbox', () => {
  it('reads health, the summary and the leaderboard', async () => {
    const api = client();
    await api.health();
    const s = await api.walletSummary(WALLET);
    expect(s.pendingLamports).toBe(2_500_000_000n);
    expect(s.epoch).toBe(sandbox.world.epoch());
    expect(s.rank).toBeGreaterThanOrEqual(1);
    const board = await api.leaderboard(100);
    expect(board.entries.map((e) => e.rank)).toEqual(board.entries.map((_, i) => i + 1));
    expect(board.entries.some((e) => e.address === WALLET)).toBe(true);
  });

  it('claims, deposits and mints with signatures the sandbox verifies, amounts exact', async () => {
    const api = client();
    const c = await claim(api);
    expect(c.body.claimedLamports).toBe(2_500_000_000n);
    const d = await deposit(api, 1_234_567_891n);
    expect(d.status).toBeLessThan(300);
    const m = await api.send(api.prepare({ op: 'mint', wallet: WALLET, symbol: 'SOL5X', amount: 1n }, signer, Date.now()));
    expect(m.status).toBeLessThan(300);
    expect(sandbox.ledger().map((e) => [e.op, e.amountLamports])).toEqual([
      ['claim', 2_500_000_000n],
      ['deposit', 1_234_567_891n],
      ['mint', 1n],
    ]);
  });

  it('a wrong API key is refused, and nothing is applied', async () => {
    const err = await apiError(claim(client({}, 'not-the-right-key-000')));
    expect(err).toMatchObject({ disposition: 'refused', status: 401 });
    expect(sandbox.ledger()).toHaveLength(0);
  });

  it('an answer lost after the server applied it is ambiguous, and the client does not re-send', async () => {
    fault({ kind: 'apply_then_drop', match: { op: 'deposit' } });
    const err = await apiError(deposit(client({ readAttempts: 3 }), 5n));
    expect(err.disposition).toBe('ambiguous');
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it('5xx after applying and a hang after applying are ambiguous; applied exactly once', async () => {
    fault({ kind: 'apply_then_5xx', match: { op: 'deposit' } });
    expect((await apiError(deposit(client(), 5n))).disposition).toBe('ambiguous');
    fault({ kind: 'apply_then_hang', match: { op: 'deposit' } });
    const hung = await apiError(deposit(client({ timeoutMs: 300 }), 6n));
    expect(hung).toMatchObject({ disposition: 'ambiguous', code: 'TIMEOUT' });
    expect(sandbox.ledger().map((e) => e.amountLamports)).toEqual([5n, 6n]);
  });

  it('a reset before applying is still ambiguous to the client (it cannot know)', async () => {
    fault({ kind: 'reset_before', match: { op: 'claim' } });
    expect((await apiError(claim(client({ readAttempts: 3 })))).disposition).toBe('ambiguous');
    expect(sandbox.ledger()).toHaveLength(0);
  });

  it('a 429 is refused with its Retry-After', async () => {
    fault({ kind: 'rate_limit', retryAfterSec: 2, match: { op: 'claim' } });
    const err = await apiError(claim(client()));
    expect(err).toMatchObject({ disposition: 'refused', code: 'RATE_LIMITED', status: 429, retryAfterMs: 2_000 });
    expect(sandbox.ledger()).toHaveLength(0);
  });

  it('a malformed 2xx is invalid_response with the body kept', async () => {
    fault({ kind: 'malformed', body: '{"status":"ok","claimed_sol":"NaN"}', match: { op: 'claim' } });
    const err = await apiError(claim(client()));
    expect(err).toMatchObject({ disposition: 'invalid_response', code: 'BAD_RESPONSE', rawBody: '{"status":"ok","claimed_sol":"NaN"}' });
  });

  it('a truncated body is ambiguous; a read retries past a 5xx', async () => {
    fault({ kind: 'truncated_body', match: { op: 'deposit' } });
    expect((await apiError(deposit(client(), 7n))).disposition).toBe('ambiguous');
    fault({ kind: 'status5xx_before', match: { op: 'summary' }, times: 2 });
    const s = await client({ readAttempts: 3 }).walletSummary(WALLET);
    expect(s.address).toBe(WALLET);
  });
});
