// What the channel tests share: a channel entry as the config resolves it, the notifier made from
// it (createFailureWebhook, the daemon's one way in), a canary secret the server "echoes", and the
// notices every channel is sent: a rejection with the server's words, its symbol and tx, an anomaly (a warning), and
// an alert opened then resolved.
import type { ChannelConfig, WebhookCategory } from '../../../src/domain.js';
import { WEBHOOK_CATEGORIES } from '../../../src/domain.js';
import { Redactor } from '../../../src/log/redact.js';
import { reportAlerts } from '../../../src/service/alerts.js';
import { createFailureWebhook, type FailureWebhook } from '../../../src/service/webhook-events.js';
import { captureLog } from '../../support/log.js';

/** A secret the process knows (an API key, say) that a server echoes back in its error message. */
export const CANARY = 'canary-api-key-7f3a9c1e5b2d4f6a';

/** The transaction id the rejecting answer named (a 2xx body with a failure status may carry one). */
export const TX = '4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi';

/** alerts.runbook_base_url as the notifier is given it; a rejection's runbook is RUNBOOK. */
export const RUNBOOK_BASE = 'https://docs.example.org/autoclaim/docs/';
export const RUNBOOK = `${RUNBOOK_BASE}operations.md#alerts-and-what-to-do`;

const ALL: WebhookCategory[] = [...WEBHOOK_CATEGORIES];

/** A channel entry as resolve-channels.ts makes it: min_severity error, every category. */
export function channel(type: ChannelConfig['type'], rest: Record<string, unknown>): ChannelConfig {
  return { name: type, minSeverity: 'error', events: ALL, timeoutMs: 5000, allowLinkLocal: false, type, ...rest } as ChannelConfig;
}

export function notifierFor(c: ChannelConfig, env: NodeJS.ProcessEnv, more: { retryBaseMs?: number; store?: Parameters<typeof createFailureWebhook>[0]['store'] } = {}): { hook: FailureWebhook; redactor: Redactor; log: ReturnType<typeof captureLog> } {
  const redactor = new Redactor();
  redactor.add(CANARY);
  const log = captureLog('debug', redactor);
  const hook = createFailureWebhook({ env, logger: log.logger, redactor, events: () => [], channels: [c], host: 'host-a', instance: 'host-a/4242', runbookBase: () => RUNBOOK_BASE, minIntervalMs: 0, ...more });
  if (hook === undefined) throw new Error('no notifier');
  return { hook, redactor, log };
}

/** A rejection with the server's words (echoing the canary), an anomaly (warning), an alert opened and resolved. */
export function sendTheNotices(hook: FailureWebhook, opts: { alert?: boolean } = {}): void {
  const base = { kind: 'deposit' as const, wallet: 'alpha', plan: 7 };
  hook.onStep({ ...base, state: 'rejected', step: 3, amountLamports: 1_500_000_000n, symbol: 'SOL2X', tx: TX, code: 'insufficient_funds', server_message: `balance too low for key ${CANARY}`, http_status: 422, request_id: 'req-81f2' });
  hook.onStep({ ...base, state: 'anomaly', step: 4, amountLamports: 9_000_000_000n });
  if (opts.alert === false) return;
  const log = captureLog().logger;
  reportAlerts([{ key: 'wallet_stale:alpha', kind: 'wallet_stale', change: 'opened', wallet: 'alpha', text: 'wallet alpha: no successful poll for 12m (more than 3 × 1m, its time between polls)' }], { logger: log, webhook: hook.alerts });
  reportAlerts([{ key: 'wallet_stale:alpha', kind: 'wallet_stale', change: 'closed', wallet: 'alpha', text: 'wallet alpha: polling again' }], { logger: log, webhook: hook.alerts });
}
