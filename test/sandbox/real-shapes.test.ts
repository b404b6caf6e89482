// The sandbox answers in the shapes the real service documents (SPEC §6): request ids on every
// answer, withdraw and burn against held positions, capitalised tiers, rank 0 for the unranked,
// and a claim template of its own so a client's wrong guess can be seen failing.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { FakeClock } from '../support/clock.js';
import { buildSigned, errorCode, send, sendSigned, testAgent, testWallet } from './helpers.js';

const T0 = Date.UTC(2025, 9, 31, 10, 0, 0);
const API_KEY = 'real-shapes-key';
const alice = testWallet('alice');
const bob = testWallet('bob');
const agent = testAgent();
afterAll(() => agent.close());

let sandbox: Sandbox | undefined;
let clock: FakeClock;

async function start(extra: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  clock = new FakeClock(T0);
  sandbox = await startSandbox({
    clock,
    apiKey: API_KEY,
    defaultAccrualLamportsPerSec: 0n,
    wallets: [{ address: alice.address, pendingLamports: 3_940_000_000n, balanceLamports: 20_000_000_000n, accrualLamportsPerSec: 0n }],
    ...extra,
  });
  return sandbox;
}
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const signed = (s: Sandbox, op: Parameters<typeof buildSigned>[2], init: Partial<Parameters<typeof buildSigned>[3]> = {}) =>
  sendSigned(agent, buildSigned(s.url, clock, op, { wallet: alice, apiKey: API_KEY, ...init }));

describe('x-request-id', () => {
  it('is on every answer, successes, refusals, limiter and injected faults alike, and never repeats', async () => {
    const s = await start({ rateLimit: { perMinute: 1, burst: 4 } });
    s.addFault({ match: { op: 'leaderboard' }, kind: 'status5xx_before' });
    const answers = [
      await send(agent, `${s.url}/health`),
      await send(agent, `${s.url}/rewards/wallet/not-a-key`),
      await send(agent, `${s.url}/rewards/leaderboard`),
      await send(agent, `${s.url}/nowhere`),
      await send(agent, `${s.url}/health`), // past the burst: the limiter's 429
      await send(agent, `${s.adminUrl}/epoch`),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 400, 503, 404, 429, 200]);
    const ids = answers.map((a) => a.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is written into the ledger with the action it applied', async () => {
    const s = await start();
    const r = await signed(s, 'claim');
    expect(r.status).toBe(200);
    expect(s.ledger()[0]?.requestId).toBe(r.headers['x-request-id']);
  });
});

describe('answers as documented', () => {
  it('health says status, network and the server time in Unix seconds', async () => {
    const s = await start({ network: 'solana-mainnet' });
    clock.advance(2_500);
    const r = await send(agent, `${s.url}/health`);
    expect(r.json).toEqual({ status: 'ok', network: 'solana-mainnet', ts: T0 / 1000 + 2 });
  });

  it('claim answers success with claimed_sol, tx and epoch', async () => {
    const s = await start();
    const r = await signed(s, 'claim');
    expect(r.text).toMatch(/^\{"status":"success","claimed_sol":3\.94,"tx":"[1-9A-HJ-NP-Za-km-z]+","epoch":"2025-10-31"\}$/);
  });

  it('deposit of 10 SOL answers submitted with the vault, a queued rebalance and a little under 10 shares', async () => {
    const s = await start();
    const r = await signed(s, 'deposit', { symbol: 'SOL2X', amount: '10' });
    expect(r.json).toMatchObject({ status: 'submitted', vault: 'SOL2X', queued_rebalance: true, share_mint: 'vSOL2X' });
    const shares = (r.json as { estimated_shares: number }).estimated_shares;
    expect(shares).toBeGreaterThan(9.99);
    expect(shares).toBeLessThan(10);
  });

  it('tiers are capitalised: Bronze, Silver from 10 SOL lifetime, Gold from 100', async () => {
    const s = await start({
      wallets: [
        { address: alice.address, lifetimeLamports: 9_999_999_999n },
        { address: bob.address, lifetimeLamports: 10_000_000_000n },
      ],
    });
    const tier = async (address: string) => ((await send(agent, `${s.url}/rewards/wallet/${address}`)).json as { tier: string }).tier;
    expect(await tier(alice.address)).toBe('Bronze');
    expect(await tier(bob.address)).toBe('Silver');
    s.world.setWallet(bob.address, { lifetimeLamports: 100_000_000_000n });
    expect(await tier(bob.address)).toBe('Gold');
  });

  it('an unranked wallet has rank 0 and is not on the leaderboard, until it is ranked again', async () => {
    const s = await start({ wallets: [{ address: alice.address, ranked: false }, { address: bob.address }] });
    const summary = await send(agent, `${s.url}/rewards/wallet/${alice.address}`);
    expect(summary.text).toContain('"rank":0,');
    const board = (await send(agent, `${s.url}/rewards/leaderboard`)).json as Array<{ rank: number; address: string }>;
    expect(board).toEqual([expect.objectContaining({ rank: 1, address: bob.address })]);
    const patched = await send(agent, `${s.adminUrl}/wallets/${alice.address}`, { method: 'POST', body: '{"ranked":true}' });
    expect(patched.json).toMatchObject({ ranked: true });
    expect(((await send(agent, `${s.url}/rewards/wallet/${alice.address}`)).json as { rank: number }).rank).toBeGreaterThanOrEqual(1);
  });
});

