// Each fault does what it says to the socket, and the ledger tells whether the action was applied.
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startSandbox, type FaultSpec, type Sandbox } from '../../src/sandbox/server.js';
import { FakeClock } from '../support/clock.js';
import { buildSigned, errorCode, send, sendSigned, testAgent, testWallet } from './helpers.js';

const alice = testWallet('alice');
const bob = testWallet('bob');
const agent = testAgent();
afterAll(() => agent.close());

let sandbox: Sandbox;
let clock: FakeClock;

beforeEach(async () => {
  clock = new FakeClock(Date.UTC(2025, 4, 4, 4, 4, 4));
  sandbox = await startSandbox({
    clock,
    defaultAccrualLamportsPerSec: 0n,
    wallets: [
      { address: alice.address, pendingLamports: 1_000_000_000n, balanceLamports: 1_000_000_000n },
      { address: bob.address, pendingLamports: 1_000_000_000n },
    ],
  });
});
afterEach(async () => {
  await sandbox.close();
});

const claim = (wallet = alice) => buildSigned(sandbox.url, clock, 'claim', { wallet });
const summaryUrl = () => `${sandbox.url}/rewards/wallet/${alice.address}`;
const fault = (spec: FaultSpec) => sandbox.addFault(spec);
/** undici's error code (UND_ERR_*) or the socket's errno code. */
async function failure(p: Promise<unknown>): Promise<string> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the request should have failed').toBeInstanceOf(Error);
  return String((err as { code?: unknown }).code);
}

describe('faults before applying', () => {
  it('status5xx_before answers 503 (or the given status) and applies nothing', async () => {
    fault({ match: { op: 'claim' }, kind: 'status5xx_before' });
    fault({ match: { op: 'claim' }, kind: 'status5xx_before', status: 500 });
    const req = claim();
    expect((await sendSigned(agent, req)).status).toBe(503);
    expect((await sendSigned(agent, req)).status).toBe(500);
    expect(sandbox.ledger()).toEqual([]);
    // the same signed request goes through once the fault is spent: it was never applied
    expect((await sendSigned(agent, req)).status).toBe(200);
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it('rate_limit answers 429 with Retry-After when given, without when not', async () => {
    fault({ match: { op: 'summary' }, kind: 'rate_limit', retryAfterSec: 7 });
    fault({ match: { op: 'summary' }, kind: 'rate_limit' });
    const first = await send(agent, summaryUrl());
    expect(first.status).toBe(429);
    expect(first.headers['retry-after']).toBe('7');
    expect(errorCode(first.json)).toBe('rate_limited');
    const second = await send(agent, summaryUrl());
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBeUndefined();
    expect((await send(agent, summaryUrl())).status).toBe(200);
    expect(sandbox.stats()).toMatchObject({ served429: 2, limiter429: 0 });
  });

  it('reset_before destroys the socket and applies nothing', async () => {
    fault({ match: { op: 'claim' }, kind: 'reset_before' });
    const code = await failure(sendSigned(agent, claim()));
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(code);
    expect(sandbox.ledger()).toEqual([]);
    expect(sandbox.world.wallet(alice.address)?.pendingLamports).toBe(1_000_000_000n);
  });

  it('latency delays the answer; a client that gives up still had its request applied', async () => {
    fault({ match: { op: 'claim' }, kind: 'latency', ms: 2_000 });
    const code = await failure(sendSigned(agent, claim(), { headersTimeout: 100 }));
    expect(code).toBe('UND_ERR_HEADERS_TIMEOUT');
    await vi.waitFor(() => expect(sandbox.ledger()).toHaveLength(1), { timeout: 5_000 });
  });

  it('latency then answers normally', async () => {
    fault({ match: { op: 'summary' }, kind: 'latency', ms: 50 });
    const r = await send(agent, summaryUrl());
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ address: alice.address });
  });
});

