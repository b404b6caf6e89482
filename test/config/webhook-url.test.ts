// Which webhook URLs autoclaim posts to (issue 24 finding 11): https anywhere; http only to this
// machine's loopback; never a non-URL, file: or another scheme; never a link-local or cloud
// metadata address unless alerts.webhook.allow_link_local says so. Messages never quote the URL.
import { describe, expect, it } from 'vitest';
import { resolveWebhookUrl, webhookUrlProblem } from '../../src/config/webhook-url.js';

const TABLE: Array<[url: string, verdict: 'ok' | RegExp, allowed?: 'ok' | RegExp]> = [
  ['https://hooks.slack.com/services/T000/B000/XXXX', 'ok'],
  ['https://discord.com/api/webhooks/1/abc', 'ok'],
  ['https://10.0.0.5:8443/hook', 'ok'], // a private receiver over TLS is a receiver
  ['http://127.0.0.1:9000/hook', 'ok'],
  ['http://127.8.9.10/hook', 'ok'],
  ['http://localhost:9000/hook', 'ok'],
  ['http://[::1]:9000/hook', 'ok'],
  ['http://[::ffff:127.0.0.1]/hook', 'ok'],
  ['not a url', /is not a URL/],
  ['hooks.slack.com/services/x', /is not a URL/],
  ['file:///etc/passwd', /uses file/],
  ['ftp://example.com/x', /uses ftp/],
  ['javascript:alert(1)', /uses javascript/],
  ['http://example.com/hook', /plain http to a host that is not this machine/],
  ['http://10.0.0.5/hook', /plain http/],
  ['http://169.254.169.254/latest/meta-data/', /plain http/], // http to a remote host first
  ['https://169.254.169.254/latest/meta-data/', /link-local or cloud metadata/, 'ok'],
  ['https://2852039166/', /link-local/, 'ok'], // 169.254.169.254 spelled as one number
  ['https://0xa9fea9fe/', /link-local/, 'ok'],
  ['https://169.254.1.1/', /link-local/, 'ok'],
  ['https://[fe80::1]/hook', /link-local/, 'ok'],
  ['https://[febf::1]/hook', /link-local/, 'ok'],
  ['https://[fec0::1]/hook', 'ok'],
  ['https://[::ffff:169.254.169.254]/', /link-local/, 'ok'],
  ['https://[fd00:ec2::254]/', /metadata/, 'ok'],
  ['https://metadata.google.internal/computeMetadata/v1/', /metadata/, 'ok'],
  ['https://100.100.100.200/latest/meta-data/', /metadata/, 'ok'],
];

describe('webhook URL rules', () => {
  it.each(TABLE)('%s', (url, verdict, allowed = verdict) => {
    for (const [allow, expected] of [[false, verdict], [true, allowed]] as const) {
      const problem = webhookUrlProblem(url, allow);
      if (expected === 'ok') expect(problem).toBeUndefined();
      else {
        expect(problem).toMatch(expected);
        // Never the URL, nor its host.
        expect(problem).not.toContain(url);
        expect(problem).not.toContain('169.254.169.254');
        expect(problem).not.toContain('example.com');
      }
    }
  });

  it('names its source: the variable before the credential, an empty credential meaning none', () => {
    expect(resolveWebhookUrl({ AUTOCLAIM_WEBHOOK_URL: ' https://x.test/h ' })).toEqual({ url: 'https://x.test/h', what: '$AUTOCLAIM_WEBHOOK_URL' });
    expect(resolveWebhookUrl({ AUTOCLAIM_WEBHOOK_URL: '  ' })).toBeUndefined();
    expect(resolveWebhookUrl({ CREDENTIALS_DIRECTORY: '/nonexistent-autoclaim' })).toBeUndefined();
  });
});
