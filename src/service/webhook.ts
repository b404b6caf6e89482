// The webhook channel: a generic JSON POST. The payload carries both `text` (Slack) and `content`
// (Discord), plus `event`, `key`, `details` and `events` for anything else. With a secret, each POST
// is signed (HMAC-SHA256 over the timestamp and the exact body) so the receiver can tell it from a
// forgery. This file is the channel's formatter and transport only: keeping, retrying, redacting,
// pacing and the deadline are the notifier's (outbox.ts), which every channel shares.
import { createHmac } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { Clock } from '../domain.js';
import { systemClock } from '../domain.js';
import { type Logger } from '../log/logger.js';
import { toJson } from '../json.js';
import type { NotificationOutcome } from './metrics.js';
import { postJson, safeHost } from './channels/http.js';
import { createOutboxNotifier, type KeptNotice, type Notice, type NoticeChannel, type Notifier, type NotifierOptions, type OutboxStore, type SendResult } from './outbox.js';

export { retryAfterMs } from './channels/http.js';

/** A notice, as the webhook's callers name it. */
export type WebhookEvent = Notice;
export type WebhookNotifier = Notifier;

interface WebhookOptions {
  /** Often a secret in itself (Slack, Discord): never logged; register it with the Redactor. */
  url: string;
  /** Signs every POST (see signWebhookBody); register it with the Redactor too. */
  secret?: string | undefined;
  /** Scrubs every notice and every body before it leaves: the logger's Redactor. Required. */
  redactor: { redact(text: string): string };
  /** Where failure notices are kept until delivered (the state store); in memory when absent. */
  store?: OutboxStore | undefined;
  dispatcher?: Dispatcher;
  logger: Logger;
  /** One POST, headers and body, within this; default 10 s (alerts.webhook.timeout). */
  timeoutMs?: number;
  clock?: Clock;
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

/** The webhook as a channel: its payload, and one POST under the notifier's deadline. */
export function webhookChannel(opts: { url: string; secret?: string | undefined; dispatcher?: Dispatcher | undefined; clock?: Clock; timeoutMs?: number }): NoticeChannel {
  const clock = opts.clock ?? systemClock;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return {
    name: 'webhook',
    host: safeHost(opts.url),
    format: (batch) => toJson(payload(batch)),
    async send(body, signal): Promise<SendResult> {
      const headers: Record<string, string> = {};
      if (opts.secret !== undefined) {
        const ts = Math.floor(clock.now() / 1000);
        headers[TIMESTAMP_HEADER] = String(ts);
        headers[SIGNATURE_HEADER] = signWebhookBody(opts.secret, ts, body);
      }
      return postJson({ url: opts.url, body, headers, signal, dispatcher: opts.dispatcher, timeoutMs, now: clock.now() });
    },
  };
}

/** The webhook notifier: the webhook channel behind the shared notifier (outbox.ts). */
export function createWebhookNotifier(opts: WebhookOptions & Omit<NotifierOptions, 'channel' | 'logger' | 'redactor' | 'store' | 'clock' | 'sleep' | 'onOutcome' | 'deadlineMs'>): WebhookNotifier {
  const { url, secret, dispatcher, timeoutMs, ...rest } = opts;
  return createOutboxNotifier({
    ...rest,
    channel: webhookChannel({ url, secret, dispatcher, clock: opts.clock, ...(timeoutMs === undefined ? {} : { timeoutMs }) }),
    ...(timeoutMs === undefined ? {} : { deadlineMs: timeoutMs }),
  });
}

/**
 * One event: its own `event`, `key`, `details` at the top, as a receiver filtering on them expects.
 * Several: `event: "batch"`, one line of `text` each, and every event whole in `events`.
 */
function payload(batch: readonly KeptNotice[]): Record<string, unknown> {
  const events = batch.map((e) => ({ event: e.event, key: e.key, text: e.text, at: new Date(e.at).toISOString(), details: e.details }));
  const first = events[0];
  const joined = events.length === 1 ? (first?.text ?? '') : `${events.length} autoclaim notifications:\n${events.map((e) => `• ${e.text}`).join('\n')}`;
  const text = joined.length > DISCORD_CONTENT_MAX ? `${joined.slice(0, DISCORD_CONTENT_MAX - 1)}…` : joined;
  if (events.length === 1 && first !== undefined) return { text, content: text, event: first.event, key: first.key, at: first.at, details: first.details, events };
  return { text, content: text, event: 'batch', key: `batch:${first?.key ?? ''}`, at: first?.at, details: { count: events.length }, events };
}
