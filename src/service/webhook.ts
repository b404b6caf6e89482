// Optional notifications to a generic JSON webhook. The payload carries both `text` (Slack) and
// `content` (Discord), plus `event`, `key`, `details` and `events` for anything else.
//
// Failures reach a human first: events wait in two bounded queues, failures and information
// (acknowledgements), and every POST takes failures before anything else, so ten thousand
// acknowledgements can neither delay nor push out one rejected step. Each POST carries up to
// maxBatch events, paced to one POST per minIntervalMs, deduplicated by key. With a secret, each
// POST is signed (HMAC-SHA256 over the timestamp and the exact body) so the receiver can tell it
// from a forgery. Fire-and-forget: notify() never blocks, never throws, and a dead webhook costs
// the daemon a log line, nothing more.
import { createHmac } from 'node:crypto';
import { request, type Dispatcher } from 'undici';
import type { Clock } from '../domain.js';
import { systemClock } from '../domain.js';
import { type Logger } from '../log/logger.js';
import { toJson } from '../json.js';
import type { NotificationOutcome } from './metrics.js';

type WebhookPriority = 'failure' | 'info';

export interface WebhookEvent {
  /** Same key within the dedupe window = sent once, e.g. "rejected:step:42". */
  key: string;
  /** The log event it mirrors, e.g. "action.rejected", "alert.opened". */
  event: string;
  text: string;
  details?: Record<string, unknown>;
  /** Which queue it waits in; default `failure`. Acknowledgements are `info`. */
  priority?: WebhookPriority;
}

export interface WebhookNotifier {
  notify(event: WebhookEvent): void;
  /** Stops accepting events and waits (up to timeoutMs) for the queues to drain. */
  close(timeoutMs?: number): Promise<void>;
}

interface WebhookOptions {
  /** Often a secret in itself (Slack, Discord): never logged; register it with the Redactor. */
  url: string;
  /** Signs every POST (see signWebhookBody); register it with the Redactor too. */
  secret?: string | undefined;
  dispatcher?: Dispatcher;
  logger: Logger;
  /** At most one POST per this many ms; default 2000 (Discord allows ~30 a minute). */
  minIntervalMs?: number;
  /** A key seen within this window is dropped; default 1 hour. */
  dedupeMs?: number;
  /** Failures waiting beyond this are dropped; default 1000. */
  maxQueue?: number;
  /** Information (acknowledgements) waiting beyond this is dropped; default 100. */
  maxInfoQueue?: number;
  /** Events in one POST; default 20. */
  maxBatch?: number;
  timeoutMs?: number;
  clock?: Clock;
  /** How the wait between POSTs is done; tests pass one that moves a fake clock. */
  sleep?: (ms: number) => Promise<void>;
  onOutcome?: (outcome: NotificationOutcome) => void;
}

/** Header names of a signed POST. */
const SIGNATURE_HEADER = 'x-autoclaim-signature';
const TIMESTAMP_HEADER = 'x-autoclaim-timestamp';

/**
 * The signature header's value: `sha256=` and the hex HMAC-SHA256, keyed by the secret, of
 * `<timestamp>.<body>`, the body byte for byte as sent. The timestamp (Unix seconds, also sent in
 * its own header) is inside the MAC, so a receiver that refuses old timestamps refuses replays.
 */
