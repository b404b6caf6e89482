// Every request has one deadline, api.timeout_ms, for all of it: connect, headers and the whole
// body (issue 11, item 6). undici's own timeouts bound only idle time, so a body trickled in a byte
// every 100 ms (never idle for 300 ms) used to hang a poll forever; without the deadline these
// tests hang until vitest's own timeout fails them.
import net from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Deadline, DeadlineExceeded } from '../../src/api/deadline.js';
import { generateKeypair, signerFromSeed } from '../../src/api/signer.js';
import { systemClock, type WalletConfig } from '../../src/domain.js';
import { runWalletCycle, type CycleDeps } from '../../src/worker/wallet-cycle.js';
import { captureLog } from '../support/log.js';
import { apiError } from './helpers.js';
import { drip, loopback, loopbackClient, stopAll } from './loopback.js';

afterEach(async () => {
  vi.useRealTimers();
  await stopAll();
});

const kp = generateKeypair();
const signer = signerFromSeed(kp.secretKey64.slice(0, 32));
const SLOW = kp.address;
const FAST = generateKeypair().address;
const summary = (address: string) => `{"address":"${address}","epoch":"2025-06-01","pending_sol":0.5,"lifetime_sol":"2","padding":"${'.'.repeat(80)}"}`;

/** Drips the summary of SLOW and every claim's answer; answers FAST's summary and /health at once. */
async function server() {
  return loopback((req, res) => {
    if (req.url === `/v1/rewards/wallet/${SLOW}`) return drip(res, summary(SLOW), 100);
    if (req.url === '/v1/rewards/claim') return drip(res, '{"status":"success","claimed_sol":0.5,"tx":"t1"}', 100);
    if (req.url === `/v1/rewards/wallet/${FAST}`) return void res.writeHead(200, { 'content-type': 'application/json' }).end(summary(FAST));
    res.writeHead(204).end();
  });
}

