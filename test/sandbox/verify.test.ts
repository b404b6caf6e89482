// Every refusal of a signed request has its own status and leaves the ledger untouched.
import bs58 from 'bs58';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { FakeClock } from '../support/clock.js';
import { buildSigned, errorCode, sendSigned, testAgent, testWallet, type SignedInit } from './helpers.js';

const API_KEY = 'verify-test-key';
const alice = testWallet('alice');
const mallory = testWallet('mallory');
const agent = testAgent();
afterAll(() => agent.close());

let sandbox: Sandbox;
let clock: FakeClock;

beforeEach(async () => {
  clock = new FakeClock(Date.UTC(2025, 5, 1, 8, 0, 0));
  sandbox = await startSandbox({
    clock,
    apiKey: API_KEY,
    wallets: [{ address: alice.address, pendingLamports: 2_000_000_000n, balanceLamports: 5_000_000_000n, accrualLamportsPerSec: 0n }],
  });
});
afterEach(async () => {
  await sandbox.close();
});

async function refused(op: 'claim' | 'deposit' | 'mint', init: Partial<SignedInit>): Promise<{ status: number; code: string | undefined }> {
  const r = await sendSigned(agent, buildSigned(sandbox.url, clock, op, { wallet: alice, apiKey: API_KEY, ...init }));
  expect(sandbox.ledger()).toEqual([]);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  return { status: r.status, code: errorCode(r.json) };
}

const deposit = { symbol: 'SOL2X', amount: '1.5' };
/** L, the order of Ed25519's base point. */
const ED25519_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n;

