// A few named error classes with string codes. Callers branch on `code` / `disposition`,
// never on message text. Messages are for operators and never carry a secret.

export class AutoclaimError extends Error {
  constructor(
    readonly code: string,
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
  /** The response body, kept for the record: secrets already scrubbed, at most the client's max size. */
  readonly rawBody: string | undefined;
  /** The server's own error code (`error.code` or `code` of an error body), scrubbed and bounded. */
  readonly serverCode: string | undefined;
  /** The server's error message, secrets scrubbed, then bounded to one short line: store this, not rawBody. */
  readonly serverMessage: string | undefined;
  /** For invalid_response: the schema problems, each naming the field path. */
  readonly issues: string[];
  /** The server's `x-request-id` for this answer, to quote to its support. */
  readonly requestId: string | undefined;

  constructor(
    code: string,
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
export class KeyError extends AutoclaimError {}

/** SQLite problems and the single-instance lock. */
export class StateError extends AutoclaimError {}
