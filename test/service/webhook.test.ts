import { Redactor } from '../../src/log/redact.js';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { NotificationOutcome } from '../../src/service/metrics.js';
import { createWebhookNotifier, type WebhookNotifier } from '../../src/service/webhook.js';
import { FakeClock } from '../support/clock.js';
import { captureLog } from '../support/log.js';
import { startReceiver, stopReceivers } from './webhook-receiver.js';

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
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

/** A loopback webhook receiver; `status` decides the answer. */
async function receiver(status: () => number = () => 204): Promise<{ url: string; received: Received[]; next: (n: number) => Promise<void> }> {
  // The path plays the part of a Slack/Discord secret token.
  const r = await startReceiver<Received['body']>({ path: '/hooks/SECRET-TOKEN-123456', status });
  return { url: r.url, received: r.posts, next: (n) => r.waitFor(() => r.posts.length >= n) };
}

/** A clock that only moves when the notifier sleeps (or the test says), so pacing is asserted without real time. */
const fakeTime = (): FakeClock => new FakeClock(1_800_000_001_000);

describe('createWebhookNotifier', () => {
  it('POSTs a Slack- and Discord-compatible JSON payload', async () => {
    const r = await receiver();
    agent = new Agent();
    const t = fakeTime();
    notifier = createWebhookNotifier({ url: r.url, redactor: new Redactor(), dispatcher: agent, logger: captureLog().logger, clock: t, sleep: t.autoSleep });
    notifier.notify({ key: 'ack:1', event: 'action.acknowledged', text: 'treasury: claimed 1.5 SOL', details: { step: 1, lamports: 1_500_000_000n } });
    await r.next(1);
    expect(r.received[0]?.headers['content-type']).toBe('application/json');
    expect(r.received[0]?.body).toEqual({
      text: 'treasury: claimed 1.5 SOL',
      content: 'treasury: claimed 1.5 SOL',
      event: 'action.acknowledged',
      key: 'ack:1',
      at: new Date(1_800_000_001_000).toISOString(),
      details: { step: 1, lamports: '1500000000' },
      events: [
        {
          event: 'action.acknowledged',
          key: 'ack:1',
          text: 'treasury: claimed 1.5 SOL',
          at: new Date(1_800_000_001_000).toISOString(),
          details: { step: 1, lamports: '1500000000' },
        },
      ],
    });
    // No secret, no signature.
    expect(r.received[0]?.headers['x-autoclaim-signature']).toBeUndefined();
  });

  it('sends a key once within the dedupe window and again after it', async () => {
    const r = await receiver();
    agent = new Agent();
    const t = fakeTime();
    notifier = createWebhookNotifier({ url: r.url, redactor: new Redactor(), dispatcher: agent, logger: captureLog().logger, clock: t, sleep: t.autoSleep, dedupeMs: 60_000 });
    notifier.notify({ key: 'stale:w', event: 'alert.opened', text: 'one' });
    notifier.notify({ key: 'stale:w', event: 'alert.opened', text: 'two' });
    await notifier.close();
    t.advance(60_001);
    notifier = createWebhookNotifier({ url: r.url, redactor: new Redactor(), dispatcher: agent, logger: captureLog().logger, clock: t, sleep: t.autoSleep, dedupeMs: 60_000 });
    notifier.notify({ key: 'stale:w', event: 'alert.opened', text: 'three' });
    await r.next(2);
    expect(r.received.map((x) => x.body['text'])).toEqual(['one', 'three']);
  });

  it('forgets a key once the window has passed, within one notifier', async () => {
    const r = await receiver();
    agent = new Agent();
    const t = fakeTime();
    notifier = createWebhookNotifier({ url: r.url, redactor: new Redactor(), dispatcher: agent, logger: captureLog().logger, clock: t, sleep: t.autoSleep, dedupeMs: 60_000 });
    notifier.notify({ key: 'k', event: 'e', text: 'first' });
    await r.next(1);
    t.advance(60_001);
    notifier.notify({ key: 'k', event: 'e', text: 'again' });
    await r.next(2);
    expect(r.received.map((x) => x.body['text'])).toEqual(['first', 'again']);
  });

  it('paces POSTs to one per minIntervalMs, in order', async () => {
    const r = await receiver();
    agent = new Agent();
    const t = fakeTime();
    notifier = createWebhookNotifier({ url: r.url, redactor: new Redactor(), dispatcher: agent, logger: captureLog().logger, clock: t, sleep: t.autoSleep, minIntervalMs: 2000, maxBatch: 1 });
    for (const n of [1, 2, 3]) notifier.notify({ key: `k${n}`, event: 'e', text: `m${n}` });
    await r.next(3);
    expect(r.received.map((x) => x.body['text'])).toEqual(['m1', 'm2', 'm3']);
    expect(t.sleeps).toEqual([2000, 2000]);
  });

  it('drops what does not fit in the queue, warning once', async () => {
    const r = await receiver();
    agent = new Agent();
    const t = fakeTime();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const outcomes: NotificationOutcome[] = [];
    const log = captureLog();
    notifier = createWebhookNotifier({ redactor: new Redactor(),
      url: r.url,
      dispatcher: agent,
      logger: log.logger,
      clock: t,
      sleep: async (ms) => {
        await gate;
        return t.autoSleep(ms);
      },
      maxQueue: 2,
      maxBatch: 1,
      onOutcome: (o) => outcomes.push(o),
    });
    for (const n of [1, 2, 3, 4, 5]) notifier.notify({ key: `k${n}`, event: 'e', text: `m${n}` });
    // Without a store, failures wait in memory until delivered: the queue holds m1 and m2; m3..m5 do not fit
    await r.next(1);
    release();
    await notifier.close();
    expect(r.received.map((x) => x.body['text'])).toEqual(['m1', 'm2']);
    expect(outcomes).toEqual(['dropped', 'dropped', 'dropped', 'sent', 'sent']);
    expect(log.events('notify.webhook_dropped').map((l) => [l['level'], l['key']])).toEqual([
      ['warn', 'k3'],
      ['debug', 'k4'],
      ['debug', 'k5'],
    ]);
  });

  it('logs a failing webhook without its URL and never throws into the caller', async () => {
    const r = await receiver(() => 500);
    agent = new Agent();
    const t = fakeTime();
    const log = captureLog();
    const outcomes: NotificationOutcome[] = [];
    notifier = createWebhookNotifier({ redactor: new Redactor(),
      url: r.url,
      dispatcher: agent,
      logger: log.logger,
      clock: t,
      sleep: t.autoSleep,
      onOutcome: (o) => {
        outcomes.push(o);
        throw new Error('a broken metrics hook');
      },
    });
    expect(() => notifier?.notify({ key: 'k', event: 'e', text: 'x' })).not.toThrow();
    await notifier.close();
    // Tried once, then (no store to keep it in for the next start) lost at close, and counted so.
    expect(outcomes).toEqual(['failed', 'dropped']);
    expect(log.events('notify.webhook_failed')).toMatchObject([{ level: 'warn', status: 500 }]);
    expect(JSON.stringify(log.lines)).not.toContain('SECRET-TOKEN');
  });

  it('survives an unreachable webhook', async () => {
    const r = await receiver();
    const url = r.url;
    await stopReceivers(); // nothing listens there any more
    agent = new Agent();
    const log = captureLog();
    const outcomes: NotificationOutcome[] = [];
    notifier = createWebhookNotifier({ url, redactor: new Redactor(), dispatcher: agent, logger: log.logger, onOutcome: (o) => outcomes.push(o) });
    notifier.notify({ key: 'k', event: 'e', text: 'x' });
    await notifier.close();
    expect(outcomes).toEqual(['failed', 'dropped']);
    expect(log.events('notify.webhook_failed')).toHaveLength(1);
  });

  it('truncates text to what Discord accepts', async () => {
    const r = await receiver();
    agent = new Agent();
    notifier = createWebhookNotifier({ url: r.url, redactor: new Redactor(), dispatcher: agent, logger: captureLog().logger });
    notifier.notify({ key: 'long', event: 'e', text: 'x'.repeat(5000) });
    await r.next(1);
    expect(String(r.received[0]?.body['content'])).toHaveLength(2000);
  });

  it('accepts nothing once closed', async () => {
    const r = await receiver();
    agent = new Agent();
    notifier = createWebhookNotifier({ url: r.url, redactor: new Redactor(), dispatcher: agent, logger: captureLog().logger });
    await notifier.close();
    notifier.notify({ key: 'late', event: 'e', text: 'too late' });
    await notifier.close();
    expect(r.received).toEqual([]);
  });
});
