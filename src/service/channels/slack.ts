// Slack: an incoming webhook (https://api.slack.com/messaging/webhooks) posted a Block Kit message.
// Each notice is a header (severity, event, wallet), a section with the sentence, a section of
// fields (the facts an operator acts on) and a context line (when); `text` is the fallback Slack
// shows in notifications. Block Kit limits: 50 blocks a message (so at most MAX_BATCH notices),
// header text 150 characters, section text 3000, 10 fields of 2000 each. mrkdwn needs &, < and >
// escaped, or a server message could ping @channel or forge a link.
import type { Dispatcher } from 'undici';
import type { Clock } from '../../domain.js';
import { systemClock } from '../../domain.js';
import { toJson } from '../../json.js';
import type { KeptNotice, NoticeChannel } from '../outbox.js';
import { clip, factsOf } from './facts.js';
import { postJson, safeHost } from './http.js';

/** Notices in one message: 5 blocks each, within Slack's 50. */
export const SLACK_MAX_BATCH = 9;

const MARK = { info: ':information_source:', warning: ':warning:', error: ':red_circle:', critical: ':rotating_light:' } as const;

export function slackChannel(opts: { name?: string; url: string; dispatcher?: Dispatcher | undefined; clock?: Clock; timeoutMs?: number }): NoticeChannel {
  const clock = opts.clock ?? systemClock;
  return {
    name: opts.name ?? 'slack',
    host: safeHost(opts.url),
    format: (batch) => toJson(slackPayload(batch)),
    send: (body, signal) => postJson({ url: opts.url, body, signal, dispatcher: opts.dispatcher, timeoutMs: opts.timeoutMs ?? 10_000, now: clock.now() }),
  };
}

export function slackPayload(batch: readonly KeptNotice[]): Record<string, unknown> {
  const blocks: unknown[] = [];
  const lines: string[] = [];
  for (const n of batch.slice(0, SLACK_MAX_BATCH)) {
    const f = factsOf(n);
    const mark = f.resolved ? ':white_check_mark:' : MARK[f.severity];
    lines.push(`${f.title}: ${n.text}`);
    if (blocks.length > 0) blocks.push({ type: 'divider' });
    blocks.push({ type: 'header', text: { type: 'plain_text', text: clip(`${f.title}`, 150), emoji: false } });
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: clip(`${mark} ${escape(n.text)}`, 3000) } });
    // Host, instance and the runbook go in the context line: 10 fields is Slack's limit.
    const fields = f.fields.filter(([label]) => label !== 'Host' && label !== 'Instance' && label !== 'Runbook').slice(0, 10).map(([label, value]) => ({ type: 'mrkdwn', text: clip(`*${label}*\n${escape(value)}`, 2000) }));
    if (fields.length > 0) blocks.push({ type: 'section', fields });
    const context = [{ type: 'mrkdwn', text: escape(['autoclaim', f.origin, new Date(n.at).toISOString()].filter((v) => v !== '').join(' · ')) }];
    if (f.runbook !== undefined) context.push({ type: 'mrkdwn', text: `<${linkTarget(f.runbook)}|runbook>` });
    blocks.push({ type: 'context', elements: context });
  }
  const more = batch.length > SLACK_MAX_BATCH ? `\n… and ${batch.length - SLACK_MAX_BATCH} more` : '';
  return { text: clip(escape(lines.join('\n')) + more, 3000), blocks };
}

/** Slack's three mrkdwn control characters (https://api.slack.com/reference/surfaces/formatting#escaping). */
function escape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A URL inside Slack's <url|text>: its control characters escaped, `|` and spaces percent-encoded. */
function linkTarget(url: string): string {
  return escape(url.replace(/\|/g, '%7C').replace(/\s/g, '%20'));
}
