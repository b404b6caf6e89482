// What came back from one request, read and judged at the edge: the body within the size cap and
// scrubbed of secrets before anything else sees it, the request id, the JSON of a body, and the
// ApiError for a transport failure or a non-2xx (its disposition decides whether a signed request
// may be sent again, SPEC §2). The client (client.ts) decides what to do with them.
import { ApiError } from '../errors.js';
import { classifyError, classifyStatus, oneLine } from './classify.js';
import { parseJsonLossless } from './json.js';
import { parseRetryAfter } from './rate-limit.js';
import { badResponse, type ResponseContext } from './schemas.js';
import { describeServerError, keepOfCutBody, keptText, scrubDecoded } from './server-text.js';

type Scrub = (text: string) => string;

export interface RawResponse {
  /** x-request-id, scrubbed and bounded; undefined when the answer had none. */
  requestId: string | undefined;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  rawText: string;
}

/**
 * An answer over the size cap (exchange.ts BodyTooLarge): what came of it is kept, scrubbed and cut,
 * for the record. A 2xx too large to read is an invalid answer; any other status says what it says.
 */
export function tooLargeError(
  req: { method: string; url: string; max: number; scrub: Scrub },
  status: number,
  partial: Buffer[],
  cause?: unknown,
): ApiError {
  const { method, url, max, scrub } = req;
  const where = scrub(url);
  return new ApiError('RESPONSE_TOO_LARGE', `${method} ${where} : HTTP ${status} response larger than ${max} bytes`, {
    method,
    url: where,
    status,
    disposition: status >= 200 && status < 300 ? 'invalid_response' : classifyStatus(status).disposition,
    rawBody: keepOfCutBody(keptText(scrub(Buffer.concat(partial).toString('utf8')), scrub), max),
    cause,
  });
}

/** A header the server controls: one printable line, scrubbed, bounded, before anyone logs it. */
export function requestIdOf(value: string | string[] | undefined, scrub: Scrub): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text === '') return undefined;
  return scrub(text).replace(/[^\x20-\x7e]/g, '?').slice(0, 128);
}

/** No HTTP status, or no whole answer: where the request stands comes from the error chain. */
export function transportError(method: string, url: string, err: unknown, status: number | undefined, scrub: Scrub): ApiError {
  const c = classifyError(err);
  // A reason taken from the error's own text is cut to one line; scrub that text before the cut.
  const own = err instanceof Error ? err.message : String(err);
  const reason = c.reason === oneLine(own) ? oneLine(scrub(own)) : c.reason;
  // A status already received decides: a 4xx was refused whatever happened to its body.
  const disposition = status !== undefined && status >= 400 && status < 500 ? 'refused' : c.disposition;
  const after = status === undefined ? '' : ` (after HTTP ${status})`;
  const where = scrub(url);
  return new ApiError(c.code, `${method} ${where} : ${reason}${after}`, { method, url: where, disposition, status, cause: err });
}

/** A whole answer that is not a 2xx, with what the server said about it. */
export function statusError(method: string, url: string, res: RawResponse, nowMs: number, scrub: Scrub): ApiError {
  const c = classifyStatus(res.status);
  const retryAfterMs = res.status === 429 || res.status === 503 ? parseRetryAfter(res.headers['retry-after'], nowMs) : undefined;
  // rawText was scrubbed as it was read: cutting it now cannot expose part of a secret.
  const { detail, serverCode, serverMessage } = describeServerError(res.rawText, scrub);
  const where = scrub(url);
  return new ApiError(c.code, `${method} ${where} : ${c.reason}${detail === '' ? '' : ` ${detail}`}`, {
    method,
    url: where,
    disposition: c.disposition,
    status: res.status,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    rawBody: keptText(res.rawText, scrub),
    requestId: res.requestId,
    ...(serverCode !== undefined ? { serverCode } : {}),
    ...(serverMessage !== undefined ? { serverMessage } : {}),
  });
}

/** The JSON of a scrubbed body, its decoded strings scrubbed again (an escape can spell a secret). */
export function parseJsonBody(text: string, ctx: ResponseContext, scrub: Scrub): unknown {
  if (text.trim() === '') throw badResponse(ctx, ['body: empty (expected JSON)']);
  try {
    return scrubDecoded(parseJsonLossless(text), scrub);
  } catch (err) {
    // The parser's words quote a key it decoded ("Duplicate key '…'"): scrubbed before they are cut.
    const why = err instanceof Error ? oneLine(scrub(err.message), 80) : 'unreadable';
    throw badResponse(ctx, [`body: not valid JSON (${why})`], err);
  }
}
