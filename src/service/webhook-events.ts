// What the webhook and the channels are told, and in which words: the events that need a human (a
// step rejected or refused, a request refused as invalid so signing paused, an outcome unknown, an
// answer claiming more than was pending, a reload refused as invalid, a wallet gone stale, an
// unknown step left open, a wallet whose polled epoch is refused), the end of each alert, and, if
// the operator asks for them, acknowledgements. Each notice carries its severity and the facts
// known of it (wallet, op, amount, symbol, tx, the server's code and message, HTTP status, request
// id, host, instance). One notifier per receiver: the webhook (alerts.webhook, URL from the
// environment) and each of alerts.channels, each with its events and min_severity; every one is the
// shared notifier of outbox.ts (kept in the state database until delivered, failures first,
// redacted), with its own channel formatter.
import { createHash } from 'node:crypto';
import { formatSol, type Lamports } from '../amount.js';
import { amountFields } from '../rules/amounts.js';
import { resolveWebhookSecret } from '../config/secrets.js';
import { resolveWebhookUrl, webhookUrlProblem } from '../config/webhook-url.js';
import { ConfigError } from '../errors.js';
import type { ChannelConfig, Clock, Severity, WebhookCategory } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import type { StepEvent } from '../events.js';
import type { NotificationOutcome } from './metrics.js';
import type { Dispatcher } from 'undici';
import { buildChannel, type BuiltChannel } from './channels/build.js';
import { severityAtLeast } from './channels/facts.js';
import { ALERT_KINDS, isAlertKind } from './alert-kinds.js';
import { createOutboxNotifier, type Notifier, type OutboxStore } from './outbox.js';
import { runbookUrl } from './runbook.js';
import { createWebhookNotifier, type WebhookEvent, type WebhookNotifier } from './webhook.js';

/** alerts.webhook.events when the config has not been read yet: failures only. */
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookCategory[] = ['rejected', 'failed', 'unknown', 'anomaly', 'config_invalid', 'stale', 'unknown_step', 'epoch_refused'];

/** How many issues of an invalid reload the post lists; the log has them all. */
const MAX_LISTED_ISSUES = 10;

/** How much each kind of notice matters: what a channel's min_severity compares. */
const CATEGORY_SEVERITY: Record<WebhookCategory, Severity> = {
  acknowledged: 'info',
  anomaly: 'warning',
  rejected: 'error',
  unknown: 'error',
  config_invalid: 'error',
  stale: 'error',
  unknown_step: 'error',
  epoch_refused: 'error',
  failed: 'critical',
};

export interface FailureWebhook {
  /** Step outcomes, as the `step:outcome` event tells them (the supervisor subscribes it). */
  onStep(e: StepEvent): void;
  /** A SIGHUP reload refused; `issues` as the config.invalid log line lists them. */
  configInvalid(issues: readonly string[]): void;
  /** For reportAlerts: alerts opened and closed, filtered by category and severity. */
  readonly alerts: WebhookNotifier;
  /**
   * A reload's alerts.channels: an entry whose destination and secrets are unchanged keeps its
   * notifier (its events and min_severity follow the new entry), a new or changed one starts, a
   * removed or changed one stops. Throws, changing nothing, when an entry cannot be built.
   */
  useChannels(channels: readonly ChannelConfig[]): ChannelChange;
  /** Delivers what is due for up to timeoutMs, then stops; what is left waits in the outbox. */
  close(timeoutMs?: number): Promise<void>;
}

/** What a reload did to the channels, by name (a changed one is both started and stopped). */
export interface ChannelChange {
  kept: string[];
  started: string[];
  stopped: string[];
}

interface FailureWebhookOptions {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  redactor: Redactor;
  /** The webhook's categories, read at each event: a reload that changes them applies at once. */
  events: () => readonly WebhookCategory[];
  /** alerts.webhook.min_severity, read at each event; info (everything) when absent. */
  minSeverity?: () => Severity;
  /** alerts.channels as the config has them at start; a reload hands the new ones to useChannels. */
  channels?: readonly ChannelConfig[];
  /** Where failure notices wait until delivered: the state store (its outbox); memory when absent. */
  store?: OutboxStore | undefined;
  /** alerts.webhook (expire_after, timeout, allow_link_local), as the running config has them at start. */
  settings?: { expireMs: number; timeoutMs: number; allowLinkLocal: boolean };
  /** The runbook links' base (service/runbook.ts), read at each notice: a reload that changes it applies at once. */
  runbookBase?: () => string;
  /** Where the notices say they come from: the machine, and this daemon (its lease id in a cluster). */
  host?: string;
  instance?: string;
  clock?: Clock;
  onOutcome?: (o: NotificationOutcome) => void;
  /** For tests; the notifier's own defaults otherwise. */
  minIntervalMs?: number;
  retryBaseMs?: number;
  dispatcher?: Dispatcher;
}

interface Target {
  notifier: Notifier;
  events: () => readonly WebhookCategory[];
  minSeverity: () => Severity;
}

