// alerts.channels from what the schema accepted to the ChannelConfig the notifier reads: names
// made unique, durations in ms, relative paths from the config's directory, and the URLs that are
// not secrets (Telegram's API server, PagerDuty's endpoint) checked by the webhook's rules
// (webhook-url.ts). URLs that are secrets (Slack, Discord) are checked where they are read
// (key-check.ts), with a message that never quotes them.
import { WEBHOOK_CATEGORIES, type ChannelConfig, type InProcessKeySource, type WebhookCategory } from '../domain.js';
import type { Path } from './positions.js';
import type { ResolveContext } from './resolve.js';
import type { RawConfig } from './schema.js';
import { hasUrlCredentials, URL_CREDENTIALS_PROBLEM } from './url-credentials.js';
import { webhookUrlProblem } from './webhook-url.js';

interface Helpers {
  positiveDuration(text: string, path: Path): number;
  fromConfigDir(p: string): string;
}

export function resolveChannels(raw: RawConfig['alerts'], ctx: ResolveContext, h: Helpers): ChannelConfig[] {
  const defaultTimeoutMs = h.positiveDuration(raw.webhook.timeout, ['alerts', 'webhook', 'timeout']);
  const taken = new Map<string, number>([['webhook', -1]]);
  return raw.channels.map((c, i) => {
    const at: Path = ['alerts', 'channels', i];
    const name = c.name ?? c.type;
    const before = taken.get(name);
    if (before !== undefined) {
      const other = before < 0 ? 'the webhook' : `alerts.channels[${before}]`;
      ctx.issues.error([...at, c.name === undefined ? 'type' : 'name'], `channel name "${name}" is also ${other}'s: give each channel of one type its own name`);
    }
    taken.set(name, i);
    const base = {
      name,
      minSeverity: c.min_severity,
      events: webhookEvents(c.events),
      timeoutMs: c.timeout === undefined ? defaultTimeoutMs : h.positiveDuration(c.timeout, [...at, 'timeout']),
      allowLinkLocal: c.allow_link_local,
    };
    const url = (text: string, key: string): string => {
      const problem = webhookUrlProblem(text, c.allow_link_local) ?? (hasUrlCredentials(text) ? URL_CREDENTIALS_PROBLEM : undefined);
      if (problem !== undefined) ctx.issues.error([...at, key], `this URL ${problem}`);
      return text.replace(/\/+$/, '');
    };
    switch (c.type) {
      case 'slack':
      case 'discord':
        return { ...base, type: c.type, url: source(c.url, h) };
      case 'telegram':
        return { ...base, type: c.type, token: source(c.token, h), chatId: String(c.chat_id), apiUrl: url(c.api_url, 'api_url') };
      case 'pagerduty':
        return { ...base, type: c.type, routingKey: source(c.routing_key, h), url: url(c.url, 'url') };
      case 'email':
        return {
          ...base,
          type: c.type,
          host: c.host,
          port: c.port,
          from: c.from,
          to: c.to,
          username: c.username,
          password: c.password === undefined ? undefined : source(c.password, h),
          caFile: c.ca_file === undefined ? undefined : h.fromConfigDir(c.ca_file),
        };
    }
  });
}

function source(s: InProcessKeySource, h: Helpers): InProcessKeySource {
  return 'file' in s ? { file: h.fromConfigDir(s.file) } : s;
}

/** The shorthands expanded: `failures` is every category but `acknowledged`; `all` is every one. */
export function webhookEvents(names: readonly string[]): WebhookCategory[] {
  const out = new Set<WebhookCategory>();
  for (const name of names) {
    if (name === 'all' || name === 'failures') {
      for (const c of WEBHOOK_CATEGORIES) if (name === 'all' || c !== 'acknowledged') out.add(c);
    } else if ((WEBHOOK_CATEGORIES as readonly string[]).includes(name)) out.add(name as WebhookCategory);
  }
  return WEBHOOK_CATEGORIES.filter((c) => out.has(c));
}
