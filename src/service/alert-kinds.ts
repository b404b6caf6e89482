// Every alert the daemon raises, defined once: how much it matters and the notice category it rides
// on (what alerts.webhook.events and a channel's events subscribe to). The notifier reads it, and so
// does /metrics: autoclaim_alerts_open{alert,severity} counts the open episodes of each, which the
// Prometheus rule AutoclaimAlertOpen fires on. The rule thus follows the daemon's own judgement and
// thresholds (alerts.* in the config) instead of writing them a second time.
import type { Severity, WebhookCategory } from '../domain.js';

export const ALERT_KINDS = {
  wallet_stale: { severity: 'error', category: 'stale' },
  unknown_step: { severity: 'error', category: 'unknown_step' },
  claim_undetermined: { severity: 'critical', category: 'unknown_step' },
  state_unreachable: { severity: 'critical', category: 'stale' },
  claim_in_doubt: { severity: 'warning', category: 'unknown_step' },
  epoch_refused: { severity: 'error', category: 'epoch_refused' },
  clock_skew: { severity: 'warning', category: 'stale' },
  config_differs: { severity: 'warning', category: 'config_invalid' },
  schema_newer: { severity: 'critical', category: 'config_invalid' },
  claims_stalled: { severity: 'warning', category: 'stale' },
  signer_unavailable: { severity: 'error', category: 'stale' },
} as const satisfies Record<string, { severity: Severity; category: WebhookCategory }>;

export type AlertKind = keyof typeof ALERT_KINDS;

export function isAlertKind(s: unknown): s is AlertKind {
  return typeof s === 'string' && Object.hasOwn(ALERT_KINDS, s);
}
