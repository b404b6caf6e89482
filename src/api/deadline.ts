// One deadline for a whole request: connect, headers and every byte of the body (issue 11).
// undici's headersTimeout and bodyTimeout bound only the wait for the next chunk, so a body that
// trickles in a byte at a time never timed out and a poll could hang forever.
//
// Whether a request that missed its deadline may have reached the server decides whether it may
// be sent again (SPEC §2). undici starts a request on a connection (onRequestStart) immediately
// before writing it, and a request aborted before that is dropped unwritten; so a request whose
// deadline passed before it was started is provably unsent, and any other is ambiguous. The timer
// itself lives in exchange.ts, with the handler that sees the request start.
import { ApiError, type Disposition } from '../errors.js';

/** Why a request was abandoned. `mayHaveBeenWritten`: undici had started it on a connection. */
export class DeadlineExceeded extends Error {
  constructor(
    readonly ms: number,
    readonly mayHaveBeenWritten: boolean,
  ) {
    super(`no complete response within ${ms} ms`);
    this.name = 'DeadlineExceeded';
  }
}

/**
 * The ApiError for a missed deadline (`url` already scrubbed). Unsent only if undici never started
 * the request on a connection; once it may have been written, a signed request's fate is unknown.
 */
export function deadlineError(method: string, url: string, missed: DeadlineExceeded, status: number | undefined): ApiError {
  let reason: string;
  let disposition: Disposition;
  if (status !== undefined) {
    reason = `timed out reading the response body (HTTP ${status}; deadline ${missed.ms} ms)`;
    // A status already received decides: a 4xx was refused whatever happened to its body.
    disposition = status >= 400 && status < 500 ? 'refused' : 'ambiguous';
  } else if (missed.mayHaveBeenWritten) {
    reason = `timed out waiting for the response headers (deadline ${missed.ms} ms)`;
    disposition = 'ambiguous';
  } else {
    reason = `timed out before the request was sent (no connection within the ${missed.ms} ms deadline)`;
    disposition = 'not_sent';
  }
  return new ApiError('TIMEOUT', `${method} ${url} : ${reason}`, { method, url, disposition, status, cause: missed });
}
