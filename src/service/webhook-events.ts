// What the webhook is told, and in which words: the events that need a human (a step rejected or
// refused, a request refused as invalid so signing paused, an outcome unknown, an answer claiming
// more than was pending, a reload refused as invalid, a wallet gone stale, an unknown step left
// open, a wallet whose polled epoch is refused) and, if the operator asks for them,
// acknowledgements. alerts.webhook.events chooses; the notifier (outbox.ts, with the webhook
// channel of webhook.ts) keeps failures in the state database until delivered, sends them ahead of
// acknowledgements, redacts and signs what it sends.
import { createHash } from 'node:crypto';
import { formatSol } from '../amount.js';
import { resolveWebhookSecret } from '../config/secrets.js';
import { resolveWebhookUrl, webhookUrlProblem } from '../config/webhook-url.js';
import { ConfigError } from '../errors.js';
import type { Clock, WebhookCategory } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import type { StepEvent } from '../events.js';
import type { NotificationOutcome } from './metrics.js';
import type { OutboxStore } from './outbox.js';
import { createWebhookNotifier, type WebhookEvent, type WebhookNotifier } from './webhook.js';

/** alerts.webhook.events when the config has not been read yet: failures only. */
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookCategory[] = ['rejected', 'failed', 'unknown', 'anomaly', 'config_invalid', 'stale', 'unknown_step', 'epoch_refused'];

/** How many issues of an invalid reload the post lists; the log has them all. */
const MAX_LISTED_ISSUES = 10;

export interface FailureWebhook {
  /** Step outcomes, as the `step:outcome` event tells them (the supervisor subscribes it). */
  onStep(e: StepEvent): void;
  /** A SIGHUP reload refused; `issues` as the config.invalid log line lists them. */
  configInvalid(issues: readonly string[]): void;
  /** For reportAlerts: stale wallets and unknown steps, filtered by category. */
  readonly alerts: WebhookNotifier;
  close(timeoutMs?: number): Promise<void>;
}

interface FailureWebhookOptions {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  redactor: Redactor;
  /** The categories to post, read at each event: a reload that changes them applies at once. */
  events: () => readonly WebhookCategory[];
  /** Where failure notices wait until delivered: the state store (its outbox); memory when absent. */
  store?: OutboxStore | undefined;
  /** alerts.webhook (expire_after, timeout, allow_link_local), as the running config has them at start. */
  settings?: { expireMs: number; timeoutMs: number; allowLinkLocal: boolean };
  clock?: Clock;
  onOutcome?: (o: NotificationOutcome) => void;
  /** For tests; the notifier's own defaults otherwise. */
  minIntervalMs?: number;
  retryBaseMs?: number;
}

/** The webhook URL is a secret (Slack and Discord URLs are bearer tokens): env or systemd credential. */
export function webhookUrl(env: NodeJS.ProcessEnv): string | undefined {
  return resolveWebhookUrl(env)?.url;
}

/**
 * The webhook, when a URL is configured; undefined otherwise. Throws KeyError for a signing secret
 * that is set but too short, ConfigError for a URL webhook-url.ts refuses (`check` reports both, in
 * its list). URL and secret are registered with the redactor before anything is sent, and every
 * notice is scrubbed by it (outbox.ts) whoever makes it.
 */
