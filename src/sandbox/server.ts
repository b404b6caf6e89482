// The sandbox's HTTP edge: node:http, one dispatcher, and the fault machinery that decides what
// happens to a computed reply (send it, delay it, cut it, replace it, or drop the socket).
// The sandbox/ folder, the local simulator of the API: this server; routes.ts (the API) and
// verify.ts (signed requests checked as the service does); world.ts and world-types.ts (the
// simulated state) with derive.ts (everything invented, from hashes); faults.ts and reply.ts (one-shot
// faults); admin.ts (/__sandbox/ control); stats.ts (what benchmarks read); json.ts; demo.ts (`npm start`).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { DEFAULT_ENDPOINTS, DEFAULT_HEADER_PREFIX } from '../api/endpoints.js';
import { systemClock, type Clock, type SignatureEncoding } from '../domain.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { ADMIN_PREFIX, handleAdmin } from './admin.js';
import { requestId } from './derive.js';
import { FaultQueue, type FaultSpec } from './faults.js';
import { errorReply, type Reply } from './reply.js';
import { handleApi, matchRoute, normalizeBasePath, peekWallet, type ApiContext } from './routes.js';
import { Stats, TokenBucket, type Outcome, type RateLimitOptions, type StatOp, type StatsSnapshot } from './stats.js';
import { ReplayGuard, unknownMessageVariables } from './verify.js';
import { SANDBOX_OPS, type SandboxEndpoint, type SandboxOp, type WalletInit } from './world-types.js';
import { SandboxWorld, type LedgerEntry } from './world.js';

export { demoWalletAddress, demoWalletKeyPair, demoWalletSeed } from './derive.js';
export type { FaultSpec, FaultKind, FaultOp } from './faults.js';
export type { StatsSnapshot, RateLimitOptions } from './stats.js';
export type { LedgerEntry, SandboxOp, WalletInit, WalletPatch, WalletState } from './world.js';
export { SandboxWorld } from './world.js';

export interface SandboxOptions {
  host?: string;
  port?: number;
  /** When set, signed requests must carry `Bearer <apiKey>`; reads accept it or nothing. */
  apiKey?: string;
  basePath?: string;
  clock?: Clock;
  epochMs?: number;
  /** Wall ms where epoch 0 starts; default the start of the epoch the clock is in at start. */
  epochOrigin?: number;
  tsWindowSec?: number;
  headerPrefix?: string;
  /** Per operation; the ones not given keep SANDBOX_ENDPOINTS (a client's config has no withdraw or burn yet). */
  endpoints?: Partial<Record<SandboxOp, SandboxEndpoint>>;
  /**
   * The message the sandbox expects signed for a claim, instead of `endpoints.claim.message`: the
   * real service does not publish its claim message, so a test (or `doctor`) can give the sandbox
   * a template the client does not use and see what the mismatch looks like (401 invalid_signature).
   */
  claimMessage?: string;
  signatureEncoding?: SignatureEncoding;
  /** `GET /health`'s network; default "solana-sandbox" (the real service says "solana-mainnet"). */
  network?: string;
  wallets?: WalletInit[];
  demoWallets?: number;
  defaultAccrualLamportsPerSec?: bigint;
  symbols?: string[];
  autoRegister?: boolean;
  /**
   * What a signed request already applied gets when the same signature comes again within the
   * timestamp window: `refuse` (409 replayed_signature, the default) or `apply` (applied again).
   * The real service documents no replay protection and no idempotency (SPEC §6), so a client that
   * sends one signed request twice may move the money twice; with `apply` such a bug is a second
   * entry in the ledger, where `refuse` hides it behind a 409 the client reads as a refusal.
   */
  replays?: 'refuse' | 'apply';
  /** The sandbox's own limiter (off by default): 429 with Retry-After past the budget. */
  rateLimit?: RateLimitOptions;
  logger?: Logger;
}

export interface Sandbox {
  /** Base URL including the base path, e.g. http://127.0.0.1:41234/v1 */
  url: string;
  /** http://host:port/__sandbox */
  adminUrl: string;
  port: number;
  world: SandboxWorld;
  faults: FaultQueue;
  addFault(spec: FaultSpec): number;
  clearFaults(): number;
  ledger(): LedgerEntry[];
  advanceEpoch(): string;
  stats(): StatsSnapshot;
  resetStats(): void;
  /** Stops listening and ends every socket, hanging ones included. */
  close(): Promise<void>;
}

