// The loopback control surface (what benchmarks and out-of-process tests use) and the sandbox's own
// rate limiter.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { FakeClock } from '../support/clock.js';
import { buildSigned, errorCode, send, sendSigned, testAgent, testWallet } from './helpers.js';

const alice = testWallet('alice');
const agent = testAgent();
afterAll(() => agent.close());

let sandbox: Sandbox;
let clock: FakeClock;

async function start(extra: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  clock = new FakeClock(Date.UTC(2025, 6, 1, 12, 0, 0));
  sandbox = await startSandbox({ clock, defaultAccrualLamportsPerSec: 0n, apiKey: 'admin-test-key', ...extra });
  return sandbox;
}
afterEach(async () => {
  await sandbox?.close();
});

const post = (path: string, body: unknown) =>
  send(agent, `${sandbox.adminUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('admin surface', () => {
  it('sets a wallet exactly (numbers or strings, SOL or lamports) and reads it back', async () => {
    await start();
    const set = await post(`/wallets/${alice.address}`, '{"pending_sol":0.1,"lifetime_sol":"12.000000001","balance_lamports":"5","accrual_lamports_per_sec":0,"tier":"gold"}');
    expect(set.status).toBe(200);
    expect(set.text).toContain('"pending_sol":0.1,"lifetime_sol":12.000000001,"balance_sol":0.000000005');
    expect(sandbox.world.wallet(alice.address)).toMatchObject({ pendingLamports: 100_000_000n, lifetimeLamports: 12_000_000_001n, balanceLamports: 5n, tier: 'gold' });
    const got = await send(agent, `${sandbox.adminUrl}/wallets/${alice.address}`);
    expect(got.json).toMatchObject({ address: alice.address, pending_sol: 0.1, tier: 'gold', tier_override: 'gold' });
    // the API sees the same wallet
    const summary = await send(agent, `${sandbox.url}/rewards/wallet/${alice.address}`);
    expect(summary.json).toMatchObject({ pending_sol: 0.1, lifetime_sol: 12.000000001, tier: 'gold' });
  });

  it('refuses amounts finer than a lamport, unknown fields, and bad addresses', async () => {
    await start();
    expect((await post(`/wallets/${alice.address}`, { pending_sol: '0.0000000001' })).status).toBe(400);
    expect((await post(`/wallets/${alice.address}`, { pending: 1 })).status).toBe(400);
    expect((await post('/wallets/nope', { pending_sol: 1 })).status).toBe(400);
    expect((await send(agent, `${sandbox.adminUrl}/wallets/${alice.address}`)).status).toBe(404);
  });

  it('serves the ledger with exact amounts', async () => {
    await start({ wallets: [{ address: alice.address, pendingLamports: 1_234_500_000n }] });
    const r = await sendSigned(agent, buildSigned(sandbox.url, clock, 'claim', { wallet: alice, apiKey: 'admin-test-key' }));
    expect(r.status).toBe(200);
    const ledger = await send(agent, `${sandbox.adminUrl}/ledger`);
    expect(ledger.text).toContain('"amount_sol":1.2345,"amount_lamports":"1234500000"');
    expect(ledger.json).toEqual({
      entries: [
        {
          seq: 1,
          op: 'claim',
          wallet: alice.address,
          symbol: null,
          amount_sol: 1.2345,
          amount_lamports: '1234500000',
          epoch: '2025-07-01',
          ts: clock.now(),
          tx: (r.json as { tx: string }).tx,
          signature: expect.any(String),
          request_id: r.headers['x-request-id'],
        },
      ],
    });
  });

  it("serves a withdraw's shares and a burn's tokens in their unit, never as amount_sol (helper h29e)", async () => {
    // A script summing the ledger's amount_sol counted shares and tokens as SOL, as the daemon's
    // logs once did (helper 34).
    await start({ symbols: ['SOL2X', 'SOL5X'], wallets: [{ address: alice.address, shares: { SOL2X: 1_000_000_000n }, tokens: { SOL5X: 1_000_000_000n } }] });
    const base = { wallet: alice, apiKey: 'admin-test-key' };
    expect((await sendSigned(agent, buildSigned(sandbox.url, clock, 'withdraw', { ...base, symbol: 'SOL2X', amount: '0.25' }))).status).toBe(200);
    expect((await sendSigned(agent, buildSigned(sandbox.url, clock, 'burn', { ...base, symbol: 'SOL5X', amount: '0.1', ts: Math.floor(clock.now() / 1000) + 1 }))).status).toBe(200);
    const entries = ((await send(agent, `${sandbox.adminUrl}/ledger`)).json as { entries: Array<Record<string, unknown>> }).entries;
    expect(entries.map((e) => [e.op, e.amount_sol, e.amount_units, e.unit, e.amount_lamports])).toEqual([
      ['withdraw', undefined, 0.25, 'SOL2X vault shares', '250000000'],
      ['burn', undefined, 0.1, 'SOL5X tokens', '100000000'],
    ]);
  });

  it('queues, lists and clears faults over HTTP', async () => {
    await start();
    const queued = await post('/faults', [
      { match: { op: 'health' }, kind: 'status5xx_before', status: 502 },
      { match: { op: 'leaderboard' }, kind: 'rate_limit', retryAfterSec: 3, times: 2 },
    ]);
    expect(queued.status).toBe(201);
    expect(queued.json).toEqual({ ids: [1, 2] });
    expect((await send(agent, `${sandbox.url}/health`)).status).toBe(502);
    const listed = await send(agent, `${sandbox.adminUrl}/faults`);
    expect(listed.json).toMatchObject({ faults: [{ id: 2, remaining: 2 }] });
    const cleared = await send(agent, `${sandbox.adminUrl}/faults`, { method: 'DELETE' });
    expect(cleared.json).toEqual({ cleared: 1 });
    expect((await send(agent, `${sandbox.url}/rewards/leaderboard`)).status).toBe(200);
  });

  it('refuses an invalid fault with a message naming the problem', async () => {
    await start();
    const r = await post('/faults', { kind: 'latency' });
    expect(r.status).toBe(400);
    expect(errorCode(r.json)).toBe('invalid_fault');
    expect((r.json as { error: { message: string } }).error.message).toContain('ms');
  });

  it('advances the epoch', async () => {
    await start();
    const r = await post('/epoch/advance', '');
    expect(r.json).toMatchObject({ epoch: '2025-07-02' });
    expect((await send(agent, `${sandbox.adminUrl}/epoch`)).json).toMatchObject({ epoch: '2025-07-02' });
  });

  it('counts requests per op and status, and resets the counts', async () => {
    await start();
    await send(agent, `${sandbox.url}/health`);
    await send(agent, `${sandbox.url}/health`);
    await send(agent, `${sandbox.url}/rewards/wallet/nope`);
    await send(agent, `${sandbox.url}/nowhere`);
    const stats = await send(agent, `${sandbox.adminUrl}/stats`);
    expect(stats.json).toMatchObject({
      total: 4,
      by_op: { health: { '200': 2 }, summary: { '400': 1 }, unknown: { '404': 1 } },
      served_429: 0,
      limiter_429: 0,
      peak_per_minute: 4,
    });
    await send(agent, `${sandbox.adminUrl}/stats`, { method: 'DELETE' });
    expect(sandbox.stats().total).toBe(0);
  });

  it('does not count admin calls as API traffic, and 404s unknown admin routes', async () => {
    await start();
    expect((await send(agent, `${sandbox.adminUrl}/nope`)).status).toBe(404);
    expect(sandbox.stats().total).toBe(0);
  });
});

describe('own rate limiter', () => {
  it('answers 429 with Retry-After past the burst and counts it, then refills with time', async () => {
    await start({ rateLimit: { perMinute: 60, burst: 3 } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await send(agent, `${sandbox.url}/health`)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await send(agent, `${sandbox.url}/health`);
    expect(limited.headers['retry-after']).toBe('1');
    expect(sandbox.stats()).toMatchObject({ served429: 2, limiter429: 2 });
    clock.advance(1_000);
    expect((await send(agent, `${sandbox.url}/health`)).status).toBe(200);
    expect((await send(agent, `${sandbox.url}/health`)).status).toBe(429);
  });

  it('is off by default', async () => {
    await start();
    for (let i = 0; i < 150; i++) expect((await send(agent, `${sandbox.url}/health`)).status).toBe(200);
    expect(sandbox.stats()).toMatchObject({ total: 150, peakPerMinute: 150, limiter429: 0 });
  });
});
