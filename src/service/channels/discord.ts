// Discord: a channel webhook (https://discord.com/developers/docs/resources/webhook#execute-webhook)
// posted embeds (https://discord.com/developers/docs/resources/message#embed-object): one per notice,
// up to 10 a message, coloured by severity, the facts as inline fields. Discord's limits: title 256,
// description 4096, 25 fields of name 256 / value 1024, 6000 characters over all embeds.
// `allowed_mentions: { parse: [] }`, so a server message saying @everyone pings nobody; a masked
// link's `](` escaped, so it cannot forge a link either (as slack.ts escapes mrkdwn).
import type { Dispatcher } from 'undici';
import type { Clock } from '../../domain.js';
import { systemClock } from '../../domain.js';
import { toJson } from '../../json.js';
import type { KeptNotice, NoticeChannel } from '../outbox.js';
import { clip, factsOf } from './facts.js';
import { postJson, safeHost } from './http.js';

export const DISCORD_MAX_BATCH = 10;

/** Green for a resolve; blue, amber, red, dark red by severity. */
const COLOUR = { resolved: 0x2eb67d, info: 0x3b88c3, warning: 0xf2a900, error: 0xe01e5a, critical: 0x8b0000 } as const;

export function discordChannel(opts: { name?: string; url: string; dispatcher?: Dispatcher | undefined; clock?: Clock; timeoutMs?: number }): NoticeChannel {
  const clock = opts.clock ?? systemClock;
  return {
    name: opts.name ?? 'discord',
    host: safeHost(opts.url),
    format: (batch) => toJson(discordPayload(batch)),
    send: (body, signal) => postJson({ url: opts.url, body, signal, dispatcher: opts.dispatcher, timeoutMs: opts.timeoutMs ?? 10_000, now: clock.now() }),
  };
}

export function discordPayload(batch: readonly KeptNotice[]): Record<string, unknown> {
  const notices = batch.slice(0, DISCORD_MAX_BATCH);
  // 6000 characters across every embed: each gets its share, fields included.
  const share = Math.floor(5800 / Math.max(1, notices.length));
  const embeds = notices.map((n) => {
    const f = factsOf(n);
    const title = clip(f.title, 256);
    const fields = f.fields.slice(0, 25).map(([name, value]) => ({ name: clip(name, 256), value: clip(escape(value), Math.min(1024, Math.floor(share / 12))), inline: true }));
    const used = title.length + fields.reduce((sum, x) => sum + x.name.length + x.value.length, 0) + 40;
    return {
      title,
      description: clip(escape(n.text), Math.max(100, Math.min(4096, share - used))),
      color: f.resolved ? COLOUR.resolved : COLOUR[f.severity],
      fields,
      timestamp: new Date(n.at).toISOString(),
      footer: { text: clip(['autoclaim', f.origin].filter((v) => v !== '').join(' · '), 2048) },
    };
  });
  return { username: 'autoclaim', allowed_mentions: { parse: [] }, embeds };
}

/**
 * Discord renders `[label](url)` in an embed's description and field values as a link that shows
 * only the label: from a server's words, a link whose target the operator cannot see. A link needs
 * `](` as written; a backslash between the two (Discord shows `\(` as `(`) leaves the text as it
 * reads, a `[REDACTED]` included.
 */
function escape(s: string): string {
  return s.replace(/\]\(/g, ']\\(');
}
