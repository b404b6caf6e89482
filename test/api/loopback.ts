// A real HTTP server on 127.0.0.1 (an ephemeral port) and an ApiClient pointed at it, for tests
// that need real sockets: trickled bodies, echoed secrets. Everything started here is stopped by
// the `stopAll` the test file calls in afterEach.
import http from 'node:http';
import type net from 'node:net';
import type { Dispatcher } from 'undici';
import { ApiClient, createDispatcher } from '../../src/api/client.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { systemClock, type ApiConfig } from '../../src/domain.js';
import type { Logger } from '../../src/log/logger.js';
import { silentLogger } from '../../src/log/logger.js';
import { apiConfig } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];

/** Has `stop` run by the next stopAll, after what was registered later (for servers made elsewhere). */
export function onStop(stop: () => Promise<void>): void {
  cleanups.push(stop);
}

/** Stops every server and dispatcher started since the last call. */
export async function stopAll(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c();
}

export interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

/** A server that records each request, then hands it to `handler` once its body is in. */
export async function loopback(handler: Handler): Promise<{ base: string; received: Received[] }> {
  const received: Received[] = [];
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  cleanups.push(async () => {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  const { port } = srv.address() as net.AddressInfo;
  return { base: `http://127.0.0.1:${port}/v1`, received };
}

/**
 * Answers 200 with `text` (its Content-Length announced), written one character every `everyMs`:
 * never idle long enough for an idle timeout, never done. Stops when the socket closes.
 */
export function drip(res: http.ServerResponse, text: string, everyMs: number): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  let i = 0;
  const timer = setInterval(() => {
    if (i >= text.length) {
      clearInterval(timer);
      res.end();
      return;
    }
    res.write(text.charAt(i));
    i += 1;
  }, everyMs);
  res.on('close', () => clearInterval(timer));
}

export interface ClientOptions {
  apiKey?: string;
  logger?: Logger;
  redact?: (text: string) => string;
  dispatcher?: Dispatcher;
}

/** A client for `base` with its own dispatcher (destroyed by stopAll) and no backoff waits. */
export function loopbackClient(base: string, over: Partial<ApiConfig> = {}, opts: ClientOptions = {}): ApiClient {
  const config = apiConfig({ baseUrl: base, timeoutMs: 2_000, connectTimeoutMs: 1_000, ...over });
  const dispatcher = opts.dispatcher ?? createDispatcher(config);
  cleanups.push(() => dispatcher.destroy());
  return new ApiClient({
    config,
    apiKey: opts.apiKey ?? 'loopback-api-key-0123456789',
    dispatcher,
    limiter: new RateLimiter({ perMinute: 0, burst: 1, clock: systemClock }),
    clock: systemClock,
    logger: opts.logger ?? silentLogger(),
    sleep: () => Promise.resolve(),
    ...(opts.redact !== undefined ? { redact: opts.redact } : {}),
  });
}
