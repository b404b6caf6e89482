// PagerDuty: the Events API v2 (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/,
// .../resolve-events/), POST /v2/enqueue, one event a request. A notice triggers an incident with
// dedup_key `autoclaim/<alert key>` (or the notice's key), so repeats fold into one incident; an
// alert's end sends `resolve` with the same dedup_key, which closes it. The routing key is a secret
// registered with the redactor, so it is put into the body after the notifier redacted it, at send.
import type { Dispatcher } from 'undici';
import type { Clock } from '../../domain.js';
import { systemClock } from '../../domain.js';
import { toJson } from '../../json.js';
import type { KeptNotice, NoticeChannel } from '../outbox.js';
import { clip, factsOf } from './facts.js';
import { postJson, safeHost } from './http.js';

/** The Events API takes one event a request. */
export const PAGERDUTY_MAX_BATCH = 1;

export function pagerdutyChannel(opts: { name?: string; url: string; routingKey: string; dispatcher?: Dispatcher | undefined; clock?: Clock; timeoutMs?: number }): NoticeChannel {
  const clock = opts.clock ?? systemClock;
  return {
    name: opts.name ?? 'pagerduty',
    host: safeHost(opts.url),
    format: (batch) => toJson(pagerdutyEvent(batch[0])),
    send: (body, signal) => {
      // After redaction (the key is a registered secret): the one place the key joins the event.
      const withKey = JSON.stringify({ routing_key: opts.routingKey, ...(JSON.parse(body) as Record<string, unknown>) });
      return postJson({ url: opts.url, body: withKey, signal, dispatcher: opts.dispatcher, timeoutMs: opts.timeoutMs ?? 10_000, now: clock.now() });
    },
  };
}

/** The event without its routing key. */
export function pagerdutyEvent(n: KeptNotice | undefined): Record<string, unknown> {
  if (n === undefined) return {};
  const f = factsOf(n);
  const dedup_key = clip(f.dedupKey, 255);
  if (f.resolved) return { event_action: 'resolve', dedup_key };
  const d = n.details;
  const custom_details: Record<string, string> = { text: n.text };
  for (const [label, value] of f.fields) custom_details[label.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/_+$/, '')] = value;
  return {
    event_action: 'trigger',
    dedup_key,
    payload: {
      summary: clip(n.text, 1024),
      source: typeof d['host'] === 'string' ? d['host'] : 'autoclaim',
      severity: f.severity,
      timestamp: new Date(n.at).toISOString(),
      component: typeof d['wallet'] === 'string' ? d['wallet'] : 'autoclaim',
      group: 'autoclaim',
      class: n.event,
      custom_details,
    },
    client: 'autoclaim',
    // The runbook as a link PagerDuty shows on the incident (a file:// one stays in custom_details).
    ...(f.runbook !== undefined && /^https?:/.test(f.runbook) ? { links: [{ href: f.runbook, text: 'Runbook' }] } : {}),
  };
}
