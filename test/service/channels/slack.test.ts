// Slack (issue 27): an incoming webhook on loopback standing in for hooks.slack.com, checked for
// the Block Kit shape Slack documents (https://api.slack.com/reference/block-kit/blocks): `text`
// as the notification fallback, `blocks` of header (plain_text, <= 150), section (mrkdwn <= 3000,
// or <= 10 fields of <= 2000), context and divider; min_severity honoured; an alert's end told;
// no secret in anything sent.
import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver, stopReceivers } from '../webhook-receiver.js';
import { CANARY, channel, notifierFor, sendTheNotices, TX, RUNBOOK } from './support.js';
import type { FailureWebhook } from '../../../src/service/webhook-events.js';

interface Block {
  type: string;
  text?: { type: string; text: string; emoji?: boolean };
  fields?: Array<{ type: string; text: string }>;
  elements?: Array<{ type: string; text: string }>;
}
interface SlackBody {
  text: string;
  blocks: Block[];
}

let hook: FailureWebhook | undefined;
afterEach(async () => {
  await hook?.close(1000);
  hook = undefined;
  await stopReceivers();
});

function checkShape(body: SlackBody): void {
  expect(Object.keys(body).sort()).toEqual(['blocks', 'text']);
  expect(typeof body.text).toBe('string');
  expect(body.blocks.length).toBeLessThanOrEqual(50);
  for (const b of body.blocks) {
    expect(['header', 'section', 'context', 'divider']).toContain(b.type);
    if (b.type === 'header') {
      expect(b.text?.type).toBe('plain_text');
      expect(b.text?.text.length).toBeLessThanOrEqual(150);
    }
    if (b.type === 'section') {
      expect(b.text !== undefined || b.fields !== undefined).toBe(true);
      if (b.text !== undefined) expect(b.text).toMatchObject({ type: 'mrkdwn' });
      if (b.fields !== undefined) {
        expect(b.fields.length).toBeLessThanOrEqual(10);
        for (const f of b.fields) {
          expect(f.type).toBe('mrkdwn');
          expect(f.text.length).toBeLessThanOrEqual(2000);
        }
      }
    }
    if (b.type === 'context') for (const e of b.elements ?? []) expect(e.type).toBe('mrkdwn');
  }
}

describe('the slack channel', () => {
  it('posts Block Kit messages with the facts, filters by severity, tells the resolve, and leaks no secret', async () => {
    const r = await startReceiver<SlackBody>({ path: '/services/T000/B000/XOXB-URL-TOKEN-5e1d', status: () => 200 });
    const made = notifierFor(channel('slack', { url: { env: 'SLACK_URL' } }), { SLACK_URL: r.url });
    hook = made.hook;
    sendTheNotices(hook);
    await r.waitFor(() => r.posts.reduce((n, p) => n + p.body.blocks.filter((b) => b.type === 'header').length, 0) >= 3);
    await hook.close(1000);
    for (const p of r.posts) {
      checkShape(p.body);
      expect(p.raw).not.toContain(CANARY);
      expect(p.raw).not.toContain('XOXB-URL-TOKEN');
    }
    const headers = r.posts.flatMap((p) => p.body.blocks.filter((b) => b.type === 'header').map((b) => b.text?.text));
    // The anomaly is a warning, below this channel's min_severity (error).
    expect(headers).toEqual(['ERROR · action.rejected · alpha', 'ERROR · alert.opened · alpha', 'RESOLVED · alert.closed · alpha']);
    const first = r.posts[0]?.body.blocks ?? [];
    expect(first[1]?.text?.text).toMatch(/^:red_circle: wallet alpha: deposit of 1.5 SOL \(SOL2X\) step 3 \(plan 7\) was rejected: insufficient_funds "balance too low for key \[REDACTED\]" \(HTTP 422, request id req-81f2\)/);
    const fields: Record<string, string> = Object.fromEntries((first[2]?.fields ?? []).map((f) => f.text.split('\n')));
    expect(fields).toMatchObject({
      '*Wallet*': 'alpha',
      '*Op*': 'deposit',
      '*Amount (SOL)*': '1.5',
      '*Symbol*': 'SOL2X',
      '*Tx*': TX,
      '*Error code*': 'insufficient_funds',
      '*HTTP status*': '422',
      '*Request id*': 'req-81f2',
    });
    expect(first[3]?.elements?.[0]?.text).toMatch(/^autoclaim · host-a · host-a\/4242 · \d{4}-\d\d-\d\dT/);
    // The runbook, absolute, as a link in the context line (not one of the 10 fields).
    expect(first[3]?.elements?.[1]?.text).toBe(`<${RUNBOOK}|runbook>`);
    expect(Object.keys(fields)).not.toContain('*Runbook*');
    // The secret URL is never logged either.
    expect(JSON.stringify(made.log.lines)).not.toContain('XOXB-URL-TOKEN');
  });

  it('escapes mrkdwn, so a server message cannot ping @channel or forge a link', async () => {
    const r = await startReceiver<SlackBody>({ path: '/s', status: () => 200 });
    hook = notifierFor(channel('slack', { url: { env: 'SLACK_URL' } }), { SLACK_URL: r.url }).hook;
    hook.onStep({ kind: 'claim', wallet: 'w', plan: 1, step: 1, state: 'rejected', ...{ code: 'x', server_message: '<!channel> <https://evil|click> & co' } });
    await r.waitFor(() => r.posts.length >= 1);
    expect(r.posts[0]?.raw).not.toMatch(/<!channel>|<https:\/\/evil/);
    expect(r.posts[0]?.body.blocks[1]?.text?.text).toContain('&lt;!channel&gt; &lt;https://evil|click&gt; &amp; co');
  });
});