describe('signed request refusals (none reaches the ledger)', () => {
  it('accepts the well-formed request these cases spoil', async () => {
    const r = await sendSigned(agent, buildSigned(sandbox.url, clock, 'deposit', { wallet: alice, apiKey: API_KEY, ...deposit }));
    expect(r.status).toBe(200);
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it('401 without the bearer, or with a wrong one', async () => {
    expect(await refused('claim', { apiKey: null })).toEqual({ status: 401, code: 'unauthorized' });
    expect(await refused('claim', { apiKey: 'wrong' })).toEqual({ status: 401, code: 'unauthorized' });
  });

  it('401 when signed by another key', async () => {
    expect(await refused('claim', { signer: mallory })).toEqual({ status: 401, code: 'invalid_signature' });
  });

  it('401 for a signature that is not a signature', async () => {
    expect(await refused('claim', { signature: 'abc' })).toEqual({ status: 401, code: 'invalid_signature' });
    expect(await refused('claim', { signature: '0OIl' })).toEqual({ status: 401, code: 'invalid_signature' });
  });

  it('401 when the signed amount differs from the body amount', async () => {
    expect(await refused('deposit', { symbol: 'SOL2X', amount: '1.5', signedAmount: '1.4' })).toEqual({ status: 401, code: 'invalid_signature' });
  });

  it('400 for a timestamp outside the window, either side', async () => {
    const now = Math.floor(clock.now() / 1000);
    expect(await refused('claim', { ts: now - 301 })).toEqual({ status: 400, code: 'stale_timestamp' });
    expect(await refused('claim', { ts: now + 301 })).toEqual({ status: 400, code: 'stale_timestamp' });
    expect(await refused('claim', { headers: { 'x-svc-ts': `${now}.5` } })).toEqual({ status: 400, code: 'invalid_timestamp' });
  });

  it('accepts a timestamp at the edge of the window', async () => {
    const r = await sendSigned(agent, buildSigned(sandbox.url, clock, 'claim', { wallet: alice, apiKey: API_KEY, ts: Math.floor(clock.now() / 1000) - 300 }));
    expect(r.status).toBe(200);
  });

  it('400 when the wallet header differs from the body wallet, or is missing', async () => {
    expect(await refused('claim', { headerWallet: mallory.address })).toEqual({ status: 400, code: 'wallet_mismatch' });
    expect(await refused('claim', { headerWallet: '' })).toEqual({ status: 400, code: 'wallet_mismatch' });
  });

  it.each([
    ['trailing zero', '1.50'],
    ['exponent', '1e-9'],
    ['zero fraction', '2.0'],
    ['upper-case exponent', '15E-1'],
    ['ten fractional digits', '0.0000000001'],
    ['negative', '-1'],
  ])('400 for a non-canonical amount (%s: %s), even when that exact text was signed', async (_name, amount) => {
    expect(await refused('deposit', { symbol: 'SOL2X', amount })).toEqual({ status: 400, code: 'invalid_amount' });
  });

  it('400 for an amount sent as a string', async () => {
    expect(await refused('deposit', { symbol: 'SOL2X', amount: '"1.5"', signedAmount: '1.5' })).toEqual({ status: 400, code: 'invalid_amount' });
  });

  it('400 for a malformed body, a missing field, or a duplicated key', async () => {
    expect(await refused('claim', { body: '{"wallet":' })).toEqual({ status: 400, code: 'malformed_body' });
    expect(await refused('claim', { body: '[]' })).toEqual({ status: 400, code: 'invalid_body' });
    expect(await refused('deposit', { body: `{"wallet":"${alice.address}","signature":"x","amount":1}` })).toEqual({ status: 400, code: 'invalid_body' });
    const b = buildSigned(sandbox.url, clock, 'deposit', { wallet: alice, apiKey: API_KEY, ...deposit });
    const twice = b.body.replace('"amount":1.5,', '"amount":1.5,"amount":150,');
    expect(await refused('deposit', { ...deposit, body: twice })).toEqual({ status: 400, code: 'malformed_body' });
  });

  it('415 for a body that is not declared JSON', async () => {
    expect(await refused('claim', { headers: { 'content-type': 'text/plain' } })).toEqual({ status: 415, code: 'unsupported_media_type' });
  });

  it('404 for an unknown symbol', async () => {
    expect(await refused('deposit', { symbol: 'DOGE', amount: '1' })).toEqual({ status: 404, code: 'unknown_symbol' });
    expect(await refused('mint', { symbol: 'DOGE', amount: '1' })).toEqual({ status: 404, code: 'unknown_symbol' });
  });

  it('422 for more than the balance', async () => {
    expect(await refused('deposit', { symbol: 'SOL2X', amount: '5.000000001' })).toEqual({ status: 422, code: 'insufficient_balance' });
    expect(sandbox.world.wallet(alice.address)?.balanceLamports).toBe(5_000_000_000n);
  });
});

describe('replay', () => {
  it('applies a signed request once and refuses the same signature with 409', async () => {
    const req = buildSigned(sandbox.url, clock, 'deposit', { wallet: alice, apiKey: API_KEY, ...deposit });
    expect((await sendSigned(agent, req)).status).toBe(200);
    const again = await sendSigned(agent, req);
    expect(again.status).toBe(409);
    expect(errorCode(again.json)).toBe('replayed_signature');
    expect(sandbox.ledger()).toHaveLength(1);
    expect(sandbox.world.wallet(alice.address)?.balanceLamports).toBe(3_500_000_000n);
  });

  it('does not burn a signature that was refused before applying', async () => {
    const req = buildSigned(sandbox.url, clock, 'deposit', { wallet: alice, apiKey: API_KEY, symbol: 'SOL2X', amount: '6' });
    expect((await sendSigned(agent, req)).status).toBe(422);
    sandbox.world.setWallet(alice.address, { balanceLamports: 10_000_000_000n });
    expect((await sendSigned(agent, req)).status).toBe(200);
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it('refuses the same signature with L added to its S (RFC 8032: S must be below L), so no replay passes as new', async () => {
    const req = buildSigned(sandbox.url, clock, 'deposit', { wallet: alice, apiKey: API_KEY, ...deposit });
    expect((await sendSigned(agent, req)).status).toBe(200);
    // tweetnacl verifies S + L as it verifies S: the same signature in other bytes, another replay key.
    const sig = bs58.decode(req.signature);
    let s = 0n;
    for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i] ?? 0);
    s += ED25519_ORDER;
    for (let i = 32; i < 64; i++, s >>= 8n) sig[i] = Number(s & 0xffn);
    const malleated = bs58.encode(sig);
    const again = await sendSigned(agent, { ...req, body: req.body.replace(req.signature, malleated) });
    expect(again.status).toBe(401);
    expect(errorCode(again.json)).toBe('invalid_signature');
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it('with replays: apply, the same signature is applied again, as by a service without replay protection (SPEC §6 documents none)', async () => {
    await sandbox.close();
    sandbox = await startSandbox({
      clock,
      apiKey: API_KEY,
      replays: 'apply',
      wallets: [{ address: alice.address, balanceLamports: 5_000_000_000n, accrualLamportsPerSec: 0n }],
    });
    const req = buildSigned(sandbox.url, clock, 'deposit', { wallet: alice, apiKey: API_KEY, ...deposit });
    expect((await sendSigned(agent, req)).status).toBe(200);
    expect((await sendSigned(agent, req)).status).toBe(200);
    expect(sandbox.ledger().map((e) => e.signature)).toEqual([req.signature, req.signature]);
    expect(sandbox.world.wallet(alice.address)?.balanceLamports).toBe(2_000_000_000n);
  });

  it('a new signature for the same action is a new action', async () => {
    const first = buildSigned(sandbox.url, clock, 'deposit', { wallet: alice, apiKey: API_KEY, ...deposit });
    expect((await sendSigned(agent, first)).status).toBe(200);
    clock.advance(1000);
    const second = buildSigned(sandbox.url, clock, 'deposit', { wallet: alice, apiKey: API_KEY, ...deposit });
    expect(second.signature).not.toBe(first.signature);
    expect((await sendSigned(agent, second)).status).toBe(200);
    expect(sandbox.ledger().map((e) => e.seq)).toEqual([1, 2]);
  });
});
