// Every request has one deadline, api.timeout_ms, for all of it: connect, headers and the whole
// body (issue 11, item 6). undici's own timeouts bound only idle time, so a body trickled in a byte
// every 100 ms (never idle for 300 ms) used to hang a poll forever; without the deadline these
// tests hang until vitest's own timeout fails them.
import net from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeadlineExceeded } from '../../src/api/deadline.js';
import { BodyTooLarge, exchange } from '../../src/api/exchange.js';
import { generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import { systemClock, type WalletConfig } from '../../src/domain.js';
import { runWalletCycle, type CycleDeps } from '../../src/executor/wallet-cycle.js';
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

/** A dispatcher the test drives by hand: it keeps the handler and a controller that records aborts. */
function handDispatcher() {
  const aborted: Error[] = [];
  const controller = { aborted: false, paused: false, reason: null, abort: (e: Error) => void aborted.push(e), pause: () => undefined, resume: () => undefined };
  let handler: Dispatcher.DispatchHandler | undefined;
  const dispatcher = { dispatch: (_opts: unknown, h: Dispatcher.DispatchHandler) => ((handler = h), true) } as unknown as Dispatcher;
  const h = () => {
    if (handler === undefined) throw new Error('nothing dispatched');
    return handler;
  };
  return { dispatcher, aborted, controller: controller as unknown as Dispatcher.DispatchController, h };
}

const OPTS = { origin: 'http://127.0.0.1:1', path: '/', method: 'GET' } as const;

describe('exchange: one deadline and one size cap per request', () => {
  it('a deadline passed before undici started the request: unsent, and aborted when it starts', async () => {
    vi.useFakeTimers();
    const d = handDispatcher();
    const { answer } = exchange(d.dispatcher, OPTS, { timeoutMs: 300, max: 1000 });
    const seen = answer.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(299);
    d.h().onRequestStart?.(d.controller, {});
    // Started at 299 ms: from here on it may have been written.
    await vi.advanceTimersByTimeAsync(1);
    const err = await seen;
    expect(err).toBeInstanceOf(DeadlineExceeded);
    expect(err).toMatchObject({ ms: 300, mayHaveBeenWritten: true });
    expect(d.aborted).toEqual([err]);

    const late = handDispatcher();
    const second = exchange(late.dispatcher, OPTS, { timeoutMs: 300, max: 1000 }).answer.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(300);
    expect(await second).toMatchObject({ ms: 300, mayHaveBeenWritten: false });
    // The connection comes up after the deadline: the request is dropped there, unwritten.
    late.h().onRequestStart?.(late.controller, {});
    expect(late.aborted).toEqual([await second]);
  });

  it('an answer read whole clears its deadline: it never fires', async () => {
    vi.useFakeTimers();
    const d = handDispatcher();
    const statuses: number[] = [];
    const { answer, statusSoFar } = exchange(d.dispatcher, OPTS, { timeoutMs: 300, max: 1000, onStatus: (s) => statuses.push(s) });
    const h = d.h();
    h.onRequestStart?.(d.controller, {});
    h.onResponseStart?.(d.controller, 100, {}, 'Continue');
    h.onResponseStart?.(d.controller, 200, { 'content-type': 'application/json' }, 'OK');
    h.onResponseData?.(d.controller, Buffer.from('{"a":'));
    h.onResponseData?.(d.controller, Buffer.from('1}'));
    h.onResponseEnd?.(d.controller, {});
    const res = await answer;
    expect({ status: res.status, body: res.body.toString(), statusSoFar: statusSoFar(), statuses }).toEqual({ status: 200, body: '{"a":1}', statusSoFar: 200, statuses: [200] });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(d.aborted).toEqual([]);
  });

  it('a body over the cap, by its content-length or as it comes, is refused with what came of it', async () => {
    const declared = handDispatcher();
    const first = exchange(declared.dispatcher, OPTS, { timeoutMs: 300, max: 10 }).answer.catch((e: unknown) => e);
    declared.h().onRequestStart?.(declared.controller, {});
    declared.h().onResponseStart?.(declared.controller, 200, { 'content-length': '11' }, 'OK');
    expect(await first).toMatchObject({ name: 'BodyTooLarge', partial: [] });
    expect(declared.aborted).toHaveLength(1);

    const chunked = handDispatcher();
    const second = exchange(chunked.dispatcher, OPTS, { timeoutMs: 300, max: 10 }).answer.catch((e: unknown) => e);
    chunked.h().onRequestStart?.(chunked.controller, {});
    chunked.h().onResponseStart?.(chunked.controller, 200, {}, 'OK');
    chunked.h().onResponseData?.(chunked.controller, Buffer.from('123456'));
    chunked.h().onResponseData?.(chunked.controller, Buffer.from('7890X'));
    const err = await second;
    expect(err).toBeInstanceOf(BodyTooLarge);
    expect(Buffer.concat((err as BodyTooLarge).partial).toString()).toBe('1234567890X');
    expect(chunked.aborted).toEqual([err]);
  });

  it("undici's own size cap is ours once a status came, and stays undici's error before one", async () => {
    const capped = () => Object.assign(new Error('Response content exceeded max size'), { code: 'UND_ERR_RES_EXCEEDED_MAX_SIZE' });
    const early = handDispatcher();
    const before = exchange(early.dispatcher, OPTS, { timeoutMs: 300, max: 10 }).answer.catch((e: unknown) => e);
    early.h().onResponseError?.(early.controller, capped());
    expect(await before).toMatchObject({ code: 'UND_ERR_RES_EXCEEDED_MAX_SIZE' });

    const late = handDispatcher();
    const after = exchange(late.dispatcher, OPTS, { timeoutMs: 300, max: 10 }).answer.catch((e: unknown) => e);
    late.h().onResponseStart?.(late.controller, 200, {}, 'OK');
    late.h().onResponseData?.(late.controller, Buffer.from('12345'));
    late.h().onResponseError?.(late.controller, capped());
    const err = await after;
    expect(err).toBeInstanceOf(BodyTooLarge);
    expect(Buffer.concat((err as BodyTooLarge).partial).toString()).toBe('12345');
  });

  it('never keeps the process alive: its timer is unreferenced', () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const d = handDispatcher();
    const { answer } = exchange(d.dispatcher, OPTS, { timeoutMs: 60_000, max: 10 });
    expect(timers()).toBe(before);
    d.h().onResponseError?.(d.controller, new Error('gone'));
    return expect(answer).rejects.toThrow('gone');
  });
});
