// Transport failures on real loopback sockets: refused, DNS, connect timeout, a reset after the
// request was written, a server that never answers, a stalled body, an oversized body. Each must
// land in the right disposition, since that decides whether money may move twice.
import net from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createDispatcher, type ApiClient } from '../../src/api/client.js';
import { ApiDispatcher } from '../../src/api/dispatcher.js';
import { generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import type { ApiConfig } from '../../src/domain.js';
import { closedPort } from '../support/net.js';
import { apiConfig, apiError } from './helpers.js';
import { loopback, loopbackClient, onStop, stopAll } from './loopback.js';

const kp = generateKeypair();
const signer = signerFromSeed(kp.secretKey64.slice(0, 32));
const WALLET = kp.address;

afterEach(stopAll);

/** A raw TCP server, for misbehaviour HTTP servers cannot express. */
async function tcpServer(onData: (socket: net.Socket) => void) {
  let requests = 0;
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('data', () => {
      requests += 1;
      onData(socket);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onStop(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  const { port } = srv.address() as net.AddressInfo;
  return { base: `http://127.0.0.1:${port}/v1`, requests: () => requests };
}

/** Short deadlines: every case here ends in a failure, and none should wait long for it. */
function client(base: string, over: Partial<ApiConfig> = {}, dispatcher?: Dispatcher): ApiClient {
  return loopbackClient(base, { timeoutMs: 400, connectTimeoutMs: 300, ...over }, { apiKey: 'test-api-key-000000', ...(dispatcher ? { dispatcher } : {}) });
}

const claim = (api: ApiClient) => api.prepare({ op: 'claim', wallet: WALLET }, signer, Date.now());
const deposit = (api: ApiClient) =>
  api.prepare({ op: 'deposit', wallet: WALLET, symbol: 'SOL2X', amount: 123_456_789_012n }, signer, Date.now());

describe('not_sent: the request provably never reached a server', () => {
  it('connection refused: one-line message naming method and URL; a signed request is re-sent', async () => {
    const port = await closedPort();
    const base = `http://127.0.0.1:${port}/v1`;
    const api = client(base, { readAttempts: 1 });
    const err = await apiError(api.walletSummary(WALLET));
    expect(err).toMatchObject({ disposition: 'not_sent', code: 'UNREACHABLE', method: 'GET' });
    expect(err.message).toBe(`GET ${base}/rewards/wallet/${WALLET} : connection refused`);

    const retrying = client(base, { readAttempts: 3 });
    const sendErr = await apiError(retrying.send(claim(retrying)));
    expect(sendErr.disposition).toBe('not_sent');
    expect(retrying.stats.requests).toBe(3);
  });

  it('DNS failure (ENOTFOUND, EAI_AGAIN)', async () => {
    for (const code of ['ENOTFOUND', 'EAI_AGAIN']) {
      const lookup: net.LookupFunction = (host, _opts, cb) =>
        cb(Object.assign(new Error(`getaddrinfo ${code} ${host}`), { code, syscall: 'getaddrinfo', hostname: host }), '');
      const agent = new Agent({ connect: { lookup } });
      const api = client('http://api.invalid:8080/v1', { readAttempts: 1 }, agent);
      const err = await apiError(api.health());
      expect(err.disposition, code).toBe('not_sent');
      expect(err.message).toMatch(/^GET http:\/\/api\.invalid:8080\/v1\/health : .*DNS/);
    }
  });

  it('connect timeout', async () => {
    // A lookup that never answers keeps the socket connecting until undici's connect timeout
    // (its timers tick about once a second), well inside the request's own deadline.
    const agent = new Agent({ connect: { timeout: 100, lookup: () => undefined } });
    const api = client('http://hangs.invalid:8080/v1', { readAttempts: 1, timeoutMs: 5_000 }, agent);
    const err = await apiError(api.send(claim(api)));
    expect(err).toMatchObject({ disposition: 'not_sent', code: 'UNREACHABLE' });
    expect(err.message).toBe('POST http://hangs.invalid:8080/v1/rewards/claim : connect timeout');
  });
});

describe('ambiguous: the request may have been applied', () => {
  it('the server reads the whole body, then destroys the socket: never re-sent', async () => {
    const srv = await loopback((req) => req.socket.destroy());
    const api = client(srv.base, { readAttempts: 3 });
    const p = deposit(api);
    const err = await apiError(api.send(p));
    expect(err).toMatchObject({ disposition: 'ambiguous', code: 'CONNECTION_LOST' });
    expect(srv.received).toHaveLength(1);
    // what arrived is byte-for-byte what was prepared and signed
    const got = srv.received[0];
    expect(got?.body).toBe(p.body);
    expect(got?.body).toContain('"amount":123.456789012,');
    expect(got?.headers).toMatchObject({
      authorization: 'Bearer test-api-key-000000',
      'content-type': 'application/json',
      'x-svc-ts': String(p.ts),
      'x-svc-wallet': WALLET,
    });
    expect(got?.url).toBe('/v1/actions/deposit');
  });

  it('a reset (RST) after the request was written', async () => {
    const srv = await tcpServer((socket) => socket.resetAndDestroy());
    const api = client(srv.base, { readAttempts: 3 });
    const err = await apiError(api.send(claim(api)));
    expect(err.disposition).toBe('ambiguous');
    expect(srv.requests()).toBe(1);
  });

  it('a server that never answers: headers timeout', async () => {
    const srv = await loopback(() => undefined);
    const api = client(srv.base, { readAttempts: 3, timeoutMs: 300 });
    const err = await apiError(api.send(claim(api)));
    expect(err).toMatchObject({ disposition: 'ambiguous', code: 'TIMEOUT' });
    expect(err.message).toContain('timed out waiting for the response headers');
    expect(srv.received).toHaveLength(1);
  });

  it('a body that stalls: body timeout; a read retries it', async () => {
    const srv = await loopback((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"address":');
    });
    const api = client(srv.base, { readAttempts: 2, timeoutMs: 300 });
    const err = await apiError(api.walletSummary(WALLET));
    expect(err).toMatchObject({ disposition: 'ambiguous', code: 'TIMEOUT', status: 200 });
    expect(srv.received).toHaveLength(2);
  });

  it('a 5xx is ambiguous and a signed request is not re-sent', async () => {
    const srv = await loopback((_req, res) => res.writeHead(500).end('{"error":"boom"}'));
    const api = client(srv.base, { readAttempts: 3 });
    const err = await apiError(api.send(claim(api)));
    expect(err).toMatchObject({ disposition: 'ambiguous', code: 'SERVER_ERROR', status: 500, rawBody: '{"error":"boom"}' });
    expect(srv.received).toHaveLength(1);
  });
});

describe('over real HTTP', () => {
  it('stops reading a body larger than max_response_bytes', async () => {
    const srv = await loopback((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length to check up front
      for (let i = 0; i < 20; i += 1) res.write('x'.repeat(1_000));
      res.end();
    });
    const api = client(srv.base, { maxResponseBytes: 4_096 });
    const err = await apiError(api.walletSummary(WALLET));
    expect(err).toMatchObject({ code: 'RESPONSE_TOO_LARGE', disposition: 'invalid_response', status: 200 });
  });

  it('a good answer round-trips, with the server date recorded', async () => {
    const srv = await loopback((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"address":"${WALLET}","epoch":"2025-06-01","pending_sol":0.5}`);
    });
    const api = client(srv.base);
    const s = await api.walletSummary(WALLET);
    expect(s.pendingLamports).toBe(500_000_000n);
    expect(api.lastServerDateMs).toBeTypeOf('number');
    expect(srv.received[0]?.headers['authorization']).toBe('Bearer test-api-key-000000');
  });
});

describe('what a body under max_response_bytes costs to read', () => {
  setFlagsFromString('--expose_gc');
  const gc = runInNewContext('gc') as () => void;
  /** ArrayBuffer and heap bytes alive now, after a full collection: what something still holds. */
  const held = () => {
    gc();
    gc();
    const { arrayBuffers, heapUsed } = process.memoryUsage();
    return { arrayBuffers, heapUsed };
  };

  /**
   * A chunked 200 whose body comes a byte per chunk, each chunk carrying `pad` bytes of chunk
   * extension; the body stays far under the cap and is ended (not JSON) only when the test says.
   */
  async function bytePerChunk(bytes: number, pad: number) {
    let finish = () => undefined as void;
    const srv = await tcpServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n');
      const chunk = `1${pad > 0 ? `;p=${'a'.repeat(pad)}` : ''}\r\nx\r\n`;
      socket.write(chunk.repeat(bytes));
      finish = () => void socket.end('0\r\n\r\n');
    });
    let read = 0;
    let allRead = () => undefined as void;
    const inFlight = new Promise<void>((r) => (allRead = r));
    // Passes every callback on to the client's own handler and counts the body bytes parsed, so the
    // test measures while the answer is still being read, holding no chunk itself.
    const over = { timeoutMs: 20_000, maxResponseBytes: 1 << 20, readAttempts: 1 };
    const pool = createDispatcher(apiConfig({ baseUrl: srv.base, ...over }));
    const dispatcher = {
      dispatch: (opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) =>
        pool.dispatch(opts, {
          onRequestStart: (c, ctx) => handler.onRequestStart?.(c, ctx),
          onResponseStart: (c, status, headers, text) => handler.onResponseStart?.(c, status, headers, text),
          onResponseData: (c, chunk) => {
            handler.onResponseData?.(c, chunk);
            read += chunk.length;
            if (read === bytes) allRead();
          },
          onResponseEnd: (c, trailers) => handler.onResponseEnd?.(c, trailers),
          onResponseError: (c, err) => handler.onResponseError?.(c, err),
        }),
      destroy: () => pool.destroy(),
    } as unknown as Dispatcher;
    const api = loopbackClient(srv.base, over, { dispatcher });
    return { api, inFlight, finish: () => finish() };
  }

  it('a body sent a byte per chunk, each chunk padded, holds about its bytes, not the wire it came on', async () => {
    // 2,000 body bytes (the cap is 1 MiB) on 32 MB of wire: each chunk undici hands over is a view
    // of the whole socket read it was parsed from, and was kept as it came.
    const { api, inFlight, finish } = await bytePerChunk(2_000, 16_000);
    const before = held();
    const poll = apiError(api.walletSummary(WALLET));
    await inFlight;
    const during = held();
    finish();
    expect((await poll).code).toBe('BAD_RESPONSE');
    expect(during.arrayBuffers - before.arrayBuffers).toBeLessThan(4 << 20);
  });

  it('a body sent a byte per chunk holds no object per byte', async () => {
    // 300,000 body bytes, under the 1 MiB cap: one Buffer object (~100 bytes of heap) each, as kept.
    const { api, inFlight, finish } = await bytePerChunk(300_000, 0);
    const before = held();
    const poll = apiError(api.walletSummary(WALLET));
    await inFlight;
    const during = held();
    finish();
    expect((await poll).code).toBe('BAD_RESPONSE');
    expect(during.heapUsed - before.heapUsed).toBeLessThan(8 << 20);
  });

  // undici's parser hands each header over as a view of the socket read it came in and keeps it
  // until the headers end, and counts against its 16 KiB header cap only the bytes of names and
  // values: the spaces a server may put before a value are skipped uncounted. So 2,000 headers
  // `aN:<60,000 spaces>b` pass the cap (~12 KB counted) and hold ~115 MB of socket reads until the
  // deadline, per connection (16 by default); up to the cap, ~3,000 headers, about 200 MB each.
  // Nothing the client does with the answer sees them before then: the fix is undici's (copy what
  // it keeps of a header, or count the whole line), to be taken by an upgrade; a lower
  // maxHeaderSize only scales it down. Kept failing until then.
  it.fails('headers under the cap hold about their bytes, not the padding they came with (undici)', async () => {
    const headers = 2_000;
    const line = (i: number) => `a${i}:${' '.repeat(60_000)}b\r\n`;
    const wire = 'HTTP/1.1 200 OK\r\n'.length + Array.from({ length: headers }, (_, i) => line(i).length).reduce((a, b) => a + b, 0);
    const srv = await tcpServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\n');
      for (let i = 0; i < headers; i += 1) socket.write(line(i));
    });
    // The connection's socket, to wait until every byte sent was read (no header callback comes).
    let socket: net.Socket | undefined;
    const connect = buildConnector({ timeout: 1_000 });
    const over = { timeoutMs: 20_000, readAttempts: 1 };
    const dispatcher = new ApiDispatcher({
      connect: (opts, cb) =>
        connect(opts, (...args) => {
          if (args[0] === null) socket = args[1];
          cb(...args);
        }),
      headersTimeout: over.timeoutMs,
      bodyTimeout: over.timeoutMs,
    });
    const api = loopbackClient(srv.base, over, { dispatcher });
    const before = held();
    const poll = apiError(api.walletSummary(WALLET));
    while ((socket?.bytesRead ?? 0) < wire) await new Promise((r) => setImmediate(r));
    const during = held();
    await dispatcher.destroy();
    expect((await poll).disposition).toBe('ambiguous');
    expect(during.arrayBuffers - before.arrayBuffers).toBeLessThan(4 << 20);
  });
});
