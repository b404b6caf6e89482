// The notification channels of the config schema (schema.ts): alerts.channels, each entry one
// Slack, Discord, Telegram, e-mail or PagerDuty receiver beside the webhook. What makes a channel
// work is a secret (a webhook URL with its token, a bot token, a password, a routing key): the YAML
// names where it is ({ env }, { file } or { credential }), never the value.
import { z } from 'zod';
import { SEVERITIES, WEBHOOK_CATEGORIES } from '../domain.js';
import { Duration, name, whenPresent } from './schema-fields.js';

/** A host name (labels of letters, digits and inner hyphens; IPv4 spells as one) or an IPv6 address. */
const SMTP_HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?|[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*)$/;

/** alerts.webhook.events and a channel's events: the categories, and the two shorthands. */
export const WEBHOOK_EVENT_NAMES = ['failures', 'all', ...WEBHOOK_CATEGORIES] as const;

export const EventNames = z
  .array(z.enum(WEBHOOK_EVENT_NAMES), { error: whenPresent(`expected a list of: ${WEBHOOK_EVENT_NAMES.join(', ')}`) })
  .min(1)
  .default(['failures'])
  .describe(
    'what is posted: failures (= rejected, failed, unknown, anomaly, config_invalid, stale, unknown_step, epoch_refused), all (failures and acknowledged), or any of those names',
  );

export const MinSeverity = z
  .enum(SEVERITIES)
  .describe(
    'notices below this are not sent here: info (acknowledgements), warning (an anomaly, a claim held in doubt, clock skew), error (a rejection, an unknown outcome, a stale wallet), critical (signing paused, an undetermined claim, the state database unreachable)',
  );

const SecretSource = (what: string) =>
  z
    .union(
      [
        z.strictObject({ file: z.string().min(1).describe('a mode-0600 file holding it') }),
        z.strictObject({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected an environment variable name' }).describe('an environment variable holding it') }),
        z.strictObject({
          credential: z
            .string()
            .regex(/^[A-Za-z0-9_@-][A-Za-z0-9_.@-]*$/, { error: 'expected a systemd credential name' })
            .describe('a systemd credential name, read from $CREDENTIALS_DIRECTORY'),
        }),
      ],
      { error: whenPresent('expected exactly one of { file: PATH }, { env: VARIABLE } or { credential: NAME }') },
    )
    .describe(`where the ${what} is (a secret): never the value itself`);

const common = {
  name: name('channel').optional().describe('names the channel in logs and the outbox; default its type (two channels of one type need names)'),
  min_severity: MinSeverity.default('warning'),
  events: EventNames,
  timeout: Duration.optional().describe('one request must finish within this; default alerts.webhook.timeout'),
  allow_link_local: z.boolean().default(false).describe('accept a URL on a link-local or cloud metadata address; refused by default'),
};

const Email = z.string().regex(/^[^\s@<>]+@[^\s@<>]+$/, { error: 'expected an e-mail address, e.g. ops@example.com' });

export const Channel = z
  .discriminatedUnion(
    'type',
    [
      z.strictObject({
        type: z.literal('slack'),
        ...common,
        url: SecretSource('Slack incoming-webhook URL'),
      }),
      z.strictObject({
        type: z.literal('discord'),
        ...common,
        url: SecretSource('Discord webhook URL'),
      }),
      z.strictObject({
        type: z.literal('telegram'),
        ...common,
        token: SecretSource('Telegram bot token'),
        chat_id: z.union([z.string().min(1), z.int()]).describe('the chat, group or channel to post to (a number, or @channelname)'),
        api_url: z.string().default('https://api.telegram.org').describe('the Bot API server; default https://api.telegram.org'),
      }),
      z.strictObject({
        type: z.literal('email'),
        ...common,
        // A name or an address, nothing more: nodemailer's connection URL (smtps://user:password@host)
        // written here put the password in every log line about the channel (its host) and in the
        // SMTP error kept in the outbox, and connected nowhere.
        host: z
          .string()
          .regex(SMTP_HOST, { error: "expected the SMTP server's host name or IP address, e.g. smtp.example.com: no scheme, login or port (port, username and password are keys of their own)" })
          .describe('the SMTP server (a host name or an IP address); the connection is upgraded with STARTTLS, or refused'),
        port: z.int().min(1).max(65535).default(587),
        from: Email.describe('the From address'),
        to: z.array(Email).min(1).describe('the recipients'),
        username: z.string().min(1).optional().describe('the SMTP login; none when absent'),
        password: SecretSource('SMTP password').optional(),
        ca_file: z.string().min(1).optional().describe("PEM file of the CA that signed the server's certificate, when not a public one"),
      }),
      z.strictObject({
        type: z.literal('pagerduty'),
        ...common,
        min_severity: MinSeverity.default('error'),
        routing_key: SecretSource('PagerDuty integration (routing) key'),
        url: z.string().default('https://events.pagerduty.com/v2/enqueue').describe('the Events API v2 endpoint'),
      }),
    ],
    { error: whenPresent('expected a channel: { type: slack | discord | telegram | email | pagerduty, ... }') },
  )
  .describe('a notification channel; see docs/operations.md');