/** The real service lists SOL2X, SOL5X and a few token-specific 2X/5X vaults (which ones is ours to pick). */
const DEFAULT_SYMBOLS = ['SOL2X', 'SOL5X', 'JUP2X', 'JUP5X', 'BONK2X'];
/** The client's defaults: every operation the real service documents. */
const SANDBOX_ENDPOINTS: Readonly<Record<SandboxOp, SandboxEndpoint>> = Object.freeze({ ...DEFAULT_ENDPOINTS });
const DEFAULT_ACCRUAL_LAMPORTS_PER_SEC = 100_000n;
const MAX_BODY_BYTES = 64 * 1024;

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? silentLogger();
  const host = opts.host ?? '127.0.0.1';
  const basePath = normalizeBasePath(opts.basePath ?? '/v1');
  const headerPrefix = opts.headerPrefix ?? DEFAULT_HEADER_PREFIX;
  const tsWindowSec = opts.tsWindowSec ?? 300;
  const endpoints = sandboxEndpoints(opts.endpoints, opts.claimMessage);

  const world = new SandboxWorld({
    clock,
    epochMs: opts.epochMs ?? 86_400_000,
    epochOrigin: opts.epochOrigin,
    symbols: opts.symbols ?? DEFAULT_SYMBOLS,
    defaultAccrualLamportsPerSec: opts.defaultAccrualLamportsPerSec ?? DEFAULT_ACCRUAL_LAMPORTS_PER_SEC,
    autoRegister: opts.autoRegister ?? true,
    wallets: opts.wallets,
    demoWallets: opts.demoWallets,
  });
  const faults = new FaultQueue();
  const stats = new Stats(clock);
  const limiter = opts.rateLimit ? new TokenBucket(opts.rateLimit, clock) : undefined;
  const api: ApiContext = {
    world,
    basePath,
    replay: new ReplayGuard(clock, tsWindowSec),
    network: opts.network ?? 'solana-sandbox',
    replays: opts.replays ?? 'refuse',
    verify: { apiKey: opts.apiKey, headerPrefix, tsWindowSec, endpoints, signatureEncoding: opts.signatureEncoding ?? 'base58', clock, epoch: () => world.epoch() },
  };
  const admin = { world, faults, stats: () => stats.snapshot(faults.fired), resetStats: () => stats.reset() };

  const sockets = new Set<Socket>();
  const timers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let closing = false;
  let answers = 0;

  /** A real-time wait (faults are about sockets, not the world's clock) that close() cuts short. */
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const entry = { timer: setTimeout(() => (timers.delete(entry), resolve()), ms), resolve };
      timers.add(entry);
    });

  const done = (op: StatOp, outcome: Outcome, fromLimiter = false) => {
    stats.record(op, outcome, fromLimiter);
    logger.debug({ event: 'sandbox.request', op, outcome }, 'sandbox request');
  };

  const send = (res: ServerResponse, op: StatOp, reply: Reply, fromLimiter = false) => {
    if (!res.destroyed) {
      res.writeHead(reply.status, { ...jsonHeaders(reply.body), ...reply.headers });
      res.end(reply.body);
    }
    done(op, res.destroyed ? 'dropped' : reply.status, fromLimiter);
  };

  const dispatch = async (req: IncomingMessage, res: ServerResponse, id: string): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const method = req.method ?? 'GET';
    const rawBody = await readBody(req);
    if (url.pathname === ADMIN_PREFIX || url.pathname.startsWith(`${ADMIN_PREFIX}/`)) {
      const reply = rawBody === undefined ? errorReply(413, 'body_too_large', 'body too large') : handleAdmin(method, url.pathname, rawBody, admin);
      if (!res.destroyed) res.writeHead(reply.status, { ...jsonHeaders(reply.body), ...reply.headers }).end(reply.body);
      return;
    }

    const route = matchRoute(method, url.pathname, endpoints, basePath);
    const op: StatOp = route.op;
    stats.arrive();
    if (rawBody === undefined) return send(res, op, errorReply(413, 'body_too_large', `body exceeds ${MAX_BODY_BYTES} bytes`));
    if (limiter) {
      const t = limiter.take();
      if (!t.ok) return send(res, op, errorReply(429, 'rate_limited', 'rate limit exceeded', { 'retry-after': String(t.retryAfterSec) }), true);
    }
    const fault = route.op === 'unknown' ? undefined : faults.take(route.op, peekWallet(route, req.headers, rawBody, headerPrefix));
    const compute = () => handleApi(route, url.searchParams, req.headers, rawBody, api, id);
    if (!fault) return send(res, op, compute());
    logger.debug({ event: 'sandbox.fault', op, kind: fault.kind }, 'sandbox fault');

    switch (fault.kind) {
      case 'latency':
        await sleep(fault.ms);
        // A client that gave up meanwhile does not un-send its request: apply it anyway, as a real server would.
        if (closing) return done(op, 'dropped');
        return send(res, op, compute());
      case 'status5xx_before':
        return send(res, op, errorReply(fault.status ?? 503, 'unavailable', 'service unavailable (injected)'));
      case 'rate_limit': {
        const headers = fault.retryAfterSec === undefined ? undefined : { 'retry-after': String(fault.retryAfterSec) };
        return send(res, op, errorReply(429, 'rate_limited', 'rate limit exceeded (injected)', headers));
      }
      case 'reset_before':
        req.socket.resetAndDestroy();
        return done(op, 'reset');
      case 'apply_then_drop':
        compute();
        req.socket.destroy();
        return done(op, 'dropped');
      case 'apply_then_5xx':
        compute();
        return send(res, op, errorReply(fault.status ?? 500, 'internal', 'internal error (injected, after applying)'));
      case 'apply_then_hang':
        compute();
        return done(op, 'hang');
      case 'malformed':
        if (fault.apply !== false) compute();
        return send(res, op, { status: fault.status ?? 200, body: fault.body });
      case 'slow_body': {
        const reply = compute();
        res.writeHead(reply.status, { ...jsonHeaders(reply.body), ...reply.headers });
        res.flushHeaders();
        await sleep(fault.ms);
        if (closing || res.destroyed) return done(op, 'dropped');
        res.end(reply.body);
        return done(op, reply.status);
      }
      case 'truncated_body': {
        const reply = compute();
        const bytes = Buffer.from(reply.body, 'utf8');
        res.writeHead(reply.status, { ...jsonHeaders(reply.body), ...reply.headers });
        // Half the promised bytes, then FIN: the client must notice the body is short.
        res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => req.socket.end());
        return done(op, 'truncated');
      }
    }
  };

  const server: Server = createServer((req, res) => {
    // The Date header tells the time of the sandbox's clock, not the host's, so a test can give the
    // simulated server a clock of its own and watch the client notice the skew.
    res.setHeader('date', new Date(clock.now()).toUTCString());
    // Like the real service, every answer (errors and injected faults included) names itself.
    const id = requestId(++answers);
    res.setHeader('x-request-id', id);
    dispatch(req, res, id).catch((err: unknown) => {
      // A client that hangs up mid-body is routine here (faults provoke it); anything else is a bug.
      if (req.destroyed) logger.debug({ event: 'sandbox.aborted' }, 'client went away mid-request');
      else logger.error({ event: 'sandbox.error', err }, 'sandbox handler failed');
      if (!res.headersSent && !res.destroyed) res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"code":"internal","message":"internal sandbox error"}}');
      else res.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('sandbox did not bind a TCP port');
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= new Promise<void>((resolve) => {
      closing = true;
      for (const t of timers) {
        clearTimeout(t.timer);
        t.resolve();
      }
      timers.clear();
      server.close(() => resolve());
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
    });
    return closed;
  };

  return {
    url: `${origin}${basePath}`,
    adminUrl: `${origin}${ADMIN_PREFIX}`,
    port: address.port,
    world,
    faults,
    addFault: (spec) => faults.add(spec),
    clearFaults: () => faults.clear(),
    ledger: () => world.ledger(),
    advanceEpoch: () => world.advanceEpoch(),
    stats: () => stats.snapshot(faults.fired),
    resetStats: () => stats.reset(),
    close,
  };
}

/** Configured endpoints over the defaults; templates are checked now, not on the first request. */
function sandboxEndpoints(given: Partial<Record<SandboxOp, SandboxEndpoint>> | undefined, claimMessage: string | undefined): Record<SandboxOp, SandboxEndpoint> {
  const endpoints = { ...SANDBOX_ENDPOINTS, ...given };
  if (claimMessage !== undefined) endpoints.claim = { ...endpoints.claim, message: claimMessage };
  for (const op of SANDBOX_OPS) {
    const unknown = unknownMessageVariables(endpoints[op].message);
    if (unknown.length > 0) throw new Error(`sandbox ${op} message template names unknown {${unknown.join('}, {')}}`);
  }
  return endpoints;
}

function jsonHeaders(body: string): Record<string, string> {
  return { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body, 'utf8')) };
}

/** The whole body as UTF-8, or undefined when it passes the limit (the rest is drained unread). */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  }
  return size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8');
}
