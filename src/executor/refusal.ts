// What a refusal of a signed request points at, read from the server's own words (its error code
// and message), never from the status code alone: a 401 is as often a missing header or a wrong
// signed message as a wrong API key, and the operator's first fix should be the right one (issue
// 27: "check the API key" after `bad_signature: missing x-acme-ts / x-acme-wallet headers`). Pure,
// so it is table-tested; outcome.ts logs and pauses with it, doctor's probe reports with it.
import type { RefusalHint, ServerRefusal } from '../events.js';

export type { RefusalHint, ServerRefusal } from '../events.js';

// Checked in this order; the first that matches names the hint. The bearer first: "missing
// Authorization header" is about the key, not the prefix. Then the clock (a timestamp refused as
// stale or out of window), before the headers, since such a message names the `-ts` header too.
// Headers before the signature: "bad_signature: missing x-acme-ts headers" is a prefix mistake.
const KEY = /api[ _-]?key|bearer|authorization header|credential/i;
const CLOCK = /stale|expired?|window|too old|too far|in the future|skew|clock|drift/i;
/** Words that make "expired" about a credential rather than a time. */
const CREDENTIAL_WORDS = /token|key|credential|session|certificate|subscription/i;
const HEADERS = /header|missing[_ -]?(?:x-|ts\b|wallet\b)|\bx-[a-z0-9]+(?:-[a-z0-9]+)*-(?:ts|wallet)\b|timestamp|\bts\b/i;
const SIGNATURE = /signature|\bsig\b|verif/i;
const PERMISSION = /forbidden|permission|not allowed|not permitted|access denied|scope|not authori[sz]ed (?:for|to)/i;
const AUTH = /unauthori[sz]ed|authenticat|\btoken\b|\bauth\b/i;

/**
 * The hint a refusal's words give. `clock` only on a clock signal in its words (stale, expired,
 * window, skew); a message that merely names the `-ts` header is about the headers. `unknown` when
 * the words name none of them, whatever the status.
 */
export function refusalHint(code: string | undefined, message: string | undefined): RefusalHint {
  const text = [code, message].filter((t) => t !== undefined && t !== '').join(' ');
  if (text === '') return 'unknown';
  if (KEY.test(text)) return 'key';
  if (CLOCK.test(text) && !CREDENTIAL_WORDS.test(text)) return 'clock';
  if (HEADERS.test(text)) return 'headers';
  if (SIGNATURE.test(text)) return 'signature';
  if (PERMISSION.test(text)) return 'permission';
  if (AUTH.test(text)) return 'key';
  return 'unknown';
}

/** What to check for each hint, said after "signing paused: ". */
export const REFUSAL_FIX: Readonly<Record<RefusalHint, string>> = {
  headers:
    "the server says the request's headers are missing or malformed: check api.header_prefix (the service's own x-<prefix>-ts and x-<prefix>-wallet names; `autoclaim doctor --probe` tells)",
  clock: "the server refused the request's timestamp as stale or out of its window: check this machine's clock (timedatectl, chronyc tracking)",
  signature:
    'the server says the signature does not verify: check api.endpoints.<op>.message (the signed text), api.signature_encoding and that the wallet key is the one the service knows (`autoclaim doctor --probe`)',
  key: 'the server refused the API key: check $AUTOCLAIM_API_KEY, api.api_key_file or the api_key credential',
  permission: 'the server says the API key may not do this: check the key\'s permissions for this wallet and operation with the service',
  unknown:
    "the server's answer does not say why: check, in order, api.header_prefix, the API key and api.endpoints.<op>.message (`autoclaim doctor --probe` tells a wrong prefix from a wrong key or message)",
};

/** The refusal's fields as events, alerts and `status --json` carry them; absent values are left out. */
export function serverRefusal(e: { status?: number | undefined; serverCode?: string | undefined; serverMessage?: string | undefined; requestId?: string | undefined }): ServerRefusal {
  const hint = refusalHint(e.serverCode, e.serverMessage);
  return {
    ...(e.serverCode === undefined ? {} : { code: e.serverCode }),
    ...(e.serverMessage === undefined ? {} : { server_message: e.serverMessage }),
    ...(e.status === undefined ? {} : { http_status: e.status }),
    ...(e.requestId === undefined ? {} : { request_id: e.requestId }),
    hint,
  };
}

/**
 * Whether a refusal is about time, so `clock.skew` is logged: its words give a clock signal, or the
 * server's `Date` header (the client's last measured skew) is beyond the alerts.clock_skew threshold.
 * Never merely because the words name the timestamp header.
 */
export function clockSignal(hint: RefusalHint, dateSkewMs: number | undefined, thresholdMs: number): boolean {
  if (hint === 'clock') return true;
  return dateSkewMs !== undefined && Number.isFinite(dateSkewMs) && Math.abs(dateSkewMs) > thresholdMs;
}
