// Telegram: the Bot API's sendMessage (https://core.telegram.org/bots/api#sendmessage), POST
// {api_url}/bot<token>/sendMessage with { chat_id, text, link_preview_options }. Plain text (no
// parse_mode): nothing a server message says can be read as markup. One message a batch, within the
// 4096 characters a message may hold. The token is in the URL's path, so the host alone is logged,
// and the token is registered with the redactor like every secret.
import type { Dispatcher } from 'undici';
import type { Clock } from '../../domain.js';
import { systemClock } from '../../domain.js';
import { toJson } from '../../json.js';
import type { KeptNotice, NoticeChannel } from '../outbox.js';
import { clip, factsOf } from './facts.js';
import { postJson, safeHost } from './http.js';

export const TELEGRAM_MAX_BATCH = 5;
const TEXT_MAX = 4096;
const MARK = { info: 'ℹ️', warning: '⚠️', error: '🔴', critical: '🚨' } as const;

export function telegramChannel(opts: { name?: string; apiUrl: string; token: string; chatId: string; dispatcher?: Dispatcher | undefined; clock?: Clock; timeoutMs?: number }): NoticeChannel {
  const clock = opts.clock ?? systemClock;
  const url = `${opts.apiUrl.replace(/\/+$/, '')}/bot${opts.token}/sendMessage`;
  return {
    name: opts.name ?? 'telegram',
    host: safeHost(opts.apiUrl),
    format: (batch) => toJson(telegramPayload(batch, opts.chatId)),
    send: (body, signal) => postJson({ url, body, signal, dispatcher: opts.dispatcher, timeoutMs: opts.timeoutMs ?? 10_000, now: clock.now() }),
  };
}

export function telegramPayload(batch: readonly KeptNotice[], chatId: string): Record<string, unknown> {
  const share = Math.floor(TEXT_MAX / Math.max(1, batch.length)) - 2;
  const parts = batch.map((n) => {
    const f = factsOf(n);
    const lines = [`${f.resolved ? '✅' : MARK[f.severity]} ${f.title}`, n.text, ...f.fields.map(([label, value]) => `${label}: ${value}`)];
    return clip(lines.join('\n'), share);
  });
  return { chat_id: chatId, text: clip(parts.join('\n\n'), TEXT_MAX), link_preview_options: { is_disabled: true } };
}
