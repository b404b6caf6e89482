// PagerDuty (issue 27): a loopback Events API v2 standing in for events.pagerduty.com, checked for
// the enqueue bodies PagerDuty documents: a trigger { routing_key, event_action: "trigger",
// dedup_key, payload { summary (<= 1024), source, severity, timestamp, component, group, class,
// custom_details }, client } and a resolve { routing_key, event_action: "resolve", dedup_key } with
// the trigger's dedup_key; one event a request; min_severity; the routing key only where PagerDuty
// needs it, never redacted out of it, and no other secret anywhere.
import { afterEach, describe, expect, it } from 'vitest';
import type { FailureWebhook } from '../../../src/service/webhook-events.js';
import { startReceiver, stopReceivers } from '../webhook-receiver.js';
import { CANARY, channel, notifierFor, sendTheNotices, TX, RUNBOOK } from './support.js';

const ROUTING_KEY = 'R0UTINGKEY0123456789abcdefabcdef';

interface PdEvent {
  routing_key: string;
  event_action: 'trigger' | 'resolve';
  dedup_key: string;
  payload?: { summary: string; source: string; severity: string; timestamp: string; component: string; group: string; class: string; custom_details: Record<string, string> };
  client?: string;
}

let hook: FailureWebhook | undefined;
afterEach(async () => {
  await hook?.close(1000);
  hook = undefined;
  await stopReceivers();
});

describe('the pagerduty channel', () => {
  it('triggers with the facts and resolves the same dedup_key when the alert clears', async () => {
    const r = await startReceiver<PdEvent>({ path: '/v2/enqueue', status: () => 202, answer: () => '{"status":"success","message":"Event processed","dedup_key":"x"}' });
    const made = notifierFor(channel('pagerduty', { routingKey: { env: 'PD_KEY' }, url: r.url }), { PD_KEY: ROUTING_KEY });
    hook = made.hook;
    sendTheNotices(hook);
    await r.waitFor(() => r.posts.length >= 3);
    const [rejected, opened, resolved] = r.posts.map((p) => p.body);
    for (const p of r.posts) {
      expect(p.path).toBe('/v2/enqueue');
      expect(p.body.routing_key).toBe(ROUTING_KEY);
      expect(p.raw).not.toContain(CANARY);
    }
    expect(Object.keys(rejected ?? {}).sort()).toEqual(['client', 'dedup_key', 'event_action', 'links', 'payload', 'routing_key']);
    // The runbook as the incident's link (Events v2 `links`), absolute.
    expect((rejected as { links?: unknown } | undefined)?.links).toEqual([{ href: RUNBOOK, text: 'Runbook' }]);
    expect(rejected).toMatchObject({ event_action: 'trigger', dedup_key: 'autoclaim/rejected:step:3', client: 'autoclaim' });
    expect(rejected?.payload).toMatchObject({ source: 'host-a', severity: 'error', component: 'alpha', group: 'autoclaim', class: 'action.rejected' });
    expect(Object.keys(rejected?.payload ?? {}).sort()).toEqual(['class', 'component', 'custom_details', 'group', 'severity', 'source', 'summary', 'timestamp']);
    expect(rejected?.payload?.summary).toContain('insufficient_funds "balance too low for key [REDACTED]" (HTTP 422, request id req-81f2)');
    expect(rejected?.payload?.custom_details).toMatchObject({ wallet: 'alpha', op: 'deposit', amount_sol: '1.5', symbol: 'SOL2X', tx: TX, runbook: RUNBOOK, error_code: 'insufficient_funds', http_status: '422', request_id: 'req-81f2', instance: 'host-a/4242' });
    // The anomaly (warning) is below min_severity error; the alert opens and resolves on one key.
    expect(opened).toMatchObject({ event_action: 'trigger', dedup_key: 'autoclaim/wallet_stale:alpha' });
    expect(resolved).toEqual({ routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: 'autoclaim/wallet_stale:alpha' });
    expect(r.posts).toHaveLength(3);
    expect(JSON.stringify(made.log.lines)).not.toContain(ROUTING_KEY);
  });

  it('maps each severity to PagerDuty\'s own (critical for a signing pause)', async () => {
    const r = await startReceiver<PdEvent>({ path: '/v2/enqueue', status: () => 202 });
    hook = notifierFor(channel('pagerduty', { routingKey: { env: 'PD_KEY' }, url: r.url, minSeverity: 'info' }), { PD_KEY: ROUTING_KEY }).hook;
    const base = { kind: 'claim' as const, wallet: 'w', plan: 1 };
    hook.onStep({ ...base, state: 'failed', step: 1 });
    hook.onStep({ ...base, state: 'anomaly', step: 2, amountLamports: 5n });
    hook.onStep({ ...base, state: 'acknowledged', step: 3, amountLamports: 5n });
    await r.waitFor(() => r.posts.length >= 3);
    expect(r.posts.map((p) => p.body.payload?.severity)).toEqual(['critical', 'warning', 'info']);
  });
});
