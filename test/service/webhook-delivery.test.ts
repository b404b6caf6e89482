// Reliable delivery (issue 24 finding 11), against receivers on 127.0.0.1 and a real SQLite state:
// a 500 then a 200 delivers once; a 429's Retry-After (seconds or an HTTP date, capped) sets when it
// is tried again; a receiver dripping its answer is cut at the deadline and the next notices still
// go out; what a stopped notifier left in the outbox is delivered by the next one (a restart); a
// notice never delivered expires; a receiver that never answers does not hold notify() or close().
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Redactor } from '../../src/log/redact.js';
import type { NotificationOutcome } from '../../src/service/metrics.js';
import { createWebhookNotifier, retryAfterMs, type WebhookNotifier } from '../../src/service/webhook.js';
import { openStore, type SyncStore } from '../../src/store/index.js';
import { FakeClock } from '../support/clock.js';
import { captureLog } from '../support/log.js';
import { tempDir, type TempDir } from '../store/fixtures.js';

interface Hit {
  n: number;
  keys: string[];
  raw: string;
}

const servers: Server[] = [];
const notifiers: WebhookNotifier[] = [];
const stores: SyncStore[] = [];
let tmp: TempDir | undefined;

afterEach(async () => {
  for (const n of notifiers.splice(0)) await n.close(200);
  for (const s of stores.splice(0)) s.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  tmp?.cleanup();
  tmp = undefined;
});

