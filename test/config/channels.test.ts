// alerts.channels (issue 27): each channel's settings resolved, secrets named by source and never
// written in the YAML, names unique, URLs that are not secrets checked by the webhook's rules, and
// (with the key step, as `check` runs it) every secret read where the config says, its URL checked,
// registered with the redactor; problems placed at the channel's key. Existing configs (no
// channels, alerts.webhook as before) stay valid.
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { Redactor } from '../../src/log/redact.js';
import { BASE, formatted, TempDir } from './helpers.js';

let dir: TempDir | undefined;
afterEach(() => dir?.remove());

const CHANNELS = `alerts:
  webhook:
    min_severity: error
  channels:
    - type: slack
      url: { env: SLACK_URL }
    - type: discord
      name: discord-ops
      min_severity: critical
      url: { credential: discord_url }
    - type: telegram
      token: { env: TG_TOKEN }
      chat_id: -1001234567890
    - type: email
      host: smtp.example.com
      from: autoclaim@example.com
      to: [ops@example.com]
      username: autoclaim
      password: { file: ./smtp_password }
    - type: pagerduty
      routing_key: { env: PD_KEY }
      events: [all]
`;

describe('alerts.channels', () => {
  it('resolves every channel type with its defaults; alerts.webhook as before', () => {
    dir = new TempDir();
    dir.write('config.yaml', BASE + CHANNELS);
    const r = dir.load('config.yaml');
    expect(formatted(r).errors).toEqual([]);
    const alerts = r.config?.alerts;
    expect(alerts?.webhookMinSeverity).toBe('error');
    expect(alerts?.channels.map((c) => [c.type, c.name, c.minSeverity, c.timeoutMs])).toEqual([
      ['slack', 'slack', 'warning', 10_000],
      ['discord', 'discord-ops', 'critical', 10_000],
      ['telegram', 'telegram', 'warning', 10_000],
      ['email', 'email', 'warning', 10_000],
      ['pagerduty', 'pagerduty', 'error', 10_000],
    ]);
    expect(alerts?.channels[2]).toMatchObject({ chatId: '-1001234567890', apiUrl: 'https://api.telegram.org' });
    expect(alerts?.channels[3]).toMatchObject({ port: 587, password: { file: `${dir.path}/smtp_password` } });
    expect(alerts?.channels[4]).toMatchObject({ url: 'https://events.pagerduty.com/v2/enqueue', events: expect.arrayContaining(['acknowledged']) as unknown });
    // A config without channels is what it was.
    dir.write('plain.yaml', BASE);
    expect(dir.load('plain.yaml').config?.alerts).toMatchObject({ channels: [], webhookMinSeverity: 'info' });
  });

  it('refuses a secret written in the YAML, two channels of one name, and a plain-http API server', () => {
    dir = new TempDir();
    dir.write(
      'config.yaml',
      `${BASE}alerts:
  channels:
    - type: slack
      url: { env: A }
    - type: slack
      url: { env: B }
    - type: pagerduty
      routing_key: { env: PD }
      url: http://events.example.com/v2/enqueue
`,
    );
    const errors = formatted(dir.load('config.yaml')).errors.join('\n');
    expect(errors).toMatch(/alerts\.channels\[1\]\.type: channel name "slack" is also alerts\.channels\[0\]'s/);
    expect(errors).toMatch(/alerts\.channels\[2\]\.url: this URL is plain http to a host that is not this machine/);
    // A secret in the YAML is refused on its own (before anything else is judged).
    dir.write('literal.yaml', `${BASE}alerts:\n  channels:\n    - type: telegram\n      token: "123:abc"\n      chat_id: 1\n`);
    expect(formatted(dir.load('literal.yaml')).errors).toEqual(['literal.yaml:19:7 alerts.channels[0].token: secrets never live in the YAML; pass them through the environment or a mode-0600 file']);
  });

  it.each([
    ['a nodemailer connection URL with the login and password', 'smtps://alice:Sm7pPassw0rdX@smtp.example.com'],
    ['a URL without a login', 'smtp://smtp.example.com'],
    ['user@host', 'alice:Sm7pPassw0rdX@smtp.example.com'],
    ['a host and a port', 'smtp.example.com:465'],
    ['a space', 'smtp.example .com'],
  ])('refuses an e-mail host that is not a host name or an address: %s, at its line, without quoting it', (_what, host) => {
    // The host is no secret: it goes into every log line about the channel (notify.webhook_failed's
    // host) and, as the host to connect to, into the SMTP error kept in the outbox.
    dir = new TempDir();
    dir.write('config.yaml', `${BASE}alerts:\n  channels:\n    - type: email\n      host: "${host}"\n      from: a@example.com\n      to: [b@example.com]\n`);
    const { errors } = formatted(dir.load('config.yaml'));
    expect(errors).toEqual([expect.stringMatching(/^config\.yaml:19:7 alerts\.channels\[0\]\.host: expected the SMTP server's host name or IP address/)]);
    expect(errors.join('\n')).not.toContain('Sm7p');
  });

  it('accepts an e-mail host that is a name, an IPv4 or an IPv6 address', () => {
    dir = new TempDir();
    for (const host of ['smtp.example.com', 'localhost', 'mail-1.example.co.uk.', '192.0.2.10', '::1', '2001:db8::25']) {
      dir.write('config.yaml', `${BASE}alerts:\n  channels:\n    - type: email\n      host: "${host}"\n      from: a@example.com\n      to: [b@example.com]\n`);
      expect(formatted(dir.load('config.yaml')).errors, host).toEqual([]);
    }
  });

  it('with the key step: reads each secret where the config says, checks a secret URL, registers it; names the source, never the value', () => {
    dir = new TempDir();
    dir.write(
      'config.yaml',
      `api:
  base_url: sandbox
wallets: []
rules: []
safety:
  max_sol_per_action: 1
alerts:
  channels:
    - type: slack
      url: { env: SLACK_URL }
    - type: discord
      url: { env: DISCORD_URL }
    - type: pagerduty
      routing_key: { env: PD_KEY }
`,
    );
    const redactor = new Redactor();
    const r = loadConfig('config.yaml', { env: { SLACK_URL: 'https://hooks.slack.com/services/T/B/SLACK-SECRET-TOKEN', DISCORD_URL: 'http://discord.example.com/api/webhooks/1/DISCORD-SECRET' }, cwd: dir.path, keys: { redactor } });
    const errors = formatted(r).errors;
    expect(errors.join('\n')).toMatch(/alerts\.channels\[1\]\.url: channel discord: the URL is plain http/);
    expect(errors.join('\n')).toMatch(/alerts\.channels\[2\]\.routing_key: channel pagerduty's routing_key: \$PD_KEY is not set/);
    expect(errors.join('\n')).not.toMatch(/SECRET/);
    expect(redactor.redact('x https://hooks.slack.com/services/T/B/SLACK-SECRET-TOKEN')).not.toContain('SLACK-SECRET');
  });
});
