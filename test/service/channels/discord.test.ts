// Discord (issue 27): a webhook on loopback standing in for discord.com/api/webhooks, checked for
// the execute-webhook body Discord documents: `embeds` (at most 10) of title (<= 256), description
// (<= 4096), integer colour, fields { name, value, inline } (<= 25; 256 / 1024), ISO timestamp and
// footer, 6000 characters in all; no mentions parsed; severity filtered; resolve told; no secret.
import { afterEach, describe, expect, it } from 'vitest';
import type { FailureWebhook } from '../../../src/service/webhook-events.js';
import { startReceiver, stopReceivers } from '../webhook-receiver.js';
import { CANARY, channel, notifierFor, sendTheNotices, TX, RUNBOOK } from './support.js';

interface Embed {
  title: string;
  description: string;
  color: number;
  fields: Array<{ name: string; value: string; inline: boolean }>;
  timestamp: string;
  footer: { text: string };
}
interface DiscordBody {
  username: string;
  allowed_mentions: { parse: string[] };
  embeds: Embed[];
}

let hook: FailureWebhook | undefined;
afterEach(async () => {
  await hook?.close(1000);
  hook = undefined;
  await stopReceivers();
});

describe('the discord channel', () => {
  it('posts embeds with the facts, filters by severity, tells the resolve, and leaks no secret', async () => {
    const r = await startReceiver<DiscordBody>({ path: '/api/webhooks/1234/DISCORD-TOKEN-9a8b', status: () => 204 });
    hook = notifierFor(channel('discord', { url: { env: 'DISCORD_URL' }, minSeverity: 'warning' }), { DISCORD_URL: r.url }).hook;
    sendTheNotices(hook);
    await r.waitFor(() => r.posts.reduce((n, p) => n + p.body.embeds.length, 0) >= 4);
    const embeds = r.posts.flatMap((p) => p.body.embeds);
    for (const p of r.posts) {
      expect(Object.keys(p.body).sort()).toEqual(['allowed_mentions', 'embeds', 'username']);
      expect(p.body.allowed_mentions).toEqual({ parse: [] });
      expect(p.body.embeds.length).toBeLessThanOrEqual(10);
      const total = p.body.embeds.reduce((n, e) => n + e.title.length + e.description.length + e.footer.text.length + e.fields.reduce((m, f) => m + f.name.length + f.value.length, 0), 0);
      expect(total).toBeLessThanOrEqual(6000);
      expect(p.raw).not.toContain(CANARY);
      expect(p.raw).not.toContain('DISCORD-TOKEN');
    }
    for (const e of embeds) {
      expect(Object.keys(e).sort()).toEqual(['color', 'description', 'fields', 'footer', 'timestamp', 'title']);
      expect(Number.isInteger(e.color)).toBe(true);
      expect(e.title.length).toBeLessThanOrEqual(256);
      expect(e.fields.length).toBeLessThanOrEqual(25);
      expect(new Date(e.timestamp).toISOString()).toBe(e.timestamp);
    }
    // min_severity warning: the anomaly goes too.
    expect(embeds.map((e) => e.title)).toEqual(['ERROR · action.rejected · alpha', 'WARNING · action.anomaly · alpha', 'ERROR · alert.opened · alpha', 'RESOLVED · alert.closed · alpha']);
    expect(embeds[0]?.description).toContain('insufficient_funds "balance too low for key [REDACTED]" (HTTP 422, request id req-81f2)');
    expect(embeds[0]?.fields).toContainEqual({ name: 'Request id', value: 'req-81f2', inline: true });
    expect(embeds[0]?.fields).toContainEqual({ name: 'Symbol', value: 'SOL2X', inline: true });
    expect(embeds[0]?.fields).toContainEqual({ name: 'Tx', value: TX, inline: true });
    expect(embeds[0]?.fields).toContainEqual({ name: 'Runbook', value: RUNBOOK, inline: true });
    expect(embeds[0]?.fields).toContainEqual({ name: 'Instance', value: 'host-a/4242', inline: true });
    expect(embeds[3]?.color).toBe(0x2eb67d);
  });

  it('keeps a batch of long notices within 6000 characters', async () => {
    const r = await startReceiver<DiscordBody>({ path: '/d', status: () => 204 });
    hook = notifierFor(channel('discord', { url: { env: 'DISCORD_URL' } }), { DISCORD_URL: r.url }).hook;
    for (let i = 0; i < 10; i++) hook.onStep({ kind: 'claim', wallet: `w${i}`, plan: i, step: i, state: 'rejected', ...{ code: 'c', server_message: 'x'.repeat(3000) } });
    await r.waitFor(() => r.posts.reduce((n, p) => n + p.body.embeds.length, 0) >= 10);
    for (const p of r.posts) {
      const total = p.body.embeds.reduce((n, e) => n + e.title.length + e.description.length + e.footer.text.length + e.fields.reduce((m, f) => m + f.name.length + f.value.length, 0), 0);
      expect(total).toBeLessThanOrEqual(6000);
    }
  });

  it('escapes the `](` of a masked link, so a server message cannot forge a link', async () => {
    const r = await startReceiver<DiscordBody>({ path: '/d', status: () => 204 });
    hook = notifierFor(channel('discord', { url: { env: 'DISCORD_URL' } }), { DISCORD_URL: r.url }).hook;
    // Discord renders [label](url) as a link showing only the label, in an embed's description and
    // in its field values: the server's words would carry a link the operator cannot see the target of.
    const forged = 'vault paused: [re-authorize at docs.example.org/autoclaim](https://evil.example/phish)';
    hook.onStep({ kind: 'deposit', wallet: 'w', plan: 1, step: 2, state: 'rejected', ...{ code: 'x', server_message: forged, tx: '[tx](https://evil.example/tx)' } });
    await r.waitFor(() => r.posts.length >= 1);
    const embed = r.posts[0]?.body.embeds[0];
    const texts = [embed?.description ?? '', ...(embed?.fields ?? []).map((f) => f.value)];
    expect(texts.join('\n')).toContain('https://evil.example/phish');
    // An unescaped "](" is where a masked link begins its target.
    for (const text of texts) expect(text).not.toMatch(/(?<!\\)\]\(/);
    expect(embed?.fields).toContainEqual({ name: 'Server message', value: 'vault paused: [re-authorize at docs.example.org/autoclaim]\\(https://evil.example/phish)', inline: true });
  });
});
