// Where a failed request stands with respect to the server (SPEC §2). This decides whether money
// may move twice, so every doubt resolves to "ambiguous": only a failure that provably happened
// before the request could reach the server is "not_sent".
import type { ApiErrorCode, Disposition } from '../errors.js';

interface Classified {
  disposition: Disposition;
  /** Stable ApiError code. */
  code: ApiErrorCode;
  /** Short human phrase for the one-line message: "connection refused". */
  reason: string;
}

// Failures of name resolution or of the TCP connect itself: no byte of the request left us.
const NOT_SENT: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found (DNS)',
  EAI_AGAIN: 'DNS lookup failed (temporary)',
  EAI_NONAME: 'host not found (DNS)',
  EAI_FAIL: 'DNS lookup failed',
  ENETUNREACH: 'network unreachable',
  EHOSTUNREACH: 'host unreachable',
  EHOSTDOWN: 'host down',
  ENETDOWN: 'network down',
  EADDRNOTAVAIL: 'local address not available',
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  // undici refuses to dispatch on a closed dispatcher: nothing was written
  UND_ERR_CLOSED: 'HTTP client closed',
  UND_ERR_INVALID_ARG: 'invalid request (not sent)',
};

// The connection was up and the request may have been written, in whole or in part.
const AMBIGUOUS: Readonly<Record<string, [code: ApiErrorCode, reason: string]>> = {
  UND_ERR_HEADERS_TIMEOUT: ['TIMEOUT', 'timed out waiting for the response headers'],
  UND_ERR_BODY_TIMEOUT: ['TIMEOUT', 'timed out reading the response body'],
  UND_ERR_SOCKET: ['CONNECTION_LOST', 'connection closed before the response completed'],
  ECONNRESET: ['CONNECTION_LOST', 'connection reset'],
  EPIPE: ['CONNECTION_LOST', 'connection closed while sending (broken pipe)'],
  ECONNABORTED: ['CONNECTION_LOST', 'connection aborted'],
  UND_ERR_DESTROYED: ['CONNECTION_LOST', 'HTTP client destroyed during the request'],
  UND_ERR_ABORTED: ['CONNECTION_LOST', 'request aborted'],
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: ['CONNECTION_LOST', 'response shorter or longer than its Content-Length'],
  UND_ERR_RES_EXCEEDED_MAX_SIZE: ['RESPONSE_TOO_LARGE', 'response larger than the allowed size'],
  UND_ERR_HEADERS_OVERFLOW: ['HEADERS_TOO_LARGE', 'response headers too large'],
};

interface ErrnoLike {
  code?: unknown;
  syscall?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The error and everything it wraps (cause chains, AggregateError members), outermost first. */
function chain(err: unknown): ErrnoLike[] {
  const out: ErrnoLike[] = [];
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): void => {
    if (typeof e !== 'object' || e === null || seen.has(e) || depth > 8) return;
    seen.add(e);
    const rec = e as ErrnoLike;
    out.push(rec);
    if (Array.isArray(rec.errors)) for (const inner of rec.errors as unknown[]) visit(inner, depth + 1);
    visit(rec.cause, depth + 1);
  };
  visit(err, 0);
  return out;
}

function codeOf(e: ErrnoLike): string | undefined {
  return typeof e.code === 'string' ? e.code : undefined;
}

// Where a NOT_SENT errno is still proof: the name lookup and the connect itself. The kernel keeps an
// ICMP unreachable (host, network, port: iptables' default REJECT) that reaches a connection
// already up as a soft error, and reports it on a read or a write when it gives the connection up
// (tcp_write_err): the request may have been delivered whole by then, and applied.
const BEFORE_CONNECTED = /^(?:connect|getaddrinfo|getnameinfo|query[A-Za-z]*)$/;

function classifyCode(code: string, syscall: unknown): Classified | undefined {
  const ambiguous = AMBIGUOUS[code];
  if (ambiguous) return { disposition: 'ambiguous', code: ambiguous[0], reason: ambiguous[1] };
  const notSent = NOT_SENT[code];
  if (notSent !== undefined && typeof syscall === 'string' && !BEFORE_CONNECTED.test(syscall)) {
    return { disposition: 'ambiguous', code: 'CONNECTION_LOST', reason: `${notSent} on a connection already up (${syscall})` };
  }
  if (notSent !== undefined) return { disposition: 'not_sent', code: 'UNREACHABLE', reason: notSent };
  // The kernel's own connect timeout, as opposed to a read timing out on a live connection.
  if (code === 'ETIMEDOUT') {
    return syscall === 'connect'
      ? { disposition: 'not_sent', code: 'UNREACHABLE', reason: 'connect timeout' }
      : { disposition: 'ambiguous', code: 'TIMEOUT', reason: 'timed out' };
  }
  return undefined;
}

/**
 * Classifies a transport failure (no HTTP status was received). Any sign in the error chain that
 * the request may have gone out wins over a sign that it did not: an AggregateError from
 * happy-eyeballs is not_sent only when none of its members says otherwise.
 */
export function classifyError(err: unknown): Classified {
  const errors = chain(err);
  let notSent: Classified | undefined;
  for (const e of errors) {
    const code = codeOf(e);
    if (code === undefined) continue;
    const c = classifyCode(code, e.syscall);
    if (c === undefined) continue;
    if (c.disposition !== 'not_sent') return c;
    notSent ??= c;
  }
  if (notSent) return notSent;
  const first = errors[0];
  const detail = first && typeof (first as { message?: unknown }).message === 'string' ? (first as Error).message : String(err);
  return { disposition: 'ambiguous', code: 'CONNECTION_LOST', reason: oneLine(detail) };
}

/** Classifies an HTTP status that is not 2xx. */
export function classifyStatus(status: number): Classified {
  if (status === 429) return { disposition: 'refused', code: 'RATE_LIMITED', reason: 'HTTP 429 rate limited' };
  if (status >= 400 && status < 500) return { disposition: 'refused', code: 'REFUSED', reason: `HTTP ${status}` };
  if (status >= 500) return { disposition: 'ambiguous', code: 'SERVER_ERROR', reason: `HTTP ${status}` };
  // 1xx/3xx: nothing here follows redirects, and a 303 after a POST means it was applied.
  return { disposition: 'ambiguous', code: 'UNEXPECTED_STATUS', reason: `HTTP ${status}` };
}

/** Collapses whitespace and truncates, so an error message stays one readable line. */
export function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}