describe('faults after applying', () => {
  it('apply_then_drop applies, then closes the socket without an answer', async () => {
    fault({ match: { op: 'claim' }, kind: 'apply_then_drop' });
    const req = claim();
    const code = await failure(sendSigned(agent, req));
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(code);
    expect(sandbox.ledger()).toHaveLength(1);
    expect(sandbox.world.wallet(alice.address)?.lifetimeLamports).toBe(1_000_000_000n);
    // resending the very same signed request cannot apply it twice
    expect((await sendSigned(agent, req)).status).toBe(409);
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it('apply_then_5xx applies, then answers 500', async () => {
    fault({ match: { op: 'claim' }, kind: 'apply_then_5xx' });
    const r = await sendSigned(agent, claim());
    expect(r.status).toBe(500);
    expect(errorCode(r.json)).toBe('internal');
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it('apply_then_hang applies and never answers, until the client gives up', async () => {
    fault({ match: { op: 'claim' }, kind: 'apply_then_hang' });
    const code = await failure(sendSigned(agent, claim(), { headersTimeout: 200 }));
    expect(code).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect(sandbox.ledger()).toHaveLength(1);
    expect(sandbox.stats().byOp.claim).toEqual({ hang: 1 });
  });

  it('malformed answers 200 with the raw body, after applying a valid signed request', async () => {
    fault({ match: { op: 'claim' }, kind: 'malformed', body: '{"status":"claimed","claimed_sol":"x"' });
    const r = await sendSigned(agent, claim());
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"status":"claimed","claimed_sol":"x"');
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it('malformed with apply: false applies nothing', async () => {
    fault({ match: { op: 'claim' }, kind: 'malformed', body: '[]', apply: false });
    expect((await sendSigned(agent, claim())).text).toBe('[]');
    expect(sandbox.ledger()).toEqual([]);
  });

  it('malformed serves wrong types on reads', async () => {
    fault({ match: { op: 'summary' }, kind: 'malformed', body: '{"pending_sol":"1.5","epoch":7}' });
    const r = await send(agent, summaryUrl());
    expect(r.json).toEqual({ pending_sol: '1.5', epoch: 7 });
  });

  it('slow_body sends the headers first and the body later', async () => {
    fault({ match: { op: 'summary' }, kind: 'slow_body', ms: 2_000 });
    // headers arrive (status known) but the body does not come within the body timeout
    const code = await failure(send(agent, summaryUrl(), { bodyTimeout: 100 }));
    expect(code).toBe('UND_ERR_BODY_TIMEOUT');
    fault({ match: { op: 'summary' }, kind: 'slow_body', ms: 50 });
    const r = await send(agent, summaryUrl());
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ address: alice.address, pending_sol: 1 });
  });

  it('truncated_body announces more bytes than it sends, then closes', async () => {
    fault({ match: { op: 'claim' }, kind: 'truncated_body' });
    const code = await failure(sendSigned(agent, claim()));
    expect(['UND_ERR_SOCKET', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'ECONNRESET']).toContain(code);
    expect(sandbox.ledger()).toHaveLength(1);
    expect(sandbox.stats().byOp.claim).toEqual({ truncated: 1 });
  });
});

describe('matching and lifetime of faults', () => {
  it('fires only on the matching op and wallet, once by default', async () => {
    fault({ match: { op: 'claim', wallet: bob.address }, kind: 'status5xx_before' });
    expect((await send(agent, `${sandbox.url}/rewards/wallet/${bob.address}`)).status).toBe(200);
    expect((await sendSigned(agent, claim(alice))).status).toBe(200);
    expect((await sendSigned(agent, claim(bob))).status).toBe(503);
    expect((await sendSigned(agent, claim(bob))).status).toBe(200);
    expect(sandbox.faults.list()).toEqual([]);
  });

  it('fires `times` times, on any op when no op is given', async () => {
    fault({ kind: 'status5xx_before', times: 2 });
    expect((await send(agent, `${sandbox.url}/health`)).status).toBe(503);
    expect((await send(agent, summaryUrl())).status).toBe(503);
    expect((await send(agent, summaryUrl())).status).toBe(200);
    expect(sandbox.stats().faultsFired).toBe(2);
  });

  it('clearFaults drops what is queued', async () => {
    fault({ kind: 'reset_before', times: 5 });
    expect(sandbox.clearFaults()).toBe(1);
    expect((await send(agent, summaryUrl())).status).toBe(200);
  });

  it('refuses a fault spec it does not know', () => {
    expect(() => sandbox.addFault({ kind: 'explode' } as unknown as FaultSpec)).toThrow();
    expect(() => sandbox.addFault({ kind: 'latency', ms: 10, typo: 1 } as unknown as FaultSpec)).toThrow();
  });
});

describe('close()', () => {
  it('ends hanging sockets so nobody waits forever', async () => {
    fault({ match: { op: 'claim' }, kind: 'apply_then_hang' });
    const pending = sendSigned(agent, claim()); // no client timeout at all
    await vi.waitFor(() => expect(sandbox.ledger()).toHaveLength(1));
    await sandbox.close();
    const code = await failure(pending);
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(code);
  });

  it('cuts a slow body short', async () => {
    fault({ match: { op: 'summary' }, kind: 'slow_body', ms: 60_000 });
    const res = send(agent, summaryUrl());
    await vi.waitFor(() => expect(sandbox.stats().faultsFired).toBe(1));
    await sandbox.close();
    await failure(res);
  });
});
