// A few named error classes with string codes. Callers branch on `code` / `disposition`,
// never on message text. Messages are for operators and never carry a secret.
//
// Every code is named below (renovate's lib/constants/error-messages.ts is the model), so a typo in
// a code thrown or compared fails to compile instead of silently never matching.

/** The configuration failed validation (ConfigError). */
type ConfigErrorCode = 'CONFIG_INVALID';

/** An HTTP request failed (ApiError); classify.ts decides which, with the disposition. */
export type ApiErrorCode =
  | 'UNREACHABLE' // not_sent: DNS, connect refused, connect timeout
  | 'TIMEOUT' // ambiguous: the deadline or a read timeout passed with the request out
  | 'CONNECTION_LOST' // ambiguous: reset, closed or aborted after connecting
  | 'HEADERS_TOO_LARGE'
  | 'RESPONSE_TOO_LARGE' // the body exceeded the client's max size
  | 'RATE_LIMITED' // HTTP 429
  | 'REFUSED' // another 4xx
  | 'SERVER_ERROR' // 5xx
  | 'UNEXPECTED_STATUS' // 1xx/3xx
  | 'BAD_RESPONSE' // a 2xx whose body fails the schema
  | 'INVALID_EPOCH' // a summary's epoch is not a real date, lies more than a day from our UTC date, or went backward (SPEC §2)
  | 'WITHHELD'; // not_sent: after a wait, the sender's gate held a signed request back (client.ts SendGate)

/** Key and credential loading (KeyError). */
export type KeyErrorCode =
  | 'KEY_MISSING'
  | 'KEY_UNREADABLE'
  | 'KEY_TOO_LARGE' // a key or secret file above its stated size (config/read-bounded.ts), refused before it is read
  | 'KEY_PERMISSIONS'
  | 'KEY_FORMAT'
  | 'KEY_BASE58'
  | 'KEY_LENGTH'
  | 'KEY_INVALID'
  | 'KEY_INCONSISTENT'
  | 'KEY_MISMATCH'
  | 'KEY_EXISTS'
  | 'API_KEY_FILE_UNREADABLE'
  | 'API_KEY_FILE_EMPTY'
  | 'API_KEY_FILE_MODE'
  | 'API_KEY_TOO_SHORT'
  | 'API_KEY_NOT_ONE_LINE'
  | 'WEBHOOK_SECRET_TOO_SHORT'
  | 'STATE_PASSWORD_TOO_SHORT' // under the redactor's minimum: a server echoing it would put it in a log
  | 'CHANNEL_SECRET_TOO_SHORT' // the same for a notification channel's secret
  | 'CHANNEL_SECRET_MISSING'; // a notification channel's secret source (alerts.channels) names nothing set

/** The state database and its lock (StateError). */
type StateErrorCode =
  | 'STATE_MISSING'
  | 'STATE_EMPTY'
  | 'STATE_IO'
  | 'STATE_CORRUPT'
  | 'STATE_FOREIGN'
  | 'STATE_INVALID'
  | 'STATE_SECRET'
  | 'STATE_LINKED'
  | 'STATE_REPLACED'
  | 'STATE_ROLLED_BACK' // the state file lacks requests its lock file says were sent from it (an older copy)
  | 'STATE_UNSAFE' // the signer's journal (or its mark) in a directory someone besides the signer can write
  | 'STATE_READONLY'
  | 'STATE_LOCKED'
  | 'STATE_MIGRATION'
  | 'STATE_TOO_OLD'
  | 'STATE_TOO_NEW'
  | 'STATE_NOT_FOUND'
  | 'STATE_TRANSITION'
  | 'STATE_LEASE_LOST'; // a fenced write for a wallet whose lease this daemon no longer holds

/** Thrown as a plain AutoclaimError. */
type OtherErrorCode =
  | 'API_BASE_URL'
  | 'INVALID_ACTION' // a signed request lacks what its op needs
  | 'AMOUNT_NEEDS_CLAIM'
  | 'AMOUNT_INVALID'
  | 'FAILPOINT_INVALID'
  | 'LISTEN_INVALID'
  | 'LISTEN_FAILED';

export type ErrorCode = ConfigErrorCode | ApiErrorCode | KeyErrorCode | StateErrorCode | OtherErrorCode;

export class AutoclaimError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export interface ConfigIssue {
  file: string;
  line: number; // 1-based; 0 when the problem has no place in the file (e.g. file missing)
  col: number; // 1-based
  path: string; // e.g. rules[0].when.pending_sol
  message: string;
}

export function formatIssue(i: ConfigIssue): string {
  const where = i.line > 0 ? `${i.file}:${i.line}:${i.col}` : i.file;
  return i.path ? `${where} ${i.path}: ${i.message}` : `${where}: ${i.message}`;
}

export class ConfigError extends AutoclaimError {
  declare readonly code: ConfigErrorCode;

  constructor(readonly issues: ConfigIssue[]) {
    super('CONFIG_INVALID', issues.map(formatIssue).join('\n'));
  }
}

/**
 * Where a failed request stands with respect to the server, which decides whether it may be
 * sent again (SPEC §2):
 * - not_sent:   provably never reached the server (connect refused, DNS, connect timeout)
 * - refused:    reached it and was refused before being applied (429, 4xx that say "invalid")
 * - ambiguous:  may have been applied (timeout/reset after writing, 5xx)
 * - invalid_response: a 2xx whose body fails the schema; for a signed request treat as ambiguous
 */
export type Disposition = 'not_sent' | 'refused' | 'ambiguous' | 'invalid_response';

export class ApiError extends AutoclaimError {
  readonly method: string;
  readonly url: string;
  readonly disposition: Disposition;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  /** The response body, kept for the record: secrets scrubbed, in its JSON escapes too (server-text.ts keptText), at most the client's max size. */
  readonly rawBody: string | undefined;
  /** The server's own error code (`error.code` or `code` of an error body), scrubbed and bounded. */
  readonly serverCode: string | undefined;
  /** The server's error message, secrets scrubbed, then bounded to one short line: store this, not rawBody. */
  readonly serverMessage: string | undefined;
  /** For invalid_response: the schema problems, each naming the field path. */
  readonly issues: string[];
  /** The server's `x-request-id` for this answer, to quote to its support. */
  readonly requestId: string | undefined;

  declare readonly code: ApiErrorCode;

  constructor(
    code: ApiErrorCode,
    message: string,
    init: {
      method: string;
      url: string;
      disposition: Disposition;
      status?: number;
      retryAfterMs?: number;
      rawBody?: string;
      serverCode?: string;
      serverMessage?: string;
      issues?: string[];
      requestId?: string | undefined;
      cause?: unknown;
    },
  ) {
    super(code, message, { cause: init.cause });
    this.method = init.method;
    this.url = init.url;
    this.disposition = init.disposition;
    this.status = init.status;
    this.retryAfterMs = init.retryAfterMs;
    this.rawBody = init.rawBody;
    this.serverCode = init.serverCode;
    this.serverMessage = init.serverMessage;
    this.issues = init.issues ?? [];
    this.requestId = init.requestId;
  }
}

/** Key loading and signing problems: unreadable, world-readable, malformed, address mismatch. */
export class KeyError extends AutoclaimError {
  declare readonly code: KeyErrorCode;

  constructor(code: KeyErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** SQLite problems and the single-instance lock. */
export class StateError extends AutoclaimError {
  declare readonly code: StateErrorCode;

  constructor(code: StateErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
