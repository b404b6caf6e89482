// Optional notifications to a generic JSON webhook. The payload carries both `text` (Slack) and
// `content` (Discord), plus `event`, `key` and `details` for anything else. Deduplicated by key,
// paced to one POST per minIntervalMs through a bounded queue, and fire-and-forget: notify() never
// blocks, never throws, and a dead webhook costs the daemon a log line, nothing more.
import { request, type Dispatcher } from 'undici';
import type { Clock } from '../domain.js';
import { systemClock } from '../domain.js';
import { toJson, type Logger } from '../log/logger.js';
import type { NotificationOutcome } from './metrics.js';

export interface WebhookEvent {
  /** Same key within the dedupe window = sent once, e.g. "acknowledged:step:42". */
  key: string;
  /** The log event it mirrors, e.g. "action.acknowledged", "alert.opened". */
  event: string;
  text: string;
  details?: Record<string, unknown>;
}

export interface WebhookNotifier {
  notify(event: WebhookEvent): void;
  /** Stops accepting events and waits (up to timeoutMs) for the queue to drain. */
  close(timeoutMs?: number): Promise<void>;
}

export interface WebhookOptions {
  /** Often a secret in itself (Slack, Discord): never logged; register it with the Redactor. */
  url: string;
  dispatcher?: Dispatcher;
  logger: Logger;
  /** At most one POST per this many ms; default 2000 (Discord allows ~30 a minute). */
  minIntervalMs?: number;
  /** A key seen within this window is dropped; default 1 hour. */
  dedupeMs?: number;
  /** Events waiting beyond this are dropped; default 100. */
  maxQueue?: number;
  timeoutMs?: number;
  clock?: Clock;
  /** How the wait between POSTs is done; tests pass one that moves a fake clock. */
  sleep?: (ms: number) => Promise<void>;
  onOutcome?: (outcome: NotificationOutcome) => void;
}

const DISCORD_CONTENT_MAX = 2000;

export function createWebhookNotifier(opts: WebhookOptions): WebhookNotifier {
  const clock = opts.clock ?? systemClock;
  const minInterval = opts.minIntervalMs ?? 2000;
  const dedupeMs = opts.dedupeMs ?? 3_600_000;
  const maxQueue = opts.maxQueue ?? 100;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const sleep = opts.sleep ?? defaultSleep;
  const log = opts.logger;
  const host = safeHost(opts.url);

  const seen = new Map<string, number>(); // key → monotonic ms when accepted
  const queue: WebhookEvent[] = [];
  let lastPostAt: number | undefined;
  let draining: Promise<void> | undefined;
  let closed = false;
  let dropWarned = false;

  const outcome = (o: NotificationOutcome): void => {
    try {
      opts.onOutcome?.(o);
    } catch {
      // a metrics hook must not break notifications
    }
  };

  const post = async (e: WebhookEvent): Promise<void> => {
    const text = e.text.length > DISCORD_CONTENT_MAX ? `${e.text.slice(0, DISCORD_CONTENT_MAX - 1)}…` : e.text;
    const body = toJson({ text, content: text, event: e.event, key: e.key, at: new Date(clock.now()).toISOString(), details: e.details ?? {} });
    try {
      const res = await request(opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'autoclaim' },
        body,
        dispatcher: opts.dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) {
        outcome('sent');
        log.debug({ event: 'notify.webhook_sent', key: e.key, host }, 'webhook notification sent');
      } else {
        outcome('failed');
        log.warn({ event: 'notify.webhook_failed', key: e.key, host, status: res.statusCode }, `webhook answered ${res.statusCode}`);
      }
    } catch (err) {
      outcome('failed');
      // The error's message may quote the URL; the Redactor scrubs it if the daemon registered it.
      log.warn({ event: 'notify.webhook_failed', key: e.key, host, err }, 'webhook notification failed');
    }
  };

  const drain = async (): Promise<void> => {
    for (let e = queue.shift(); e !== undefined; e = queue.shift()) {
      if (lastPostAt !== undefined) {
        const wait = lastPostAt + minInterval - clock.monotonic();
        if (wait > 0) await sleep(wait);
      }
      lastPostAt = clock.monotonic();
      await post(e);
    }
  };

  const kick = (): void => {
    draining ??= drain()
      .catch((err: unknown) => log.warn({ event: 'notify.webhook_failed', host, err }, 'webhook queue failed'))
      .finally(() => {
        draining = undefined;
        if (queue.length > 0 && !closed) kick();
      });
  };

  return {
    notify(e) {
      try {
        if (closed) return;
        const now = clock.monotonic();
        for (const [k, at] of seen) if (now - at > dedupeMs) seen.delete(k);
        if (seen.has(e.key)) return;
        if (queue.length >= maxQueue) {
          outcome('dropped');
          log[dropWarned ? 'debug' : 'warn']({ event: 'notify.webhook_dropped', key: e.key, queued: queue.length }, 'webhook queue full; notification dropped');
          dropWarned = true;
          return;
        }
        seen.set(e.key, now);
        queue.push(e);
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
      if (queue.length > 0) {
        log.warn({ event: 'notify.webhook_dropped', queued: queue.length }, 'shutting down with webhook notifications unsent');
        queue.length = 0;
      }
    },
  };
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
