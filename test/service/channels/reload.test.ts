// A reload's alerts.channels (issue 27): the notifier swaps its channels at once — a channel added
// posts, one removed posts nothing more, a changed URL posts to the new one only, a changed
// min_severity filters from the next notice — keeping the notifier of an entry whose destination
// and secrets did not change; an entry that cannot be built (its secret gone) changes nothing.
// Loopback receivers standing in for Slack and Discord.
import { afterEach, describe, expect, it } from 'vitest';
import { Redactor } from '../../../src/log/redact.js';
import { createFailureWebhook, type FailureWebhook } from '../../../src/service/webhook-events.js';
import { captureLog } from '../../support/log.js';
import { startReceiver, stopReceivers } from '../webhook-receiver.js';
import { channel } from './support.js';

let hook: FailureWebhook | undefined;
afterEach(async () => {
  await hook?.close(1000);
  hook = undefined;
  await stopReceivers();
});

const texts = (posts: Array<{ raw: string }>): string => posts.map((p) => p.raw).join('\n');

describe('channels on reload', () => {
  it('adds, removes and re-points channels at once, and follows a new min_severity', async () => {
    const slackA = await startReceiver<unknown>({ path: '/slack-a/TOKEN-A', status: () => 200 });
    const slackC = await startReceiver<unknown>({ path: '/slack-c/TOKEN-C', status: () => 200 });
    const discord = await startReceiver<unknown>({ path: '/discord/TOKEN-D', status: () => 204 });
    const env = { SLACK_A: slackA.url, SLACK_C: slackC.url, DISCORD: discord.url };
    const slackAt = (envName: string) => channel('slack', { url: { env: envName } });
    const discordAt = (min: 'error' | 'critical') => channel('discord', { url: { env: 'DISCORD' }, minSeverity: min });
    hook = createFailureWebhook({ env, logger: captureLog().logger, redactor: new Redactor(), events: () => [], channels: [slackAt('SLACK_A')], minIntervalMs: 0 });
    if (hook === undefined) throw new Error('no notifier');

    hook.configInvalid(['autoclaim.yaml:1:1 one']);
    await slackA.waitFor(() => slackA.posts.length >= 1);

    // The Slack URL changed and Discord was added: both from the next notice, the old URL never again.
    expect(hook.useChannels([slackAt('SLACK_C'), discordAt('error')])).toEqual({ kept: [], started: ['slack', 'discord'], stopped: ['slack'] });
    hook.configInvalid(['autoclaim.yaml:1:1 two']);
    await slackC.waitFor(() => /two/.test(texts(slackC.posts)));
    await discord.waitFor(() => /two/.test(texts(discord.posts)));
    expect(texts(slackA.posts)).not.toMatch(/two/);

    // Only Discord's min_severity changed: both notifiers kept; an error no longer reaches Discord,
    // the critical notice after it does (one notifier delivers in order, so the error would be there first).
    expect(hook.useChannels([slackAt('SLACK_C'), discordAt('critical')])).toEqual({ kept: ['slack', 'discord'], started: [], stopped: [] });
    hook.configInvalid(['autoclaim.yaml:1:1 three']);
    hook.onStep({ kind: 'claim', wallet: 'alpha', plan: 1, step: 9, state: 'failed', code: 'bad_signature', http_status: 401 });
    await discord.waitFor(() => /signing\.paused/.test(texts(discord.posts)));
    await slackC.waitFor(() => /three/.test(texts(slackC.posts)));
    expect(texts(discord.posts)).not.toMatch(/three/);

    // Slack removed: nothing more reaches it.
    expect(hook.useChannels([discordAt('critical')])).toEqual({ kept: ['discord'], started: [], stopped: ['slack'] });
    const before = slackC.posts.length;
    hook.onStep({ kind: 'claim', wallet: 'alpha', plan: 1, step: 10, state: 'failed', code: 'bad_signature', http_status: 401 });
    await discord.waitFor(() => /step 10/.test(texts(discord.posts)));
    expect(slackC.posts).toHaveLength(before);
    expect(slackA.posts).toHaveLength(1);
  });

  it('an entry that cannot be built changes nothing: the running channels stay', async () => {
    const slack = await startReceiver<unknown>({ path: '/s', status: () => 200 });
    hook = createFailureWebhook({ env: { SLACK: slack.url }, logger: captureLog().logger, redactor: new Redactor(), events: () => [], channels: [channel('slack', { url: { env: 'SLACK' } })], minIntervalMs: 0 });
    if (hook === undefined) throw new Error('no notifier');
    expect(() => hook?.useChannels([channel('discord', { url: { env: 'NOT_SET' } })])).toThrow(/NOT_SET/);
    hook.configInvalid(['autoclaim.yaml:1:1 still here']);
    await slack.waitFor(() => /still here/.test(texts(slack.posts)));
  });
});
