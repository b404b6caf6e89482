import { Redactor } from '../../src/log/redact.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { parseListen, startHealthServer, type HealthReport, type HealthServer } from '../../src/service/health-server.js';
import { startLoopLagMonitor } from '../../src/service/loop-lag.js';
import { createMetrics } from '../../src/service/metrics.js';
import { captureLog } from '../support/log.js';

const MINUTE = 60_000;
const T0 = 1_800_000_000_000;
const healthy: HealthReport = {
  now: T0,
  lastSuccessAt: T0 - MINUTE,
  startedAt: T0 - 60 * MINUTE,
  pollIntervalMs: MINUTE,
  staleAfterIntervals: 3,
  dbError: undefined,
  signing: { all: undefined, wallets: new Map() },
  signersDown: [],
  configValid: true,
};

describe('parseListen', () => {
  it.each([
    ['127.0.0.1:9464', { host: '127.0.0.1', port: 9464 }],
    ['0.0.0.0:80', { host: '0.0.0.0', port: 80 }],
    ['localhost:9464', { host: 'localhost', port: 9464 }],
    ['[::1]:9464', { host: '::1', port: 9464 }],
    [':9464', { host: '127.0.0.1', port: 9464 }],
    ['9464', { host: '127.0.0.1', port: 9464 }],
  ])('%s', (text, expected) => {
    expect(parseListen(text)).toEqual(expected);
  });

  it.each(['', 'host', '127.0.0.1:', '127.0.0.1:70000', '::1:9464', '[nothost]:1', 'a:b:c'])('rejects %j', (text) => {
    expect(() => parseListen(text)).toThrow(/metrics\.listen/);
  });
});

describe('startHealthServer', () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const redactor = new Redactor();
  const start = async (over: { report?: () => HealthReport; lag?: number } = {}) => {
    const metrics = createMetrics({ processMetrics: false });
    let lag = over.lag ?? 3;
    server = await startHealthServer({
      listen: '127.0.0.1:0',
      metrics,
      health: over.report ?? (() => healthy),
      logger: silentLogger(),
      redact: (text) => redactor.redact(text),
      loopLagMs: () => lag,
    });
    return { metrics, url: server.url, setLag: (ms: number) => (lag = ms) };
  };

  it('scrubs /metrics with the redactor: a label value that is a registered secret never leaves', async () => {
    const secret = 'metrics-label-canary-9f8e7d6c5b';
    redactor.add(secret);
    const { metrics, url } = await start();
    metrics.configure({ wallets: [{ name: secret, address: 'Addr1111111111111111111111111111111111111111' }], rules: [secret], perWallet: true, staleAfterMs: 60_000 });
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED]');
  });

  it('answers /healthz by the event loop lag', async () => {
    const { url, setLag } = await start();
    const ok = await fetch(`${url}/healthz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: 'ok', loopLagMs: 3, maxLoopLagMs: 1000 });
    setLag(4000);
    const lagging = await fetch(`${url}/healthz`);
    expect(lagging.status).toBe(503);
    expect(await lagging.json()).toMatchObject({ loopLagMs: 4000 });
  });

  it('answers /readyz from the report, listing each check', async () => {
    let report = healthy;
    const { url } = await start({ report: () => report });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, reasons: [], checks: { config: { ok: true }, db: { ok: true }, poll: { ok: true }, signing: { ok: true } } });

    report = { ...healthy, dbError: 'disk I/O error', lastSuccessAt: T0 - 10 * MINUTE };
    const notReady = await fetch(`${url}/readyz`);
    expect(notReady.status).toBe(503);
    const body = (await notReady.json()) as { ready: boolean; reasons: string[]; checks: Record<string, { ok: boolean }> };
    expect(body).toMatchObject({ ready: false, checks: { config: { ok: true }, db: { ok: false }, poll: { ok: false }, signing: { ok: true } } });
    expect(body.reasons).toEqual([expect.stringMatching(/^poll: no wallet poll has succeeded for 10m/), 'db: the state database cannot be written: disk I/O error']);
  });

  it('answers /readyz with 503 when the report itself throws, and logs it', async () => {
    const log = captureLog();
    server = await startHealthServer({
      listen: '127.0.0.1:0',
      metrics: createMetrics({ processMetrics: false }),
      health: () => {
        throw new Error('store gone');
      },
      logger: log.logger,
      redact: (t) => t,
      loopLagMs: () => 0,
    });
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(log.events('health.report_failed')).toHaveLength(1);
  });

  it('serves Prometheus text on /metrics', async () => {
    const { url, metrics } = await start();
    const treasury = { name: 'treasury', address: 'Treasury1111' };
    metrics.configure({ wallets: [treasury], rules: [], perWallet: 'auto', staleAfterMs: 3 * MINUTE });
    metrics.pollOk(treasury, { pendingLamports: 2_000_000_000n, lifetimeLamports: 5_000_000_000n }, T0);
    const res = await fetch(`${url}/metrics?x=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('autoclaim_polls_total{outcome="ok"} 1');
    expect(text).toContain('autoclaim_wallet_pending_sol{wallet="treasury"} 2');
  });

  it('answers 404 for other paths, 405 for other methods, and HEAD without a body', async () => {
    const { url } = await start();
    expect((await fetch(`${url}/`)).status).toBe(404);
    const post = await fetch(`${url}/healthz`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(`${url}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('reports its real port and stops answering once closed', async () => {
    const { url } = await start();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9][0-9]*$/);
    await server?.close();
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('warns before binding a non-loopback host, and names the address when binding fails', async () => {
    const log = captureLog();
    // 192.0.2.1 (TEST-NET-1) is on no interface here, so the bind fails without any traffic.
    await expect(
      startHealthServer({ listen: '192.0.2.1:0', metrics: createMetrics({ processMetrics: false }), health: () => healthy, logger: log.logger, redact: (t) => t }),
    ).rejects.toThrow(/metrics\.listen 192\.0\.2\.1:0/);
    expect(log.events('metrics.exposed')).toMatchObject([{ level: 'warn', host: '192.0.2.1' }]);
  });
});

describe('startLoopLagMonitor', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports a blocked loop, remembers it for the window, then forgets it', () => {
    vi.useFakeTimers();
    let now = 0;
    const m = startLoopLagMonitor({ intervalMs: 100, windowMs: 1000, now: () => now });
    const tick = (ms: number) => {
      now += ms;
      vi.advanceTimersByTime(ms);
    };
    tick(100);
    expect(m.lagMs()).toBe(0);

    now += 700; // the loop is blocked: the timer is 700 ms overdue
    expect(m.lagMs()).toBe(600);
    vi.advanceTimersByTime(100); // the late tick runs
    expect(m.lagMs()).toBe(600);
    for (let i = 0; i < 8; i += 1) tick(100);
    expect(m.lagMs()).toBe(600);
    for (let i = 0; i < 3; i += 1) tick(100);
    expect(m.lagMs()).toBe(0);
    m.stop();
  });

  it('measures a real busy loop', async () => {
    const m = startLoopLagMonitor({ intervalMs: 10 });
    const until = performance.now() + 150;
    while (performance.now() < until) {
      // block the loop
    }
    expect(m.lagMs()).toBeGreaterThanOrEqual(100);
    await new Promise((r) => setTimeout(r, 30));
    expect(m.lagMs()).toBeGreaterThanOrEqual(100);
    m.stop();
  });
});