describe('withdraw and burn', () => {
  it('withdraw turns vault shares back into SOL, and a round trip never creates a lamport', async () => {
    const s = await start();
    const dep = await signed(s, 'deposit', { symbol: 'SOL5X', amount: '10' });
    const shares = s.world.wallet(alice.address)?.shares['SOL5X'];
    expect(shares).toBeDefined();
    const sharesText = String((dep.json as { estimated_shares: number }).estimated_shares);
    clock.advance(1000);
    const r = await signed(s, 'withdraw', { symbol: 'SOL5X', amount: sharesText });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json as object)).toEqual(['status', 'tx', 'received']);
    expect(r.json).toMatchObject({ status: 'success' });
    const w = s.world.wallet(alice.address);
    expect(w?.shares).toEqual({});
    // 20 SOL - 10 deposited + what came back: at most the 20 it started with
    expect(w?.balanceLamports).toBeLessThanOrEqual(20_000_000_000n);
    expect(w?.balanceLamports).toBeGreaterThan(19_999_999_990n);
    expect(s.ledger().map((e) => [e.op, e.symbol, e.amountLamports])).toEqual([
      ['deposit', 'SOL5X', 10_000_000_000n],
      ['withdraw', 'SOL5X', shares],
    ]);
  });

  it('withdraw without a position, or more than held, is 422 insufficient_shares and changes nothing', async () => {
    const s = await start({ wallets: [{ address: alice.address, balanceLamports: 1n, shares: { SOL2X: 2_000_000_000n } }] });
    const none = await signed(s, 'withdraw', { symbol: 'JUP2X', amount: '1' });
    expect([none.status, errorCode(none.json)]).toEqual([422, 'insufficient_shares']);
    const tooMuch = await signed(s, 'withdraw', { symbol: 'SOL2X', amount: '2.000000001' });
    expect([tooMuch.status, errorCode(tooMuch.json)]).toEqual([422, 'insufficient_shares']);
    expect(s.ledger()).toEqual([]);
    expect(s.world.wallet(alice.address)).toMatchObject({ balanceLamports: 1n, shares: { SOL2X: 2_000_000_000n } });
  });

  it('burn needs a minted balance of that token and turns it back into SOL', async () => {
    const s = await start();
    const none = await signed(s, 'burn', { symbol: 'SOL5X', amount: '1' });
    expect([none.status, errorCode(none.json)]).toEqual([422, 'insufficient_tokens']);
    await signed(s, 'mint', { symbol: 'SOL5X', amount: '5' });
    const tokens = s.world.wallet(alice.address)?.tokens['SOL5X'] ?? 0n;
    clock.advance(1000);
    const r = await signed(s, 'burn', { symbol: 'SOL5X', amount: '1' });
    expect(r.json).toMatchObject({ status: 'success' });
    const received = (r.json as { received: number }).received;
    expect(received).toBeGreaterThan(1);
    expect(received).toBeLessThan(1.001);
    expect(s.world.wallet(alice.address)?.tokens['SOL5X']).toBe(tokens - 1_000_000_000n);
    expect(s.ledger().map((e) => e.op)).toEqual(['mint', 'burn']);
  });

  it('verifies withdraw and burn like a deposit: canonical amount, signed message, known symbol, no replay', async () => {
    const s = await start({ wallets: [{ address: alice.address, tokens: { SOL2X: 3_000_000_000n } }] });
    expect(errorCode((await signed(s, 'burn', { symbol: 'SOL2X', amount: '1.0' })).json)).toBe('invalid_amount');
    expect((await signed(s, 'burn', { symbol: 'SOL2X', amount: '1', signedAmount: '2' })).status).toBe(401);
    expect(errorCode((await signed(s, 'burn', { symbol: 'DOGE5X', amount: '1' })).json)).toBe('unknown_symbol');
    const req = buildSigned(s.url, clock, 'burn', { wallet: alice, apiKey: API_KEY, symbol: 'SOL2X', amount: '1' });
    expect((await sendSigned(agent, req)).status).toBe(200);
    expect((await sendSigned(agent, req)).status).toBe(409);
    expect(s.ledger()).toHaveLength(1);
  });
});

describe('a claim template the client does not use', () => {
  it('refuses the client default {wallet}|{ts} with 401 invalid_signature, and accepts its own', async () => {
    const s = await start({ claimMessage: '{wallet}|claim|{ts}' });
    const wrong = await signed(s, 'claim');
    expect(wrong.status).toBe(401);
    expect(wrong.json).toEqual({ error: { code: 'invalid_signature', message: expect.stringMatching(/signature/) } });
    expect(s.ledger()).toEqual([]);
    const ts = Math.floor(clock.now() / 1000);
    const right = await signed(s, 'claim', { ts, message: `${alice.address}|claim|${ts}` });
    expect(right.status).toBe(200);
    expect(s.ledger()).toHaveLength(1);
  });

  it('may sign {epoch} and {op}', async () => {
    const s = await start({ claimMessage: '{op}:{wallet}:{epoch}:{ts}' });
    const ts = Math.floor(clock.now() / 1000);
    const r = await signed(s, 'claim', { ts, message: `claim:${alice.address}:2025-10-31:${ts}` });
    expect(r.status).toBe(200);
  });

  it('refuses to start with a placeholder it cannot fill', async () => {
    await expect(startSandbox({ claimMessage: '{wallet}|{nonce}' })).rejects.toThrow(/claim message template names unknown \{nonce\}/);
  });
});
