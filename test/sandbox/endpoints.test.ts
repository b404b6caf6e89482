import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { FakeClock } from '../support/clock.js';
import { buildSigned, errorCode, send, sendSigned, sign, testAgent, testWallet } from './helpers.js';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);
const API_KEY = 'test-api-key-0123456789';
const alice = testWallet('alice');
const bob = testWallet('bob');
const carol = testWallet('carol');
const agent = testAgent();
afterAll(() => agent.close());

let sandbox: Sandbox;
let clock: FakeClock;

async function start(extra: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  clock = new FakeClock(T0);
  sandbox = await startSandbox({
    clock,
    apiKey: API_KEY,
    defaultAccrualLamportsPerSec: 0n,
    wallets: [
      { address: alice.address, pendingLamports: 1_500_000_000n, lifetimeLamports: 123_456_789_012n, balanceLamports: 10_000_000_000n, accrualLamportsPerSec: 0n },
      { address: bob.address, pendingLamports: 1n, lifetimeLamports: 20_000_000_000n, accrualLamportsPerSec: 0n, tier: 'whale' },
      { address: carol.address },
    ],
    ...extra,
  });
  return sandbox;
}

afterEach(async () => {
  await sandbox?.close();
});

describe('reads', () => {
  beforeEach(async () => {
    await start();
  });

  it('serves health without a credential', async () => {
    const r = await send(agent, `${sandbox.url}/health`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'ok', network: 'solana-sandbox', ts: T0 / 1000 });
  });

  it('serves the wallet summary with the documented shape and exact amount text', async () => {
    const r = await send(agent, `${sandbox.url}/rewards/wallet/${alice.address}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain('"pending_sol":1.5,');
    expect(r.text).toContain('"lifetime_sol":123.456789012,');
    const s = r.json as Record<string, unknown>;
    expect(Object.keys(s)).toEqual(['address', 'epoch', 'pending_sol', 'lifetime_sol', 'rank', 'tier', 'breakdown']);
    expect(s).toMatchObject({ address: alice.address, epoch: '2025-01-15', tier: 'Gold' });
    expect(s.rank).toBeGreaterThanOrEqual(1);
    const breakdown = s.breakdown as Array<Record<string, unknown>>;
    expect(breakdown.map((b) => b.vault)).toEqual(['SOL2X', 'SOL5X', 'JUP2X', 'JUP5X', 'BONK2X']);
    for (const b of breakdown) {
      expect(typeof b.volume).toBe('number');
      expect(typeof b.score).toBe('number');
    }
  });

  it('writes 1 lamport as 0.000000001, not in exponent form', async () => {
    const r = await send(agent, `${sandbox.url}/rewards/wallet/${bob.address}`);
    expect(r.text).toContain('"pending_sol":0.000000001,');
    expect(r.json).toMatchObject({ tier: 'whale', lifetime_sol: 20 });
  });

  it('ranks the leaderboard from 1 by score, and the summary agrees on rank', async () => {
    const r = await send(agent, `${sandbox.url}/rewards/leaderboard?limit=3`);
    expect(r.status).toBe(200);
    const rows = r.json as Array<{ rank: number; address: string; score: number; total_rewards_sol: number }>;
    expect(rows.map((x) => x.rank)).toEqual([1, 2, 3]);
    expect(rows.map((x) => Object.keys(x))).toEqual(Array(3).fill(['rank', 'address', 'score', 'total_rewards_sol']));
    expect(rows[0]!.score).toBeGreaterThanOrEqual(rows[1]!.score);
    expect(rows[1]!.score).toBeGreaterThanOrEqual(rows[2]!.score);
    const aliceRow = rows.find((x) => x.address === alice.address);
    expect(r.text).toContain(`"address":"${alice.address}","score":${String(aliceRow?.score)},"total_rewards_sol":124.956789012}`);
    const summary = await send(agent, `${sandbox.url}/rewards/wallet/${alice.address}`);
    expect((summary.json as { rank: number }).rank).toBe(aliceRow?.rank);

    const limited = await send(agent, `${sandbox.url}/rewards/leaderboard?limit=1`);
    expect(limited.json).toHaveLength(1);
    const bad = await send(agent, `${sandbox.url}/rewards/leaderboard?limit=zero`);
    expect(bad.status).toBe(400);
    expect(errorCode(bad.json)).toBe('invalid_limit');
  });

  it('registers an unknown wallet on first sight with nothing pending', async () => {
    const dave = testWallet('dave');
    const r = await send(agent, `${sandbox.url}/rewards/wallet/${dave.address}`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ address: dave.address, pending_sol: 0, lifetime_sol: 0, tier: 'Bronze' });
    expect(sandbox.world.wallet(dave.address)).toBeDefined();
  });

  it('refuses an address that is not a public key', async () => {
    const r = await send(agent, `${sandbox.url}/rewards/wallet/not-a-key`);
    expect(r.status).toBe(400);
    expect(errorCode(r.json)).toBe('invalid_address');
  });

  it('accepts reads with or without the bearer, but not with a wrong one', async () => {
    const url = `${sandbox.url}/rewards/wallet/${alice.address}`;
    expect((await send(agent, url, { headers: { authorization: `Bearer ${API_KEY}` } })).status).toBe(200);
    expect((await send(agent, url)).status).toBe(200);
    const wrong = await send(agent, url, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain(API_KEY);
  });

  it('answers unknown routes 404 and wrong methods 405, as JSON errors', async () => {
    const missing = await send(agent, `${sandbox.url}/nope`);
    expect(missing.status).toBe(404);
    expect(errorCode(missing.json)).toBe('not_found');
    const outside = await send(agent, `${sandbox.url.replace('/v1', '/v2')}/health`);
    expect(outside.status).toBe(404);
    const wrongMethod = await send(agent, `${sandbox.url}/rewards/claim`);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('POST');
  });
});

describe('signed operations', () => {
  beforeEach(async () => {
    await start();
  });

  it('claims: pending moves to balance and lifetime, and the ledger records it', async () => {
    const r = await sendSigned(agent, buildSigned(sandbox.url, clock, 'claim', { wallet: alice, apiKey: API_KEY }));
    expect(r.status).toBe(200);
    expect(Object.keys(r.json as object)).toEqual(['status', 'claimed_sol', 'tx', 'epoch']);
    expect(r.json).toMatchObject({ status: 'success', claimed_sol: 1.5, epoch: '2025-01-15' });
    expect(r.text).toContain('"claimed_sol":1.5,');
    const w = sandbox.world.wallet(alice.address);
    expect(w).toMatchObject({ pendingLamports: 0n, lifetimeLamports: 124_956_789_012n, balanceLamports: 11_500_000_000n });
    const ledger = sandbox.ledger();
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ seq: 1, op: 'claim', wallet: alice.address, symbol: null, amountLamports: 1_500_000_000n, epoch: '2025-01-15' });
    expect(ledger[0]!.tx).toBe((r.json as { tx: string }).tx);
  });

  it('deposits: debits the balance and answers submitted with vault, queued rebalance and shares', async () => {
    const r = await sendSigned(agent, buildSigned(sandbox.url, clock, 'deposit', { wallet: alice, apiKey: API_KEY, symbol: 'SOL2X', amount: '2.5' }));
    expect(r.status).toBe(200);
    expect(Object.keys(r.json as object)).toEqual(['status', 'tx', 'vault', 'queued_rebalance', 'share_mint', 'estimated_shares']);
    expect(r.json).toMatchObject({ status: 'submitted', vault: 'SOL2X', queued_rebalance: true, share_mint: 'vSOL2X' });
    expect(typeof (r.json as { estimated_shares: unknown }).estimated_shares).toBe('number');
    expect(sandbox.world.wallet(alice.address)?.balanceLamports).toBe(7_500_000_000n);
    expect(sandbox.ledger()[0]).toMatchObject({ op: 'deposit', symbol: 'SOL2X', amountLamports: 2_500_000_000n });
  });

  it('mints: debits the balance and answers with mint and received', async () => {
    const r = await sendSigned(agent, buildSigned(sandbox.url, clock, 'mint', { wallet: alice, apiKey: API_KEY, symbol: 'SOL5X', amount: '0.000000001' }));
    expect(r.status).toBe(200);
    expect(Object.keys(r.json as object)).toEqual(['status', 'tx', 'mint', 'received']);
    expect(r.json).toMatchObject({ status: 'success', mint: 'SOL5X' });
    expect(sandbox.world.wallet(alice.address)?.balanceLamports).toBe(9_999_999_999n);
    expect(sandbox.ledger()[0]).toMatchObject({ op: 'mint', symbol: 'SOL5X', amountLamports: 1n });
  });

  it('refuses a claim with nothing pending with 422 and records nothing', async () => {
    const r = await sendSigned(agent, buildSigned(sandbox.url, clock, 'claim', { wallet: carol, apiKey: API_KEY }));
    expect(r.status).toBe(422);
    expect(errorCode(r.json)).toBe('nothing_to_claim');
    expect(sandbox.ledger()).toEqual([]);
  });
});

describe('configurable wire format', () => {
  it('serves signed ops at configured paths and methods with configured templates, prefix and encoding', async () => {
    await start({
      basePath: '/api/v9',
      headerPrefix: 'x-acme',
      signatureEncoding: 'hex',
      endpoints: {
        claim: { method: 'PUT', path: '/claims', message: 'claim:{wallet}:{ts}' },
        deposit: { method: 'POST', path: '/vaults/deposit', message: '{ts}/{amount}/{symbol}/{wallet}' },
        mint: { method: 'POST', path: '/tokens/mint', message: '{wallet}|{symbol}|{amount}|{ts}' },
      },
    });
    expect(sandbox.url).toMatch(/\/api\/v9$/);
    const ts = String(Math.floor(clock.now() / 1000));
    const headers = { 'content-type': 'application/json', 'x-acme-ts': ts, 'x-acme-wallet': alice.address, authorization: `Bearer ${API_KEY}` };
    const claimSig = sign(`claim:${alice.address}:${ts}`, alice, 'hex');
    const claim = await send(agent, `${sandbox.url}/claims`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ wallet: alice.address, signature: claimSig }),
    });
    expect(claim.status).toBe(200);
    const depSig = sign(`${ts}/1.25/JUP2X/${alice.address}`, alice, 'hex');
    const dep = await send(agent, `${sandbox.url}/vaults/deposit`, {
      method: 'POST',
      headers,
      body: `{"symbol":"JUP2X","amount":1.25,"wallet":"${alice.address}","signature":"${depSig}"}`,
    });
    expect(dep.status).toBe(200);
    expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);
    const defaultPath = await send(agent, `${sandbox.url}/rewards/claim`, { method: 'POST', headers, body: '{}' });
    expect(defaultPath.status).toBe(404);
  });

  it('verifies base64 signatures when configured', async () => {
    await start({ signatureEncoding: 'base64' });
    const ok = await sendSigned(agent, buildSigned(sandbox.url, clock, 'claim', { wallet: alice, apiKey: API_KEY, encoding: 'base64' }));
    expect(ok.status).toBe(200);
    const b58 = await sendSigned(agent, buildSigned(sandbox.url, clock, 'claim', { wallet: bob, apiKey: API_KEY, encoding: 'base58' }));
    expect(b58.status).toBe(401);
  });

  it('accepts any bearer (or none) when no API key is set', async () => {
    await start({ apiKey: undefined });
    const r = await sendSigned(agent, buildSigned(sandbox.url, clock, 'claim', { wallet: alice, apiKey: null }));
    expect(r.status).toBe(200);
  });
});