export function createFailureWebhook(opts: FailureWebhookOptions): FailureWebhook | undefined {
  const source = resolveWebhookUrl(opts.env);
  const secret = resolveWebhookSecret(opts.env, { credentialsDir: opts.env.CREDENTIALS_DIRECTORY });
  if (source === undefined) return undefined;
  const { url } = source;
  opts.redactor.add(url);
  if (secret !== undefined) opts.redactor.add(secret);
  // The config check refused such a URL already; this is the same rule where the URL is used.
  const problem = source.unreadable ?? webhookUrlProblem(url, opts.settings?.allowLinkLocal ?? false);
  if (problem !== undefined) throw new ConfigError([{ file: source.what, line: 0, col: 0, path: '', message: `the webhook URL from ${source.what} ${problem}` }]);
  const notifier = createWebhookNotifier({
    url,
    secret,
    redactor: opts.redactor,
    store: opts.store,
    logger: opts.logger,
    clock: opts.clock,
    onOutcome: opts.onOutcome,
    ...(opts.settings === undefined ? {} : { expireMs: opts.settings.expireMs, timeoutMs: opts.settings.timeoutMs }),
    ...(opts.minIntervalMs === undefined ? {} : { minIntervalMs: opts.minIntervalMs }),
    ...(opts.retryBaseMs === undefined ? {} : { retryBaseMs: opts.retryBaseMs }),
  });
  const post = (category: WebhookCategory, e: WebhookEvent): void => {
    if (!opts.events().includes(category)) return;
    notifier.notify({ ...e, priority: category === 'acknowledged' ? 'info' : 'failure', details: { category, ...e.details } });
  };
  return {
    onStep(e) {
      const event = stepEvent(e);
      if (event !== undefined) post(event.category, event.event);
    },
    configInvalid(issues) {
      const listed = issues.slice(0, MAX_LISTED_ISSUES);
      const more = issues.length > listed.length ? `\n… and ${issues.length - listed.length} more (see config.invalid in the log)` : '';
      // The same problems posted again within the dedupe window are one notification.
      const digest = createHash('sha256').update(issues.join('\n')).digest('hex').slice(0, 16);
      post('config_invalid', {
        key: `config_invalid:${digest}`,
        event: 'config.invalid',
        text: `autoclaim: the reloaded config is invalid; the previous one keeps running. Fix, then reload again:\n${listed.join('\n')}${more}`,
        details: { issues: listed, count: issues.length },
      });
    },
    alerts: {
      notify(e) {
        const alert = e.details?.['alert'];
        // The cluster's alerts ride on the nearest category an operator already subscribes to: a
        // claim held in doubt, or an undetermined claim that needs the operator now, is an unknown
        // step's consequence; daemons running other configs a config problem; a clock out of
        // bounds, or the state database unreachable, stops the wallets' work: told with the stale
        // wallets it causes.
        if (alert === 'wallet_stale' || alert === 'clock_skew' || alert === 'state_unreachable') post('stale', e);
        else if (alert === 'unknown_step' || alert === 'claim_in_doubt' || alert === 'claim_undetermined') post('unknown_step', e);
        else if (alert === 'config_differs') post('config_invalid', e);
        else if (alert === 'epoch_refused') post('epoch_refused', e);
      },
      close: () => Promise.resolve(),
    },
    close: (timeoutMs) => notifier.close(timeoutMs),
  };
}

/** The category and words of a step outcome; undefined for outcomes nobody needs to hear of. */
function stepEvent(e: StepEvent): { category: WebhookCategory; event: WebhookEvent } | undefined {
  const details = {
    wallet: e.wallet,
    kind: e.kind,
    state: e.state,
    plan: e.plan,
    step: e.step,
    amountLamports: e.amountLamports?.toString(),
    // What the server said (refusals): a notice quotes it rather than guessing from the status.
    code: e.code,
    server_message: e.server_message,
    http_status: e.http_status,
    request_id: e.request_id,
    hint: e.hint,
  };
  const said = [e.http_status === undefined ? undefined : `HTTP ${e.http_status}`, e.code, e.server_message].filter((t) => t !== undefined).join(' ');
  const saying = said === '' ? '' : ` (the server said: ${said}${e.request_id === undefined ? '' : `; x-request-id ${e.request_id}`})`;
  const where = `wallet ${e.wallet}: ${e.kind} step ${e.step} (plan ${e.plan})`;
  switch (e.state) {
    case 'acknowledged': {
      const amount = e.amountLamports === undefined ? '' : ` ${formatSol(e.amountLamports)} SOL`;
      return {
        category: 'acknowledged',
        event: { key: `acknowledged:step:${e.step}`, event: 'action.acknowledged', text: `wallet ${e.wallet}: ${e.kind}${amount} acknowledged (plan ${e.plan})`, details },
      };
    }
    case 'rejected':
      return {
        category: 'rejected',
        event: {
          key: `rejected:step:${e.step}`,
          event: 'action.rejected',
          text: `${where} was not done: rejected by the API${saying}, or refused before signing by a safety limit (action.rejected / action.refused in the log); the rest of the plan is skipped`,
          details,
        },
      };
    case 'failed':
      return {
        category: 'failed',
        event: {
          key: `failed:step:${e.step}`,
          event: 'signing.paused',
          text: `${where}: the API refused the request itself as invalid${saying}; signing is paused until the config changes or the daemon restarts (signing.paused in the log says what to check)`,
          details,
        },
      };
    case 'unknown':
      return {
        category: 'unknown',
        event: {
          key: `unknown:step:${e.step}`,
          event: 'action.unknown',
          text: `${where}: outcome unknown; check it on the server, then \`autoclaim actions resolve ${e.step} --applied|--not-applied\` if it is not reconciled`,
          details,
        },
      };
    case 'anomaly': {
      const amount = e.amountLamports === undefined ? '' : ` (it said ${formatSol(e.amountLamports)} SOL)`;
      return {
        category: 'anomaly',
        event: {
          key: `anomaly:step:${e.step}`,
          event: 'action.anomaly',
          text: `${where}: the API claimed more than the pending seen${amount}; the step was bounded by what was seen`,
          details,
        },
      };
    }
    default:
      return undefined;
  }
}