describe('one deadline for the whole request', () => {
  it('a summary trickled one byte every 100 ms fails with TIMEOUT under timeout_ms 300; the next read works', async () => {
    const srv = await server();
    // One connection: if the trickling socket were left open, the next request would queue behind it.
    const api = loopbackClient(srv.base, { timeoutMs: 300, readAttempts: 1, connections: 1 });
    const err = await apiError(api.walletSummary(SLOW));
    expect(err).toMatchObject({ code: 'TIMEOUT', disposition: 'ambiguous', status: 200, method: 'GET' });
    expect(err.message).toBe(`GET ${srv.base}/rewards/wallet/${SLOW} : timed out reading the response body (HTTP 200; deadline 300 ms)`);
    const ok = await api.walletSummary(FAST);
    expect(ok.pendingLamports).toBe(500_000_000n);
    await api.health();
  });

  it('a read retries a missed deadline like any other ambiguous failure, each attempt bounded', async () => {
    const srv = await server();
    const api = loopbackClient(srv.base, { timeoutMs: 300, readAttempts: 2 });
    expect((await apiError(api.walletSummary(SLOW))).code).toBe('TIMEOUT');
    expect(srv.received.filter((r) => r.url === `/v1/rewards/wallet/${SLOW}`)).toHaveLength(2);
  });

  it('a signed request whose answer trickles is ambiguous TIMEOUT, never re-sent; the client is not wedged', async () => {
    const srv = await server();
    const api = loopbackClient(srv.base, { timeoutMs: 300, readAttempts: 3, connections: 1 });
    const err = await apiError(api.send(api.prepare({ op: 'claim', wallet: SLOW }, signer, Date.now())));
    expect(err).toMatchObject({ code: 'TIMEOUT', disposition: 'ambiguous', status: 200, method: 'POST' });
    expect(srv.received.filter((r) => r.url === '/v1/rewards/claim')).toHaveLength(1);
    expect((await api.walletSummary(FAST)).address).toBe(FAST);
  });

  it('headers trickled in a byte at a time: ambiguous TIMEOUT with no status', async () => {
    const sockets = new Set<net.Socket>();
    const tcp = net.createServer((socket) => {
      sockets.add(socket);
      socket.once('data', () => {
        const head = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-padding: ' + '.'.repeat(200);
        let i = 0;
        const timer = setInterval(() => (i < head.length ? socket.write(head.charAt(i++)) : clearInterval(timer)), 100);
        socket.on('close', () => clearInterval(timer));
        socket.on('error', () => clearInterval(timer));
      });
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    const { port } = tcp.address() as net.AddressInfo;
    try {
      const api = loopbackClient(`http://127.0.0.1:${port}/v1`, { timeoutMs: 300, readAttempts: 3 });
      const err = await apiError(api.send(api.prepare({ op: 'claim', wallet: SLOW }, signer, Date.now())));
      expect(err).toMatchObject({ code: 'TIMEOUT', disposition: 'ambiguous', status: undefined });
      expect(api.stats.requests).toBe(1); // ambiguous: never re-sent
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => tcp.close(() => r()));
    }
  });

  it('a deadline that passes before any connection is up is provably not_sent: a signed request is re-sent', async () => {
    // A lookup that never answers: the socket never connects, and undici's own connect timeout
    // (10 s here) is far off. The request was never started on a connection, so never written.
    const agent = new Agent({ connect: { timeout: 10_000, lookup: () => undefined } });
    const api = loopbackClient('http://hangs.invalid:8080/v1', { timeoutMs: 300, readAttempts: 3 }, { dispatcher: agent });
    const err = await apiError(api.send(api.prepare({ op: 'claim', wallet: SLOW }, signer, Date.now())));
    expect(err).toMatchObject({ code: 'TIMEOUT', disposition: 'not_sent', status: undefined });
    expect(err.message).toBe('POST http://hangs.invalid:8080/v1/rewards/claim : timed out before the request was sent (no connection within the 300 ms deadline)');
    expect(api.stats.requests).toBe(3);
  });

  it('the wallet cycle logs poll.failed with TIMEOUT, and the next cycle polls again', async () => {
    const srv = await server();
    const api = loopbackClient(srv.base, { timeoutMs: 300, readAttempts: 1, connections: 1 });
    const log = captureLog('debug');
    const polls: Array<{ ok: boolean; error?: string }> = [];
    const wallet = { name: 'slow', address: SLOW } as WalletConfig;
    // Only what a failed poll touches: the poll record. Nothing else may be reached.
    const deps = {
      api,
      store: { recordPoll: (...args: unknown[]) => void polls.push(args.at(-1) as { ok: boolean; error?: string }) },
      executor: undefined,
      config: () => ({ rules: [], safety: {} }),
      clock: systemClock,
      logger: log.logger,
      failpoint: () => undefined,
      dry: true,
    } as unknown as CycleDeps;
    for (let cycle = 0; cycle < 2; cycle += 1) {
      const result = await runWalletCycle(deps, wallet);
      expect(result.polled).toBe(false);
    }
    const failed = log.lines.filter((l) => l.event === 'poll.failed');
    expect(failed).toHaveLength(2);
    for (const l of failed) expect(String(l.err)).toMatch(/^TIMEOUT: GET /);
    expect(polls.map((p) => p.ok)).toEqual([false, false]);
    expect(srv.received.filter((r) => r.url === `/v1/rewards/wallet/${SLOW}`)).toHaveLength(2);
  });
});

describe('Deadline', () => {
  it('rejects a race with DeadlineExceeded and aborts its signal when the time is up', async () => {
    vi.useFakeTimers();
    const d = new Deadline(300);
    const never = d.race(new Promise<never>(() => undefined));
    const seen = never.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(299);
    expect(d.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const err = await seen;
    expect(err).toBeInstanceOf(DeadlineExceeded);
    expect(err).toMatchObject({ ms: 300, mayHaveBeenWritten: false });
    expect(d.signal.reason).toBe(err);
    expect(d.exceeded).toBe(err);
  });

  it('once cleared, never fires', async () => {
    vi.useFakeTimers();
    const d = new Deadline(300);
    await expect(d.race(Promise.resolve('done'))).resolves.toBe('done');
    d.clear();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(d.signal.aborted).toBe(false);
    expect(d.exceeded).toBeUndefined();
  });

  it('never keeps the process alive: its timer is unreferenced', () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const d = new Deadline(60_000);
    expect(timers()).toBe(before);
    d.clear();
  });
});