/** One of alerts.channels as running: its entry (read at each notice), what it was built from, its notifier. */
interface ChannelTarget {
  config: ChannelConfig;
  fingerprint: string;
  notifier: Notifier;
}

/** The webhook URL is a secret (Slack and Discord URLs are bearer tokens): env or systemd credential. */
export function webhookUrl(env: NodeJS.ProcessEnv): string | undefined {
  return resolveWebhookUrl(env)?.url;
}

/**
 * The notifier, when a webhook URL or a channel is configured; undefined otherwise. Throws
 * KeyError for a signing secret that is set but too short or a channel secret that is not there,
 * ConfigError for a URL webhook-url.ts refuses (`check` reports them, in its list). Secrets are
 * registered with the redactor before anything is sent, and every notice is scrubbed by it
 * (outbox.ts) whoever makes it.
 */
export function createFailureWebhook(opts: FailureWebhookOptions): FailureWebhook | undefined {
  const targets: Target[] = [];
  const shared = {
    redactor: opts.redactor,
    store: opts.store,
    logger: opts.logger,
    clock: opts.clock,
    onOutcome: opts.onOutcome,
    ...(opts.settings === undefined ? {} : { expireMs: opts.settings.expireMs }),
    ...(opts.minIntervalMs === undefined ? {} : { minIntervalMs: opts.minIntervalMs }),
    ...(opts.retryBaseMs === undefined ? {} : { retryBaseMs: opts.retryBaseMs }),
  };
  const source = resolveWebhookUrl(opts.env);
  const secret = resolveWebhookSecret(opts.env, { credentialsDir: opts.env.CREDENTIALS_DIRECTORY });
  if (source !== undefined) {
    const { url } = source;
    opts.redactor.add(url);
    if (secret !== undefined) opts.redactor.add(secret);
    // The config check refused such a URL already; this is the same rule where the URL is used.
    const problem = source.unreadable ?? webhookUrlProblem(url, opts.settings?.allowLinkLocal ?? false);
    if (problem !== undefined) throw new ConfigError([{ file: source.what, line: 0, col: 0, path: '', message: `the webhook URL from ${source.what} ${problem}` }]);
    const notifier = createWebhookNotifier({
      ...shared,
      url,
      secret,
      ...(opts.dispatcher === undefined ? {} : { dispatcher: opts.dispatcher }),
      ...(opts.settings === undefined ? {} : { timeoutMs: opts.settings.timeoutMs }),
    });
    targets.push({ notifier, events: opts.events, minSeverity: opts.minSeverity ?? (() => 'info') });
  }
  // alerts.channels by name (the outbox's channel column). A reload swaps the map (useChannels).
  let channels = new Map<string, ChannelTarget>();
  const build = (list: readonly ChannelConfig[]): Array<{ c: ChannelConfig; built: BuiltChannel }> =>
    list.map((c) => ({ c, built: buildChannel(c, { env: opts.env, redactor: opts.redactor, clock: opts.clock, dispatcher: opts.dispatcher }) }));
  const start = (c: ChannelConfig, built: BuiltChannel): ChannelTarget => ({
    config: c,
    fingerprint: built.fingerprint,
    notifier: createOutboxNotifier({ ...shared, channel: built.channel, maxBatch: built.maxBatch, deadlineMs: c.timeoutMs }),
  });
  for (const { c, built } of build(opts.channels ?? [])) channels.set(c.name, start(c, built));
  if (targets.length === 0 && channels.size === 0) return undefined;
  const where = { host: opts.host, instance: opts.instance };
  const everyTarget = (): Target[] => [...targets, ...[...channels.values()].map((t) => ({ notifier: t.notifier, events: () => t.config.events, minSeverity: () => t.config.minSeverity }))];

  const post = (category: WebhookCategory, e: WebhookEvent): void => {
    const alert = e.details?.['alert'];
    const severity = isAlertKind(alert) ? ALERT_KINDS[alert].severity : CATEGORY_SEVERITY[category];
    // What to do about it, as an absolute link; an acknowledgement needs nothing done.
    const runbook = category === 'acknowledged' || opts.runbookBase === undefined ? undefined : runbookUrl(opts.runbookBase(), isAlertKind(alert) ? 'alerts' : 'notices');
    const notice = { ...e, priority: category === 'acknowledged' ? ('info' as const) : ('failure' as const), details: { category, severity, ...e.details, ...(runbook === undefined ? {} : { runbook }), ...where } };
    for (const t of everyTarget()) {
      if (!t.events().includes(category) || !severityAtLeast(severity, t.minSeverity())) continue;
      t.notifier.notify(notice);
    }
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
        // Each alert rides on the category alert-kinds.ts gives it, the nearest one an operator
        // already subscribes to (a clock out of bounds is told with the stale wallets it causes).
        if (isAlertKind(alert)) post(ALERT_KINDS[alert].category, e);
      },
      close: () => Promise.resolve(),
    },
    useChannels(next) {
      // Every entry built first: one that cannot be (a secret gone since the check) throws here,
      // and the running channels stay, all of them.
      const built = build(next);
      const now = new Map<string, ChannelTarget>();
      const change: ChannelChange = { kept: [], started: [], stopped: [] };
      for (const { c, built: b } of built) {
        const old = channels.get(c.name);
        if (old !== undefined && old.fingerprint === b.fingerprint) {
          // Same destination and secrets: the same notifier, with the entry's events and min_severity as now.
          old.config = c;
          now.set(c.name, old);
          change.kept.push(c.name);
        } else {
          now.set(c.name, start(c, b));
          change.started.push(c.name);
        }
      }
      const retired = [...channels.values()].filter((t) => now.get(t.config.name) !== t);
      channels = now;
      // A channel removed or changed stops at once: a POST in flight is aborted, and what the
      // outbox keeps under its name goes to the new entry of that name (nowhere, if removed).
      for (const t of retired) {
        change.stopped.push(t.config.name);
        void t.notifier.close(0).catch(() => undefined);
      }
      return change;
    },
    close: async (timeoutMs) => {
      await Promise.all(everyTarget().map((t) => t.notifier.close(timeoutMs)));
    },
  };
}

