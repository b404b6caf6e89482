// One HTTP exchange, dispatched with a handler that collects the answer itself: the deadline, the
// size cap and the moment undici starts the request on a connection live in one object.
//
// It replaces undici's request() for the client. That API hands every answer over as a Readable
// stream, and a deadline on top of it needs an AbortController, a wrapping handler that notes the
// start, and two promise races: a fifth of what a poll cost on its way through undici, for a body
// the client reads whole anyway (issue 14). The semantics are deadline.ts's, unchanged: one
// deadline for connect, headers and every byte of the body; a request whose deadline passed
// before undici started it on a connection is dropped unwritten (provably unsent), any other is
// ambiguous.
import type { Dispatcher } from 'undici';
import { DeadlineExceeded } from './deadline.js';

type Headers = Record<string, string | string[] | undefined>;

/** The answer had more than `max` bytes, by its content-length or as read; `partial` is what came. */
export class BodyTooLarge extends Error {
  constructor(
    readonly partial: Buffer[],
    cause?: unknown,
  ) {
    super('response body larger than the cap', { cause });
    this.name = 'BodyTooLarge';
  }
}

export interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
}

/**
 * Dispatches one request and collects its answer within `timeoutMs` and `max` bytes. Rejects with
 * DeadlineExceeded, BodyTooLarge, or undici's own error; `statusSoFar()` tells the status already
 * received when it failed (a 4xx was refused whatever happened to its body). `onStatus` sees the
 * status and headers as they arrive, before the body (a 429's Retry-After holds the limiter even
 * when its body never comes).
 */
export function exchange(
  dispatcher: Dispatcher,
  opts: Dispatcher.DispatchOptions,
  limits: { timeoutMs: number; max: number; onStatus?: (status: number, headers: Headers) => void },
): { answer: Promise<Answer>; statusSoFar: () => number | undefined } {
  const handler = new Collect(limits.timeoutMs, limits.max, limits.onStatus);
  try {
    dispatcher.dispatch(opts, handler);
  } catch (err) {
    handler.fail(err);
  }
  return { answer: handler.answer, statusSoFar: () => handler.status };
}

class Collect implements Dispatcher.DispatchHandler {
  readonly answer: Promise<Answer>;
  status: number | undefined;
  private headers: Headers = {};
  /**
   * The body so far, copied in as it comes, never undici's chunks themselves: each is a view of the
   * whole socket read it was parsed from, so a chunked answer sending a byte per chunk, each padded
   * with a chunk extension, had a few bytes of body hold all the wire they came on, and unpadded a
   * Buffer object per byte: max_response_bytes bounded the body, not what reading it held.
   */
  private body = Buffer.alloc(0);
  private size = 0;
  /** Set when undici starts the request on a connection: from then on it may have been written. */
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private failure: Error | undefined;
  private resolve: (a: Answer) => void = () => undefined;
  private reject: (err: unknown) => void = () => undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly ms: number,
    private readonly max: number,
    private readonly onStatus: ((status: number, headers: Headers) => void) | undefined,
  ) {
    this.answer = new Promise<Answer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.timer = setTimeout(() => this.expire(), ms);
    this.timer.unref();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Given up on before it was written: undici drops a request aborted here, unwritten.
    if (this.failure !== undefined) return controller.abort(this.failure);
    this.controller = controller;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Headers): void {
    if (statusCode < 200) return; // 1xx: informational, the answer is still to come
    this.status = statusCode;
    this.headers = headers;
    this.onStatus?.(statusCode, headers);
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > this.max) this.abort(controller, new BodyTooLarge([]));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    const size = this.size + chunk.length;
    if (size > this.max) return this.abort(controller, new BodyTooLarge([Buffer.concat([this.received(), chunk], size)]));
    if (size > this.body.length) {
      // Doubling keeps the copies linear; never past the cap, which a body may not exceed anyway. A
      // body in one chunk (a summary) takes its own size, which Node serves from its small pool.
      const grown = Buffer.allocUnsafe(Math.min(this.max, Math.max(size, 2 * this.body.length)));
      this.body.copy(grown, 0, 0, this.size);
      this.body = grown;
    }
    chunk.copy(this.body, this.size);
    this.size = size;
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve({ status: this.status ?? 0, headers: this.headers, body: this.received() });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    // undici's UND_ERR_RES_EXCEEDED_MAX_SIZE (the dispatcher's own cap, checked as the body comes)
    // is the same finding as ours; before any status it stays undici's error, as it always was.
    const capped = (error as { code?: unknown }).code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE' && this.status !== undefined;
    this.fail(capped ? new BodyTooLarge([this.received()], error) : error);
  }

  /** The body read so far (a view of `body`, whose unread tail is not the answer's). */
  private received(): Buffer {
    return this.body.subarray(0, this.size);
  }

  fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.failure = err instanceof Error ? err : new Error(String(err));
    clearTimeout(this.timer);
    this.reject(err);
  }

  private abort(controller: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
    controller.abort(err);
  }

  private expire(): void {
    // Read before aborting: from the abort on, undici drops a request instead of writing it.
    const err = new DeadlineExceeded(this.ms, this.controller !== undefined);
    this.fail(err);
    this.controller?.abort(err);
  }
}