export function signWebhookBody(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

const DISCORD_CONTENT_MAX = 2000;

interface Queued extends WebhookEvent {
  at: number;
}

export function createWebhookNotifier(opts: WebhookOptions): WebhookNotifier {
  const clock = opts.clock ?? systemClock;
  const minInterval = opts.minIntervalMs ?? 2000;
  const dedupeMs = opts.dedupeMs ?? 3_600_000;
  const bounds: Record<WebhookPriority, number> = { failure: opts.maxQueue ?? 1000, info: opts.maxInfoQueue ?? 100 };
  const maxBatch = Math.max(1, opts.maxBatch ?? 20);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const sleep = opts.sleep ?? defaultSleep;
  const log = opts.logger;
  const host = safeHost(opts.url);

  const seen = new Map<string, number>(); // key → monotonic ms when accepted
  const queues: Record<WebhookPriority, Queued[]> = { failure: [], info: [] };
  const dropWarned: Record<WebhookPriority, boolean> = { failure: false, info: false };
  let lastPostAt: number | undefined;
  let draining: Promise<void> | undefined;
  let closed = false;

  const waiting = (): number => queues.failure.length + queues.info.length;

  const outcome = (o: NotificationOutcome, n = 1): void => {
    try {
      for (let i = 0; i < n; i++) opts.onOutcome?.(o);
    } catch {
      // a metrics hook must not break notifications
    }
  };

  /** The next POST's events: failures first, then information, up to maxBatch. */
  const nextBatch = (): Queued[] => {
    const batch = queues.failure.splice(0, maxBatch);
    if (batch.length < maxBatch) batch.push(...queues.info.splice(0, maxBatch - batch.length));
    return batch;
  };

  const post = async (batch: Queued[]): Promise<void> => {
    const body = toJson(payload(batch));
    const keys = batch.map((e) => e.key);
    const key = keys.length === 1 ? keys[0] : `${keys[0]} (+${keys.length - 1})`;
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'autoclaim' };
    if (opts.secret !== undefined) {
      const ts = Math.floor(clock.now() / 1000);
      headers[TIMESTAMP_HEADER] = String(ts);
      headers[SIGNATURE_HEADER] = signWebhookBody(opts.secret, ts, body);
    }
    try {
      const res = await request(opts.url, {
        method: 'POST',
        headers,
        body,
        dispatcher: opts.dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) {
        outcome('sent', batch.length);
        log.debug({ event: 'notify.webhook_sent', key, events: batch.length, host }, 'webhook notification sent');
      } else {
        outcome('failed', batch.length);
        log.warn({ event: 'notify.webhook_failed', key, events: batch.length, host, status: res.statusCode }, `webhook answered ${res.statusCode}`);
      }
    } catch (err) {
      outcome('failed', batch.length);
      // The error's message may quote the URL; the Redactor scrubs it if the daemon registered it.
      log.warn({ event: 'notify.webhook_failed', key, events: batch.length, host, err }, 'webhook notification failed');
    }
  };

  const drain = async (): Promise<void> => {
    for (;;) {
      if (lastPostAt !== undefined && waiting() > 0) {
        const wait = lastPostAt + minInterval - clock.monotonic();
        if (wait > 0) await sleep(wait);
      }
      // Taken after the wait: a failure that arrived meanwhile goes ahead of older information.
      const batch = nextBatch();
      if (batch.length === 0) return;
      lastPostAt = clock.monotonic();
      await post(batch);
    }
  };

  const kick = (): void => {
    draining ??= drain()
      .catch((err: unknown) => log.warn({ event: 'notify.webhook_failed', host, err }, 'webhook queue failed'))
      .finally(() => {
        draining = undefined;
        if (waiting() > 0 && !closed) kick();
      });
  };

  return {
    notify(e) {
      try {
        if (closed) return;
        const now = clock.monotonic();
        for (const [k, at] of seen) if (now - at > dedupeMs) seen.delete(k);
        if (seen.has(e.key)) return;
        const priority = e.priority ?? 'failure';
        const queue = queues[priority];
        if (queue.length >= bounds[priority]) {
          outcome('dropped');
          const level = dropWarned[priority] ? 'debug' : 'warn';
          log[level]({ event: 'notify.webhook_dropped', key: e.key, priority, queued: queue.length }, `webhook ${priority} queue full; notification dropped`);
          dropWarned[priority] = true;
          return;
        }
        seen.set(e.key, now);
        queue.push({ ...e, at: clock.now() });
        kick();
      } catch (err) {
        log.warn({ event: 'notify.webhook_failed', host, err }, 'webhook notification not queued');
      }
    },
    async close(closeTimeoutMs = 5000) {
      closed = true;
      if (draining === undefined) return;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, closeTimeoutMs);
      });
      await Promise.race([draining, deadline]);
      clearTimeout(timer);
      const left = waiting();
      if (left > 0) {
        outcome('dropped', left);
        log.warn({ event: 'notify.webhook_dropped', queued: left }, 'shutting down with webhook notifications unsent');
        queues.failure.length = 0;
        queues.info.length = 0;
      }
    },
  };
}

/**
 * One event: its own `event`, `key`, `details` at the top, as a receiver filtering on them expects.
 * Several: `event: "batch"`, one line of `text` each, and every event whole in `events`.
 */
function payload(batch: Queued[]): Record<string, unknown> {
  const events = batch.map((e) => ({ event: e.event, key: e.key, text: e.text, at: new Date(e.at).toISOString(), details: e.details ?? {} }));
  const first = events[0];
  const joined = events.length === 1 ? (first?.text ?? '') : `${events.length} autoclaim notifications:\n${events.map((e) => `• ${e.text}`).join('\n')}`;
  const text = joined.length > DISCORD_CONTENT_MAX ? `${joined.slice(0, DISCORD_CONTENT_MAX - 1)}…` : joined;
  if (events.length === 1 && first !== undefined) return { text, content: text, event: first.event, key: first.key, at: first.at, details: first.details, events };
  return { text, content: text, event: 'batch', key: `batch:${first?.key ?? ''}`, at: first?.at, details: { count: events.length }, events };
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid-url';
  }
}
