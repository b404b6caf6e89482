// Failures reach a human first (issue 13): failures and acknowledgements wait in separate bounded
// queues, each POST takes failures first and carries a batch, and a configured secret signs every
// POST with an HMAC the receiver can check against the exact bytes it got.
import { Redactor } from '../../src/log/redact.js';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/domain.js';
import type { NotificationOutcome } from '../../src/service/metrics.js';
import { createWebhookNotifier, signWebhookBody, type WebhookNotifier } from '../../src/service/webhook.js';
import { captureLog } from '../support/log.js';
import { startReceiver, stopReceivers } from './webhook-receiver.js';

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: { text: string; event: string; events: Array<{ event: string; key: string; text: string }> };
}

let agent: Agent | undefined;
let notifier: WebhookNotifier | undefined;

afterEach(async () => {
  await notifier?.close(1000);
  notifier = undefined;
  await agent?.close();
  agent = undefined;
  await stopReceivers();
});

async function receiver(): Promise<{ url: string; received: Received[]; next: (n: number) => Promise<void> }> {
  const r = await startReceiver<Received['body']>({ path: '/hook' });
  return { url: r.url, received: r.posts, next: (n) => r.waitFor(() => r.posts.length >= n) };
}

/** A clock that moves only when the notifier sleeps; `gate` holds the first sleep until released. */
function gatedTime(): { clock: Clock; sleep: (ms: number) => Promise<void>; release: () => void } {
  let mono = 1_000;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    clock: { now: () => 1_800_000_000_000 + mono, monotonic: () => mono },
    sleep: async (ms) => {
      await gate;
      mono += ms;
    },
    release: () => release(),
  };
}

/** What a receiver does: recompute the MAC over timestamp and raw body, compare in constant time. */
function verifies(secret: string, headers: IncomingHttpHeaders, raw: string): boolean {
  const ts = headers['x-autoclaim-timestamp'];
  const sig = headers['x-autoclaim-signature'];
  if (typeof ts !== 'string' || typeof sig !== 'string' || !sig.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', secret).update(`${ts}.${raw}`).digest();
  const given = Buffer.from(sig.slice('sha256='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('webhook priorities and batches', () => {
  it('sends failures before acknowledgements that were queued earlier, several to a POST', async () => {
    const r = await receiver();
    agent = new Agent();
    const t = gatedTime();
    notifier = createWebhookNotifier({ url: r.url, redactor: new Redactor(), dispatcher: agent, logger: captureLog().logger, clock: t.clock, sleep: t.sleep, maxBatch: 4 });
    notifier.notify({ key: 'f0', event: 'action.rejected', text: 'first failure' }); // goes out at once
    await r.next(1);
    for (const n of [1, 2, 3]) notifier.notify({ key: `a${n}`, event: 'action.acknowledged', text: `ack ${n}`, priority: 'info' });
    for (const n of [1, 2]) notifier.notify({ key: `f${n}`, event: 'action.unknown', text: `failure ${n}` });
    t.release();
    await r.next(3);
    expect(r.received.map((x) => x.body.events.map((e) => e.key))).toEqual([['f0'], ['f1', 'f2', 'a1', 'a2'], ['a3']]);
    expect(r.received[1]?.body.event).toBe('batch');
    expect(r.received[1]?.body.text).toBe('4 autoclaim notifications:\n• failure 1\n• failure 2\n• ack 1\n• ack 2');
  });

  it('never lets acknowledgements crowd out failures: each queue has its own bound', async () => {
    const r = await receiver();
    agent = new Agent();
    const t = gatedTime();
    const outcomes: NotificationOutcome[] = [];
    const log = captureLog();
    notifier = createWebhookNotifier({ redactor: new Redactor(),
      url: r.url,
      dispatcher: agent,
      logger: log.logger,
      clock: t.clock,
      sleep: t.sleep,
      maxInfoQueue: 5,
      maxQueue: 50,
      maxBatch: 100,
      onOutcome: (o) => outcomes.push(o),
    });
    notifier.notify({ key: 'f0', event: 'action.rejected', text: 'first failure' });
    await r.next(1);
    // A fleet's worth of acknowledgements, then the failures that matter.
    for (let n = 0; n < 1000; n++) notifier.notify({ key: `a${n}`, event: 'action.acknowledged', text: `ack ${n}`, priority: 'info' });
    for (let n = 1; n <= 20; n++) notifier.notify({ key: `f${n}`, event: 'action.rejected', text: `failure ${n}` });
    t.release();
    await r.next(2);
    await notifier.close();
    const second = r.received[1]?.body.events.map((e) => e.key) ?? [];
    expect(second.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => `f${i + 1}`));
    expect(second.slice(20)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    expect(outcomes.filter((o) => o === 'dropped')).toHaveLength(995);
    expect(outcomes.filter((o) => o === 'sent')).toHaveLength(26);
    // Warned once for the info queue; the failure queue never overflowed.
    expect(log.events('notify.webhook_dropped').filter((l) => l['level'] === 'warn').map((l) => l['priority'])).toEqual(['info']);
  });
});

describe('webhook signatures', () => {
  const SECRET = 'whsec-canary-0123456789abcdef';

  it('signs each POST with HMAC-SHA256 over timestamp and exact body, which the receiver verifies', async () => {
    const r = await receiver();
    agent = new Agent();
    const t = gatedTime();
    notifier = createWebhookNotifier({ url: r.url, redactor: new Redactor(), secret: SECRET, dispatcher: agent, logger: captureLog().logger, clock: t.clock, sleep: t.sleep });
    notifier.notify({ key: 'f1', event: 'action.failed', text: 'signing paused for treasury' });
    await r.next(1);
    const got = r.received[0];
    expect(got).toBeDefined();
    if (got === undefined) return;
    expect(got.headers['x-autoclaim-timestamp']).toBe(String(Math.floor(t.clock.now() / 1000)));
    expect(got.headers['x-autoclaim-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifies(SECRET, got.headers, got.raw)).toBe(true);
    // A changed byte, another secret or another timestamp does not verify.
    expect(verifies(SECRET, got.headers, got.raw.replace('treasury', 'treasurz'))).toBe(false);
    expect(verifies('another-secret-0123456789', got.headers, got.raw)).toBe(false);
    expect(verifies(SECRET, { ...got.headers, 'x-autoclaim-timestamp': '1' }, got.raw)).toBe(false);
    // The secret itself never travels.
    expect(JSON.stringify(got.headers) + got.raw).not.toContain(SECRET);
  });

  it('signWebhookBody is the documented construction', () => {
    const body = '{"text":"x"}';
    expect(signWebhookBody('k'.repeat(16), 1_700_000_000, body)).toBe(
      `sha256=${createHmac('sha256', 'k'.repeat(16)).update(`1700000000.${body}`).digest('hex')}`,
    );
  });
});
