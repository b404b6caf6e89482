// One deadline for a whole request: connect, headers and every byte of the body (issue 11).
// undici's headersTimeout and bodyTimeout bound only the wait for the next chunk, so a body that
// trickles in a byte at a time never timed out and a poll could hang forever.
//
// Whether a request that missed its deadline may have reached the server decides whether it may
// be sent again (SPEC §2). undici starts a request on a connection (onRequestStart) immediately
// before writing it, and a request aborted before that is dropped unwritten; so a request whose
// deadline passed before it was started is provably unsent, and any other is ambiguous.
import type { Dispatcher } from 'undici';
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

// The signals of requests undici has started on a connection. Keyed weakly: a finished request's
// entry goes with its signal.
const started = new WeakSet<object>();

/**
 * The dispatcher, wrapped so that a request carrying a signal records the moment undici starts it
 * on a connection. Every other callback passes straight through.
 */
export function trackRequestStart(dispatcher: Dispatcher): Dispatcher {
  return dispatcher.compose((dispatch) => (opts, handler) => {
    const signal = (opts as { signal?: unknown }).signal;
    if (typeof signal !== 'object' || signal === null) return dispatch(opts, handler);
    return dispatch(opts, {
      onRequestStart: (controller, context: unknown) => {
        started.add(signal);
        handler.onRequestStart?.(controller, context);
      },
      onRequestUpgrade: (controller, statusCode, headers, socket) => handler.onRequestUpgrade?.(controller, statusCode, headers, socket),
      onResponseStart: (controller, statusCode, headers, statusMessage) =>
        handler.onResponseStart?.(controller, statusCode, headers, statusMessage),
      onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
      onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
      onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
    });
  });
}

/**
 * A timer for one request. Pass `signal` to the request (undici then aborts it, destroying a body
 * being read), wrap each await of the request in `race` (a request still connecting is only
 * aborted once its connection is up, so the signal alone would not end the wait), and `clear` it
 * when the request is done. The timer never keeps the process alive.
 */
export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly expired: Promise<never>;
  private missed: DeadlineExceeded | undefined;

  constructor(readonly ms: number) {
    let fail: (err: DeadlineExceeded) => void = () => undefined;
    this.expired = new Promise<never>((_resolve, reject) => {
      fail = reject;
    });
    // Observed only through race(); a deadline nobody is racing must not be an unhandled rejection.
    this.expired.catch(() => undefined);
    this.timer = setTimeout(() => {
      // Read before aborting: from the abort on, undici drops the request instead of writing it.
      const err = new DeadlineExceeded(ms, started.has(this.controller.signal));
      this.missed = err;
      fail(err);
      this.controller.abort(err);
    }, ms);
    this.timer.unref();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The error the deadline fired with, or undefined while it has not passed. */
  get exceeded(): DeadlineExceeded | undefined {
    return this.missed;
  }

  /** `work`, unless the deadline passes first. A later failure of the abandoned work is dropped. */
  race<T>(work: Promise<T>): Promise<T> {
    work.catch(() => undefined);
    return Promise.race([work, this.expired]);
  }

  clear(): void {
    clearTimeout(this.timer);
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
