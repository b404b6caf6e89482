// URLs the config holds in the clear — Vault's address, a KMS endpoint, Telegram's API server,
// PagerDuty's endpoint, the runbook base — are not secrets and are not registered with the
// redactor: `check` prints them, messages name them (a Vault that cannot be reached, with undici's
// own text quoting the URL), and the runbook base goes into every notice. A user:password (or a
// token as the user) in one would be a secret in the YAML, sent everywhere; it is refused, as in
// api.base_url and state.url. The webhook's and Slack's or Discord's URLs are secrets themselves,
// read from a variable or a file and registered whole (key-check.ts); they are not checked here.
import { isLoopback } from '../loopback.js';

export const URL_CREDENTIALS_PROBLEM =
  'holds credentials (user:password@ or token@), and it is printed in messages and notices: they would be a secret in the YAML, sent everywhere; remove them';

/** Whether `text` parses as a URL with a user or a password in it. */
export function hasUrlCredentials(text: string): boolean {
  try {
    const url = new URL(text);
    return url.username !== '' || url.password !== '';
  } catch {
    return false;
  }
}

/**
 * Whether `text` is a plain http URL to a host that is not this machine. Vault's address gets the
 * Vault token in a header on every request, and a KMS endpoint a session token
 * (x-amz-security-token): over plain http to another host they cross the network in clear. Refused
 * as a webhook's is; http to this machine's loopback (a dev server, a test double) stays allowed.
 */
export function plainHttpElsewhere(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' && !isLoopback(url.hostname);
  } catch {
    return false;
  }
}

export const PLAIN_HTTP_PROBLEM = "is plain http to a host that is not this machine: the credential sent with every request would cross the network in clear; use https (http only to this machine's loopback)";
