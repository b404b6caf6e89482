// One JSON POST under the notifier's deadline, for every channel that speaks HTTP (the webhook,
// Slack, Discord, Telegram, PagerDuty): 2xx is delivered; anything else is not, with the
// receiver's Retry-After when it gives one. Never rejects. Keeping, retrying and redacting are the
// notifier's (outbox.ts).
import { request, type Dispatcher } from 'undici';
import type { SendResult } from '../outbox.js';

export interface PostOptions {
  url: string;
  body: string;
  headers?: Record<string, string>;
  signal: AbortSignal;
  dispatcher?: Dispatcher | undefined;
  timeoutMs: number;
  now: number;
}

export async function postJson(o: PostOptions): Promise<SendResult> {
  const headers = { 'content-type': 'application/json', 'user-agent': 'autoclaim', ...o.headers };
  try {
    // undici's own timeouts bound each wait; the signal bounds the whole exchange, so a receiver
    // dripping its answer a byte at a time is cut at the deadline all the same.
    const res = await request(o.url, { method: 'POST', headers, body: o.body, dispatcher: o.dispatcher, headersTimeout: o.timeoutMs, bodyTimeout: o.timeoutMs, signal: o.signal });
    if (res.statusCode >= 200 && res.statusCode < 300) {
      await res.body.dump({ limit: 64 * 1024, signal: o.signal });
      return { ok: true, status: res.statusCode };
    }
    const text = await boundedText(res.body, 64 * 1024);
    const after = retryAfterMs(res.headers['retry-after'], o.now) ?? retryAfterInBody(text);
    return { ok: false, status: res.statusCode, error: `answered ${res.statusCode}`, retryAfterMs: after };
  } catch (err) {
    const why = o.signal.aborted ? reason(o.signal.reason) : err instanceof Error ? err.message : String(err);
    return { ok: false, error: why };
  }
}

/**
 * Retry-After in ms from `now`: delta-seconds or an HTTP date (RFC 9110 10.2.3); undefined when
 * absent or unreadable. The notifier caps it.
 */
export function retryAfterMs(header: string | string[] | undefined, now: number): number | undefined {
  const v = (Array.isArray(header) ? header[0] : header)?.trim();
  if (v === undefined || v === '') return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/[A-Za-z]/.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The first `limit` bytes of an answer, the rest discarded. */
async function boundedText(body: AsyncIterable<Buffer>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < limit) chunks.push(chunk.subarray(0, limit - size));
    size += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Telegram and Discord say when to come back in the body of a 429, in seconds:
 * `{"parameters":{"retry_after":N}}` (Bot API) or `{"retry_after":N.M}` (Discord).
 */
function retryAfterInBody(text: string): number | undefined {
  try {
    const j = JSON.parse(text) as { retry_after?: unknown; parameters?: { retry_after?: unknown } };
    const s = j.parameters?.retry_after ?? j.retry_after;
    return typeof s === 'number' && Number.isFinite(s) && s >= 0 ? Math.ceil(s * 1000) : undefined;
  } catch {
    return undefined;
  }
}

export function reason(r: unknown): string {
  return r instanceof Error ? r.message : String(r);
}

/** Where a URL goes, for logs: the host, never the URL (a URL may be a secret). */
export function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid-url';
  }
}