/** A receiver whose n-th request (from 1) is answered by `answer`; every request is recorded. */
async function receiver(answer: (n: number, res: import('node:http').ServerResponse) => void): Promise<{ url: string; hits: Hit[]; until: (f: () => boolean) => Promise<void> }> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const n = hits.length + 1;
      hits.push({ n, raw, keys: (JSON.parse(raw) as { events: Array<{ key: string }> }).events.map((e) => e.key) });
      answer(n, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const until = async (f: () => boolean): Promise<void> => {
    while (!f()) await new Promise((r) => setTimeout(r, 10));
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/TOKEN-delivery`, hits, until };
}

function store(): SyncStore {
  tmp ??= tempDir();
  const s = openStore(tmp.dbPath, { logger: captureLog().logger });
  stores.push(s);
  return s;
}

function notifier(opts: Omit<Parameters<typeof createWebhookNotifier>[0], 'redactor' | 'logger'> & { logger?: ReturnType<typeof captureLog>['logger'] }): WebhookNotifier {
  const n = createWebhookNotifier({ redactor: new Redactor(), logger: captureLog().logger, minIntervalMs: 0, ...opts });
  notifiers.push(n);
  return n;
}

const keysDelivered = (hits: Hit[], ok: (n: number) => boolean): string[] => hits.filter((h) => ok(h.n)).flatMap((h) => h.keys);

describe('webhook redaction', () => {
  it('scrubs text, details and key with the redactor, on entry and again right before sending', async () => {
    const r = await receiver((_n, res) => res.writeHead(204).end());
    const redactor = new Redactor().add('registered-before-9Xq2Lm7Pz4');
    const clock = new FakeClock(1_800_000_000_000);
    const s = store();
    const n = createWebhookNotifier({ url: r.url, redactor, logger: captureLog().logger, store: s, clock, minIntervalMs: 0, retryBaseMs: 1_000_000 });
    notifiers.push(n);
    // A secret registered only after the notice was accepted (a reload's new key) is scrubbed too.
    const later = 'registered-after-3Vb8Nc1Kd6';
    n.notify({
      key: 'k:registered-before-9Xq2Lm7Pz4',
      event: 'config.invalid',
      text: `pasted registered-before-9Xq2Lm7Pz4 and ${later}`,
      details: { issues: [`key file ./keys/${later}.json`], nested: { v: 'registered-before-9Xq2Lm7Pz4' } },
    });
    redactor.add(later);
    await r.until(() => r.hits.length >= 1);
    const raw = r.hits[0]?.raw ?? '';
    expect(raw).not.toContain('registered-before-9Xq2Lm7Pz4');
    expect(raw).not.toContain(later);
    expect(raw).toContain('[REDACTED]');
  });
});

describe('webhook delivery', () => {
  it('a 500 then a 200: the notice is retried and delivered once, kept in the outbox meanwhile', async () => {
    const r = await receiver((n, res) => res.writeHead(n === 1 ? 500 : 204).end());
    const outcomes: NotificationOutcome[] = [];
    const s = store();
    const n = notifier({ url: r.url, store: s, retryBaseMs: 20, onOutcome: (o) => outcomes.push(o) });
    n.notify({ key: 'rejected:step:1', event: 'action.rejected', text: 'rejected' });
    await r.until(() => r.hits.length >= 2);
    await n.close(1000);
    expect(r.hits.map((h) => h.keys)).toEqual([['rejected:step:1'], ['rejected:step:1']]);
    expect(outcomes).toEqual(['failed', 'sent']);
    // Delivered: nothing left to send, ever.
    expect(s.outboxClaim('webhook', Date.now() + 86_400_000 * 2, 10, Date.now())).toEqual([]);
  });

  it('a 429 with Retry-After: tried again when the receiver said, not before (seconds and an HTTP date, capped)', async () => {
    const clock = new FakeClock(1_800_000_000_000);
    // The HTTP date is made when the receiver answers: 30 s after the clock then.
    const answers = [() => '120', () => new Date(clock.now() + 30_000).toUTCString(), () => '999999'];
    const r = await receiver((n, res) => (n <= 3 ? res.writeHead(429, { 'retry-after': answers[n - 1]?.() ?? '1' }).end() : res.writeHead(204).end()));
    const s = store();
    const n = notifier({ url: r.url, store: s, clock, retryAfterCapMs: 3_600_000 });
    n.notify({ key: 'k', event: 'action.unknown', text: 'x' });
    const nextAt = (): number | undefined => {
      const [row] = s.outboxClaim('webhook', clock.now() + 10 * 3_600_000, 1, clock.now());
      if (row !== undefined) s.outboxRetry([row.id], row.nextAt, row.lastError ?? ''); // put back as it was (attempts aside)
      return row?.nextAt;
    };
    await r.until(() => r.hits.length >= 1);
    await r.until(() => s.outboxClaim('webhook', clock.now(), 1, clock.now()).length === 0 && r.hits.length === 1);
    await new Promise((res) => setTimeout(res, 50));
    expect(nextAt()).toBe(clock.now() + 120_000);
    clock.advance(120_000);
    n.notify({ key: 'wake', event: 'e', text: 'wake the loop' });
    await r.until(() => r.hits.length >= 2);
    await new Promise((res) => setTimeout(res, 50));
    // An HTTP date 30 s ahead: 30 s from the clock now.
    expect(nextAt()).toBe(clock.now() + 30_000);
    clock.advance(30_000);
    n.notify({ key: 'wake2', event: 'e', text: 'wake the loop' });
    await r.until(() => r.hits.length >= 3);
    await new Promise((res) => setTimeout(res, 50));
    // 999999 s is capped at retryAfterCapMs.
    expect(nextAt()).toBe(clock.now() + 3_600_000);
    clock.advance(3_600_000);
    n.notify({ key: 'wake3', event: 'e', text: 'wake the loop' });
    await r.until(() => keysDelivered(r.hits, (i) => i >= 4).includes('k'));
  });

  it('Retry-After: delta-seconds, an HTTP date, or nothing usable', () => {
    const now = Date.UTC(2026, 0, 1);
    expect(retryAfterMs('7', now)).toBe(7000);
    expect(retryAfterMs(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
    expect(retryAfterMs(new Date(now - 90_000).toUTCString(), now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs('-3', now)).toBeUndefined();
  });

  it('a receiver dripping its answer is cut at the deadline; the next notices still go out, and the cut one later', async () => {
    const drips: NodeJS.Timeout[] = [];
    const r = await receiver((n, res) => {
      if (n !== 1) return void res.writeHead(204).end();
      // Headers at once, then a byte every 100 ms, forever: each byte resets undici's body timer.
      res.writeHead(200, { 'content-type': 'text/plain' });
      drips.push(setInterval(() => res.write('.'), 100));
    });
    const outcomes: NotificationOutcome[] = [];
    const s = store();
    const n = notifier({ url: r.url, store: s, timeoutMs: 500, retryBaseMs: 20, maxBatch: 1, onOutcome: (o) => outcomes.push(o) });
    try {
      n.notify({ key: 'first', event: 'e', text: 'dripped' });
      await r.until(() => r.hits.length >= 1);
      for (const k of ['second', 'third']) n.notify({ key: k, event: 'e', text: k });
      await r.until(() => ['first', 'second', 'third'].every((k) => keysDelivered(r.hits, (i) => i > 1).includes(k)));
      // The receiver has them; the notifier counts each once it has read the answer.
      await r.until(() => outcomes.filter((o) => o === 'sent').length >= 3);
    } finally {
      for (const d of drips) clearInterval(d);
    }
    expect(outcomes.filter((o) => o === 'failed')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'sent')).toHaveLength(3);
  });

  it('a restart delivers what the stopped notifier kept in the outbox', async () => {
    const down = await receiver((_n, res) => res.writeHead(503).end());
    const outcomes: NotificationOutcome[] = [];
    const first = notifier({ url: down.url, store: store(), retryBaseMs: 10, onOutcome: (o) => outcomes.push(o) });
    first.notify({ key: 'unknown:step:7', event: 'action.unknown', text: 'seven' });
    first.notify({ key: 'rejected:step:8', event: 'action.rejected', text: 'eight' });
    await down.until(() => down.hits.length >= 1);
    await first.close(1000);
    for (const s of stores.splice(0)) s.close();
    expect(outcomes).not.toContain('sent');
    expect(outcomes).not.toContain('dropped');

    const up = await receiver((_n, res) => res.writeHead(204).end());
    // A new process: nothing is notified; the kept notices go out by themselves.
    notifier({ url: up.url, store: store(), retryBaseMs: 10, idleMs: 20 });
    await up.until(() => up.hits.flatMap((h) => h.keys).length >= 2);
    expect(up.hits.flatMap((h) => h.keys).sort()).toEqual(['rejected:step:8', 'unknown:step:7']);
  });

  it('a notice never delivered expires: dropped, counted and logged', async () => {
    const r = await receiver((_n, res) => res.writeHead(500).end());
    const clock = new FakeClock(1_800_000_000_000);
    const log = captureLog();
    const outcomes: NotificationOutcome[] = [];
    const s = store();
    const n = notifier({ url: r.url, store: s, clock, logger: log.logger, expireMs: 60_000, retryBaseMs: 1000, idleMs: 20, onOutcome: (o) => outcomes.push(o) });
    n.notify({ key: 'stale:w', event: 'alert.opened', text: 'stale' });
    await r.until(() => outcomes.includes('failed'));
    clock.advance(60_000);
    await r.until(() => outcomes.includes('expired'));
    expect(log.events('notify.webhook_expired')).toMatchObject([{ level: 'warn', notices: 1 }]);
    expect(s.outboxClaim('webhook', clock.now() - 1, 10, clock.now())).toEqual([]);
  });

  it('a receiver that never answers holds neither notify() nor close() beyond its bound', async () => {
    const r = await receiver(() => undefined); // reads the request, never answers
    const s = store();
    const n = notifier({ url: r.url, store: s, timeoutMs: 60_000 });
    for (let i = 0; i < 50; i++) n.notify({ key: `k${i}`, event: 'e', text: `n${i}` });
    await r.until(() => r.hits.length >= 1);
    // close() gives the POST in flight 100 ms, then aborts it; the notices stay kept for the next start.
    await n.close(100);
    const kept = s.outboxClaim('webhook', Date.now() + 120_000, 100, Date.now() + 120_000);
    expect(kept).toHaveLength(50);
  });
});
