// From a channel of alerts.channels to a NoticeChannel: its secrets read where the config says
// (env, file, credential) and registered with the redactor before anything is sent, its URL
// checked by the webhook's rules, and the batch size its API allows.
import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { channelSecretSources, resolveChannelSecret } from '../../config/secrets.js';
import { webhookUrlProblem } from '../../config/webhook-url.js';
import type { ChannelConfig, Clock } from '../../domain.js';
import { ConfigError } from '../../errors.js';
import type { Redactor } from '../../log/redact.js';
import type { NoticeChannel } from '../outbox.js';
import { DISCORD_MAX_BATCH, discordChannel } from './discord.js';
import { EMAIL_MAX_BATCH, emailChannel } from './email.js';
import { PAGERDUTY_MAX_BATCH, pagerdutyChannel } from './pagerduty.js';
import { SLACK_MAX_BATCH, slackChannel } from './slack.js';
import { TELEGRAM_MAX_BATCH, telegramChannel } from './telegram.js';

export interface BuiltChannel {
  channel: NoticeChannel;
  /** Notices in one request, as the API allows. */
  maxBatch: number;
  /**
   * A digest of what it sends with and where (the entry but its events and min_severity, and the
   * secrets' values): equal after a reload, the running channel is kept. Held in memory only.
   */
  fingerprint: string;
}

/** Throws KeyError for a secret that is not set or unreadable, ConfigError for a URL refused. */
export function buildChannel(c: ChannelConfig, o: { env: NodeJS.ProcessEnv; redactor: Redactor; clock?: Clock | undefined; dispatcher?: Dispatcher | undefined }): BuiltChannel {
  const secrets = new Map<string, string>();
  for (const [key, source] of channelSecretSources(c)) {
    const value = resolveChannelSecret(source, `channel ${c.name}'s ${key}`, o.env);
    o.redactor.add(value);
    secrets.set(key, value);
  }
  const secret = (key: string): string => secrets.get(key) ?? '';
  const { events: _events, minSeverity: _minSeverity, ...sending } = c;
  const fingerprint = createHash('sha256').update(JSON.stringify([sending, [...secrets]])).digest('hex');
  const common = { name: c.name, dispatcher: o.dispatcher, timeoutMs: c.timeoutMs, ...(o.clock === undefined ? {} : { clock: o.clock }) };
  const checked = (url: string): string => {
    const problem = webhookUrlProblem(url, c.allowLinkLocal);
    if (problem !== undefined) throw new ConfigError([{ file: 'config', line: 0, col: 0, path: `alerts.channels (${c.name})`, message: `channel ${c.name}: the URL ${problem}` }]);
    return url;
  };
  switch (c.type) {
    case 'slack':
      return { channel: slackChannel({ ...common, url: checked(secret('url')) }), maxBatch: SLACK_MAX_BATCH, fingerprint };
    case 'discord':
      return { channel: discordChannel({ ...common, url: checked(secret('url')) }), maxBatch: DISCORD_MAX_BATCH, fingerprint };
    case 'telegram':
      return { channel: telegramChannel({ ...common, apiUrl: checked(c.apiUrl), token: secret('token'), chatId: c.chatId }), maxBatch: TELEGRAM_MAX_BATCH, fingerprint };
    case 'pagerduty':
      return { channel: pagerdutyChannel({ ...common, url: checked(c.url), routingKey: secret('routing_key') }), maxBatch: PAGERDUTY_MAX_BATCH, fingerprint };
    case 'email': {
      const { host, port, from, to, username, caFile } = c;
      const password = c.password === undefined ? undefined : secret('password');
      // The password crosses the wire base64-encoded (AUTH LOGIN's line; AUTH PLAIN's
      // \0user\0password), and a server's refusal may quote what it got: those spellings too.
      if (password !== undefined) o.redactor.add(Buffer.from(password).toString('base64')).add(Buffer.from(`\0${username ?? ''}\0${password}`).toString('base64'));
      return { channel: emailChannel({ name: c.name, host, port, from, to, username, password, caFile, timeoutMs: c.timeoutMs, ...(o.clock === undefined ? {} : { clock: o.clock }) }), maxBatch: EMAIL_MAX_BATCH, fingerprint };
    }
  }
}
