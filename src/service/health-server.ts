// The optional HTTP listener (config `metrics.listen`): /healthz (the process and its event loop),
// /readyz (able to do its job: polls succeeding, database writable, signing not paused; see
// readiness.ts) and /metrics (Prometheus text).
// Unauthenticated by design, so it binds loopback unless the operator names another host.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { AutoclaimError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { isLoopback } from '../loopback.js';
import { startLoopLagMonitor, type LoopLagMonitor } from './loop-lag.js';
import type { Metrics } from './metrics.js';
import { evaluateReadiness, type HealthReport, type Readiness } from './readiness.js';

export { evaluateReadiness, type Check, type HealthReport, type Readiness } from './readiness.js';

const DEFAULT_MAX_LOOP_LAG_MS = 1000;
const REQUEST_TIMEOUT_MS = 10_000;

interface Listen {
  host: string;
  port: number;
}

/** Parses "host:port", "[::1]:port", ":port" or "port"; a missing host means 127.0.0.1. */
export function parseListen(text: string): Listen {
  const m = /^(?:(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):)?([0-9]{1,5})$/.exec(text.trim());
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || port > 65535) {
    throw new AutoclaimError('LISTEN_INVALID', `metrics.listen: expected "host:port" (e.g. 127.0.0.1:9464), got ${JSON.stringify(text)}`);
  }
  const v6 = m[1];
  if (v6 !== undefined && isIP(v6) !== 6) {
    throw new AutoclaimError('LISTEN_INVALID', `metrics.listen: ${JSON.stringify(v6)} is not an IPv6 address`);
  }
  const host = v6 ?? (m[2] === undefined || m[2] === '' ? '127.0.0.1' : m[2]);
  return { host, port };
}

interface HealthServerOptions {
  listen: string;
  metrics: Metrics;
  health: () => HealthReport | Promise<HealthReport>;
  logger: Logger;
  /**
   * Scrubs every answer before it leaves (the logger's Redactor): metric labels come from config
   * and server strings (wallet and rule names, tiers), and a readiness detail may quote an error.
   */
  redact: (text: string) => string;
  /** /healthz fails when the event loop runs timers later than this; default 1000 ms. */
  maxLoopLagMs?: number;
  /** Where the loop lag comes from; default a monitor started with the server (tests inject one). */
  loopLagMs?: () => number;
}

export interface HealthServer {
  /** e.g. http://127.0.0.1:9464 (the real port when 0 was asked for). */
  url: string;
  close(): Promise<void>;
}

export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const { host, port } = parseListen(opts.listen);
  const log = opts.logger;
  if (!isLoopback(host)) {
    log.warn(
      { event: 'metrics.exposed', host, port },
      `health and metrics listener bound to non-loopback ${host}; it has no authentication, so firewall it`,
    );
  }
  const maxLag = opts.maxLoopLagMs ?? DEFAULT_MAX_LOOP_LAG_MS;
  const monitor: LoopLagMonitor | undefined = opts.loopLagMs === undefined ? startLoopLagMonitor() : undefined;
  const lagMs = (): number => opts.loopLagMs?.() ?? monitor?.lagMs() ?? 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, { error: 'method not allowed' }, { Allow: 'GET, HEAD' });
      return;
    }
    switch (path) {
      case '/healthz': {
        const lag = Math.round(lagMs());
        const ok = lag <= maxLag;
        send(res, ok ? 200 : 503, { status: ok ? 'ok' : 'event loop lagging', loopLagMs: lag, maxLoopLagMs: maxLag });
        return;
      }
      case '/readyz': {
        let readiness: Readiness;
        try {
          readiness = evaluateReadiness(await opts.health());
        } catch (err) {
          log.error({ event: 'health.report_failed', err }, 'computing the readiness report failed');
          send(res, 503, { ready: false, error: 'readiness report failed' });
          return;
        }
        send(res, readiness.ready ? 200 : 503, readiness, {}, opts.redact);
        return;
      }
      case '/metrics': {
        const text = opts.redact(await opts.metrics.render());
        res.writeHead(200, { 'Content-Type': opts.metrics.contentType, 'Cache-Control': 'no-store' });
        res.end(text);
        return;
      }
      default:
        send(res, 404, { error: 'not found', paths: ['/healthz', '/readyz', '/metrics'] });
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ event: 'health.request_failed', err, path: req.url }, 'health listener request failed');
      if (!res.headersSent) send(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = REQUEST_TIMEOUT_MS;

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    monitor?.stop();
    throw new AutoclaimError('LISTEN_FAILED', `metrics.listen ${opts.listen}: ${(err as Error).message}`, { cause: err });
  }
  server.on('error', (err) => log.error({ event: 'health.server_error', err }, 'health listener error'));

  const address = server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`;
  log.info({ event: 'health.listening', url }, `health and metrics on ${url}`);

  let closing: Promise<void> | undefined;
  return {
    url,
    close() {
      closing ??= new Promise<void>((resolve) => {
        monitor?.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, redact: (t: string) => string = (t) => t): void {
  const text = redact(`${JSON.stringify(body)}\n`);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(text);
}
