// The HTTP connection pool the client is handed (never undici's global dispatcher), with every
// timeout explicit: an API that stops answering must become a classified error, not a hung poll.
import { Dispatcher, errors, Pool } from 'undici';
import type { ApiConfig } from '../domain.js';

/**
 * Requests a connection carries before the client closes it and the next request connects again
 * (undici's maxRequestsPerClient: the request after the hundredth says `connection: close`). A
 * connection never idle — a daemon under steady load — was otherwise never closed by the client,
 * so a change of the API host's address (a failover behind DNS) reached the daemon only when the
 * server or a proxy closed it. Apache's default for its side (MaxKeepAliveRequests 100): at the
 * 2,500 requests a minute of the largest tier, a new connection every few seconds.
 */
export const MAX_REQUESTS_PER_CONNECTION = 100;

export function createDispatcher(config: ApiConfig): ApiDispatcher {
  return new ApiDispatcher({
    // Said here, not left to Node: Node takes any certificate at all while the environment holds
    // NODE_TLS_REJECT_UNAUTHORIZED=0 (a shell profile, an EnvironmentFile, the .env autoclaim
    // loads itself), and every request carries the API key, every POST a signed action.
    connect: { timeout: config.connectTimeoutMs, rejectUnauthorized: true },
    headersTimeout: config.timeoutMs,
    bodyTimeout: config.timeoutMs,
    connections: Math.max(1, config.connections),
    pipelining: 1,
    // Shorter than common server idle timeouts (Node's 5 s), so a POST is not written onto a
    // socket the server is closing: that race turns a deposit into an "unknown" step.
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 60_000,
    keepAliveTimeoutThreshold: 2_000,
    maxRequestsPerClient: MAX_REQUESTS_PER_CONNECTION,
    maxResponseSize: config.maxResponseBytes,
  });
}

/**
 * One undici Pool per origin, kept until close. Not undici's Agent: the Agent (7.30) closes an
 * origin's pool when a connection of it ends, and finds the pool to close by origin, so the end of
 * the closed pool's last connection closes the pool made after it, whose end closes the next:
 * once any connection ended while a request was queued (a server's `connection: close`, nginx's
 * keepalive_requests, the bound above), every later request opened a connection of its own
 * (test/api/dispatcher.test.ts). The daemon talks to the few origins its config names, so keeping
 * their pools costs nothing.
 */
export class ApiDispatcher extends Dispatcher {
  readonly #pools = new Map<string, Pool>();
  #closed = false;

  constructor(private readonly options: Pool.Options) {
    super();
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.#closed) throw new errors.ClientClosedError();
    const origin = String(opts.origin);
    let pool = this.#pools.get(origin);
    if (pool === undefined) {
      pool = new Pool(origin, this.options);
      this.#pools.set(origin, pool);
    }
    return pool.dispatch(opts, handler);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    this.#closed = true;
    const done = Promise.all([...this.#pools.values()].map((p) => p.close())).then(() => undefined);
    if (callback === undefined) return done;
    void done.then(callback);
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    this.#closed = true;
    const err = typeof a === 'function' ? null : (a ?? null);
    const callback = typeof a === 'function' ? a : b;
    const done = Promise.all([...this.#pools.values()].map((p) => p.destroy(err))).then(() => undefined);
    if (callback === undefined) return done;
    void done.then(callback);
  }
}
