// What every channel shows of a notice, read from its details one way for all: how severe it is,
// whether it resolves an alert, and the facts an operator acts on (wallet, op, amount, symbol, tx,
// the server's error code and message, HTTP status, request id, host, instance, and the absolute
// runbook link of what to do), labelled, in a
// fixed order, only those known. The notice's details are written by webhook-events.ts.
import { SEVERITIES, type Severity } from '../../domain.js';
import type { KeptNotice } from '../outbox.js';

export interface NoticeFacts {
  severity: Severity;
  /** An alert's episode is over: the notice resolves the one that opened it. */
  resolved: boolean;
  /** The same for an alert's opening and closing notices (PagerDuty's dedup_key); the notice key otherwise. */
  dedupKey: string;
  /** One line: severity (or RESOLVED), what happened, the wallet. */
  title: string;
  /** Label and value, known ones only, in FIELD_ORDER (host, instance and runbook last). */
  fields: Array<[string, string]>;
  /** Where it comes from: "host-a · host-a/4242", or "" when neither is known. */
  origin: string;
  /** The absolute link to what to do (also among the fields), when the notice has one. */
  runbook: string | undefined;
}

/** The details' keys a channel shows, with their labels, in this order. */
const FIELD_ORDER: ReadonlyArray<[string, string]> = [
  ['wallet', 'Wallet'],
  ['op', 'Op'],
  ['amount_sol', 'Amount (SOL)'],
  // A withdraw's shares, a burn's tokens (format.ts amountFields): never under the SOL label.
  ['amount_units', 'Amount'],
  ['unit', 'Unit'],
  ['symbol', 'Symbol'],
  ['tx', 'Tx'],
  ['code', 'Error code'],
  ['server_message', 'Server message'],
  ['http_status', 'HTTP status'],
  ['request_id', 'Request id'],
  ['step', 'Step'],
  ['alert', 'Alert'],
  ['host', 'Host'],
  ['instance', 'Instance'],
  ['runbook', 'Runbook'],
];

export function severityAtLeast(s: Severity, min: Severity): boolean {
  return SEVERITIES.indexOf(s) >= SEVERITIES.indexOf(min);
}

export function factsOf(n: KeptNotice): NoticeFacts {
  const d = n.details;
  const severity = (SEVERITIES as readonly unknown[]).includes(d['severity']) ? (d['severity'] as Severity) : 'error';
  const resolved = d['resolved'] === true;
  const alertKey = typeof d['alert_key'] === 'string' ? d['alert_key'] : undefined;
  const fields: Array<[string, string]> = [];
  for (const [key, label] of FIELD_ORDER) {
    const v = d[key];
    if (v === undefined || v === null || v === '') continue;
    fields.push([label, typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v)]);
  }
  const wallet = typeof d['wallet'] === 'string' ? ` · ${d['wallet']}` : '';
  const title = `${resolved ? 'RESOLVED' : severity.toUpperCase()} · ${n.event}${wallet}`;
  const origin = [d['host'], d['instance']].filter((v): v is string => typeof v === 'string' && v !== '').join(' · ');
  const runbook = typeof d['runbook'] === 'string' && d['runbook'] !== '' ? d['runbook'] : undefined;
  return { severity, resolved, origin, dedupKey: `autoclaim/${alertKey ?? n.key}`, title, fields, runbook };
}

/** `text` cut to `max` characters, with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}