/** The category and words of a step outcome; undefined for outcomes nobody needs to hear of. */
function stepEvent(e: StepEvent): { category: WebhookCategory; event: WebhookEvent } | undefined {
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const facts = {
    code: str(e.code),
    server_message: str(e.server_message),
    http_status: typeof e.http_status === 'number' ? e.http_status : undefined,
    request_id: str(e.request_id),
    symbol: str(e.symbol),
    tx: str(e.tx),
    hint: str(e.hint),
  };
  const details = {
    wallet: e.wallet,
    op: e.kind,
    kind: e.kind,
    state: e.state,
    plan: e.plan,
    step: e.step,
    amountLamports: e.amountLamports?.toString(),
    ...(e.amountLamports === undefined ? {} : amountFields(e.kind, e.symbol, e.amountLamports)),
    ...facts,
  };
  // An amount in its unit: "2 SOL (SOL2X)"; a withdraw's "4 SOL2X vault shares", a burn's tokens.
  const sym = facts.symbol === undefined ? '' : ` (${facts.symbol})`;
  const inUnit = (l: Lamports): string => {
    const f = amountFields(e.kind, facts.symbol, l);
    return 'amount_sol' in f ? `${f.amount_sol} SOL${sym}` : `${f.amount_units} ${f.unit}`;
  };
  const what = `${e.kind}${e.amountLamports === undefined || e.state === 'anomaly' ? sym : ` of ${inUnit(e.amountLamports)}`}`;
  const where = `wallet ${e.wallet}: ${what} step ${e.step} (plan ${e.plan})`;
  // The server's own words, when the failure's event carries them: what was refused and why.
  const said = [facts.code, facts.server_message === undefined ? undefined : `"${facts.server_message}"`].filter((v) => v !== undefined).join(' ');
  const meta = [facts.http_status === undefined ? undefined : `HTTP ${facts.http_status}`, facts.request_id === undefined ? undefined : `request id ${facts.request_id}`].filter((v) => v !== undefined).join(', ');
  const why = said === '' ? (meta === '' ? '' : ` (${meta})`) : `: ${said}${meta === '' ? '' : ` (${meta})`}`;
  switch (e.state) {
    case 'acknowledged': {
      const amount = e.amountLamports === undefined ? sym : ` ${inUnit(e.amountLamports)}`;
      const tx = facts.tx === undefined ? '' : `, tx ${facts.tx}`;
      return {
        category: 'acknowledged',
        event: { key: `acknowledged:step:${e.step}`, event: 'action.acknowledged', text: `wallet ${e.wallet}: ${e.kind}${amount} acknowledged (plan ${e.plan}${tx})`, details },
      };
    }
    case 'rejected':
      return {
        category: 'rejected',
        event: {
          key: `rejected:step:${e.step}`,
          event: 'action.rejected',
          text:
            said === ''
              ? `${where} was not done: rejected by the API, or refused before signing by a safety limit${why} (action.rejected / action.refused in the log); the rest of the plan is skipped`
              : `${where} was rejected${why}; the rest of the plan is skipped`,
          details,
        },
      };
    case 'failed':
      return {
        category: 'failed',
        event: {
          key: `failed:step:${e.step}`,
          event: 'signing.paused',
          text: `${where}: the API refused the request itself as invalid${said === '' ? ' (credentials, signature, timestamp or headers)' : ''}${why}; signing is paused until the config changes or the daemon restarts (signing.paused in the log)`,
          details,
        },
      };
    case 'unknown':
      return {
        category: 'unknown',
        event: {
          key: `unknown:step:${e.step}`,
          event: 'action.unknown',
          text: `${where}: outcome unknown${why}${facts.tx === undefined ? '' : ` (the answer named tx ${facts.tx})`}; check it on the server, then \`autoclaim actions resolve ${e.step} --applied|--not-applied\` if it is not reconciled`,
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
