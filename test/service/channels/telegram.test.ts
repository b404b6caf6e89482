// Telegram (issue 27): a loopback Bot API server standing in for api.telegram.org, checked for the
// sendMessage call the Bot API documents: POST /bot<token>/sendMessage, JSON { chat_id, text
// (<= 4096), link_preview_options }, no parse_mode (plain text); a 429's parameters.retry_after
// honoured; severity filtered; resolve told; the token only in the path, never in a body or log.
import { afterEach, describe, expect, it } from 'vitest';
import type { FailureWebhook } from '../../../src/service/webhook-events.js';
import { startReceiver, stopReceivers } from '../webhook-receiver.js';
import { CANARY, channel, notifierFor, sendTheNotices, TX, RUNBOOK } from './support.js';

const TOKEN = '123456789:AAE-telegram-bot-token-canary';

interface TelegramBody {
  chat_id: string;
  text: string;
  link_preview_options: { is_disabled: boolean };
}

let hook: FailureWebhook | undefined;
afterEach(async () => {
  await hook?.close(1000);
  hook = undefined;
  await stopReceivers();
});

describe('the telegram channel', () => {
  it('calls sendMessage with plain text carrying the facts, filters by severity, tells the resolve, leaks no secret', async () => {
    const r = await startReceiver<TelegramBody>({ path: '', status: () => 200, answer: () => '{"ok":true,"result":{"message_id":1}}' });
    const made = notifierFor(channel('telegram', { token: { env: 'TG_TOKEN' }, chatId: '-1001234567890', apiUrl: r.url }), { TG_TOKEN: TOKEN });
    hook = made.hook;
    sendTheNotices(hook);
    await r.waitFor(() => r.posts.map((p) => p.body.text).join('\n').includes('RESOLVED'));
    for (const p of r.posts) {
      expect(p.path).toBe(`/bot${TOKEN}/sendMessage`);
      expect(p.headers['content-type']).toBe('application/json');
      expect(Object.keys(p.body).sort()).toEqual(['chat_id', 'link_preview_options', 'text']);
      expect(p.body.chat_id).toBe('-1001234567890');
      expect(p.body.link_preview_options).toEqual({ is_disabled: true });
      expect(p.body.text.length).toBeLessThanOrEqual(4096);
      expect(p.raw).not.toContain(CANARY);
      expect(p.raw).not.toContain(TOKEN);
    }
    const text = r.posts.map((p) => p.body.text).join('\n\n');
    expect(text).toContain('🔴 ERROR · action.rejected · alpha\nwallet alpha: deposit of 1.5 SOL (SOL2X) step 3 (plan 7) was rejected: insufficient_funds "balance too low for key [REDACTED]" (HTTP 422, request id req-81f2)');
    expect(text).toContain('Request id: req-81f2\n');
    expect(text).toContain(`Instance: host-a/4242\nRunbook: ${RUNBOOK}`);
    expect(text).toContain(`Amount (SOL): 1.5\nSymbol: SOL2X\nTx: ${TX}\nError code: insufficient_funds\n`);
    expect(text).toContain('Host: host-a\nInstance: host-a/4242');
    expect(text).not.toContain('action.anomaly');
    expect(text).toContain('✅ RESOLVED · alert.closed · alpha\nwallet alpha: polling again');
    expect(JSON.stringify(made.log.lines)).not.toContain(TOKEN);
  });

  it('waits as long as a 429 says in parameters.retry_after', async () => {
    let calls = 0;
    const r = await startReceiver<TelegramBody>({
      path: '',
      status: () => (++calls === 1 ? 429 : 200),
      answer: () => (calls === 1 ? '{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 1","parameters":{"retry_after":1}}' : '{"ok":true}'),
    });
    const made = notifierFor(channel('telegram', { token: { env: 'TG_TOKEN' }, chatId: '42', apiUrl: r.url }), { TG_TOKEN: TOKEN }, { retryBaseMs: 600_000 });
    hook = made.hook;
    hook.onStep({ kind: 'claim', wallet: 'w', plan: 1, step: 1, state: 'failed' });

    await r.waitFor(() => r.posts.length >= 2);
    // The notifier's own backoff (5 to 10 minutes here) would outlast the test; the body's 1 s was used.
    const failed = made.log.events('notify.webhook_failed');
    expect(failed[0]).toMatchObject({ status: 429, channel: 'telegram' });
  });
});
