// The API client: every response parsed by a schema at the edge, every failure an ApiError whose
// disposition says whether the request may have been applied (SPEC §2). Reads retry; signed
// requests are retried only when they provably never left this machine. Every request is one
// exchange (exchange.ts) with one deadline for all of it (deadline.ts); what comes back is
// scrubbed here and judged in response.ts.
//
// The api/ folder, the edge to the rewards-and-vaults service: this client; dispatcher.ts (the
// connection pool) and rate-limit.ts (the shared token bucket); exchange.ts, deadline.ts,
// response.ts and classify.ts (one request read whole within one deadline, the answer judged,
// where a failure stands);
// schemas.ts, schema-fields.ts, json.ts and server-text.ts (every body checked, losslessly, and
// scrubbed before it is kept); signed-request.ts, endpoints.ts, signer.ts and keys.ts (what is
// signed, where it goes, with which key).
import type { Dispatcher } from 'undici';
import type { ApiConfig, Clock, LeaderboardEntry, WalletSummary } from '../domain.js';
import { ApiError, AutoclaimError } from '../errors.js';
import { noEvents, type EventSink } from '../events.js';
import type { Logger } from '../log/logger.js';
import { DeadlineExceeded, deadlineError } from './deadline.js';
import { BodyTooLarge, exchange, type Answer } from './exchange.js';
import { defaultSleep, parseRetryAfter, type RateLimiter, type Sleep } from './rate-limit.js';
import { parseJsonBody, requestIdOf, statusError, tooLargeError, transportError, type RawResponse } from './response.js';
import { parseActionResponse, parseLeaderboard, parseWalletSummary, type ActionResponse, type ResponseContext } from './schemas.js';
import { keptText } from './server-text.js';
import { joinUrl, prepareSigned, prepareUnsigned, sealSigned, type PreparedRequest, type SignedInput, type UnsignedRequest } from './signed-request.js';
import type { Signer } from '../keys/signer.js';

export { createDispatcher } from './dispatcher.js';

interface ApiClientOptions {
  config: ApiConfig;
  apiKey: string | undefined;
  /** A Pool/Agent owned by the caller (closed by the caller); never undici's global dispatcher. */
  dispatcher: Dispatcher;
  limiter: RateLimiter;
  clock: Clock;
  logger: Logger;
  /** Used instead of config.baseUrl (e.g. the in-process sandbox's address). */
  baseUrlOverride?: string;
  /** Backoff between read retries; tests pass a fake. */
  sleep?: Sleep;
  /** [0, 1) source for backoff jitter; tests pass a fixed one. */
  random?: () => number;
  backoff?: { baseMs: number; capMs: number };
  /** Every HTTP exchange goes out on it as `request:done` (latency and status metrics). */
  events?: EventSink;
  /**
   * Scrubs registered secrets from text (the Redactor's redact). Applied to every response body
   * the moment it is read, before anything parses, cuts or quotes it, and to every error message.
   */
  redact?: (text: string) => string;
}

interface ActionResult {
  status: number;
  body: ActionResponse;
  /** The body as kept for the record (a step's response): server-text.ts keptText. */
  rawText: string;
  /** The answer's x-request-id, when it had one. */
  requestId: string | undefined;
}

interface LeaderboardResult {
  entries: LeaderboardEntry[];
  raw: unknown;
}

const USER_AGENT = 'autoclaim';

/**
 * Asked right before a signed request's first byte goes out, after every wait on the way (the rate
 * limiter's queue, a 429's pause, the backoff between tries): a reason not to send it after all
 * (the wallet's lease was lost meanwhile, its signed timestamp grew too old), or undefined to send.
 * A reason fails the send as WITHHELD, disposition not_sent: nothing left this machine.
 */
export type SendGate = () => string | undefined;

export class ApiClient {
  readonly baseUrl: string;
  /** The server's Date header on the last response (ms), for clock-skew warnings. */
  lastServerDateMs: number | undefined;
  /** Our wall clock when that response arrived. */
  lastServerDateLocalMs: number | undefined;
  readonly stats = { requests: 0, retries: 0, rateLimited: 0 };

  private config: ApiConfig;
  private apiKey: string | undefined;
  /** The caller's dispatcher. */
  private readonly dispatcher: Dispatcher;
  private readonly scrub: (text: string) => string;
  private readonly limiter: RateLimiter;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly backoffMs: { baseMs: number; capMs: number };
  private readonly attempts: number;
  private readonly events: EventSink;

  constructor(opts: ApiClientOptions) {
    const base = opts.baseUrlOverride ?? opts.config.baseUrl;
    if (!/^https?:\/\/[^/]/.test(base)) {
      throw new AutoclaimError('API_BASE_URL', `api base URL must be http(s)://host/..., got ${JSON.stringify(base)}`);
    }
    this.baseUrl = base.replace(/\/+$/, '');
    this.config = opts.config;
    this.apiKey = opts.apiKey === '' ? undefined : opts.apiKey;
    this.dispatcher = opts.dispatcher;
    this.scrub = opts.redact ?? ((text) => text);
    this.limiter = opts.limiter;
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.sleep = opts.sleep ?? defaultSleep;
    this.random = opts.random ?? Math.random;
    this.backoffMs = opts.backoff ?? { baseMs: 250, capMs: 5_000 };
    this.attempts = Math.max(1, Math.floor(opts.config.readAttempts));
    this.events = opts.events ?? noEvents;
  }

  /**
   * A reload changed how requests are signed and read: header prefix, message templates, answer
   * sets, signature encoding, auth on reads. Where the client connects (base URL, timeouts,
   * connections) stays until a restart. Returns whether anything changed.
   */
  reconfigure(api: ApiConfig): boolean {
    const signing = (c: ApiConfig) => JSON.stringify([c.headerPrefix, c.endpoints, c.signatureEncoding, c.authReads]);
    if (signing(api) === signing(this.config)) return false;
    this.config = { ...this.config, headerPrefix: api.headerPrefix, endpoints: api.endpoints, signatureEncoding: api.signatureEncoding, authReads: api.authReads };
    return true;
  }

  /** A reload found another API key (env, file or credential); returns whether it changed. */
  useApiKey(apiKey: string | undefined): boolean {
    if (apiKey === undefined || apiKey === '' || apiKey === this.apiKey) return false;
    this.apiKey = apiKey;
    return true;
  }

  /** Server clock minus ours at the last response (Date has 1 s resolution), or undefined. */
  clockSkewMs(): number | undefined {
    if (this.lastServerDateMs === undefined || this.lastServerDateLocalMs === undefined) return undefined;
    return this.lastServerDateMs - this.lastServerDateLocalMs;
  }

  /** GET /health without any credential; any 2xx is healthy. */
  async health(): Promise<void> {
    await this.read(joinUrl(this.baseUrl, '/health'), false);
  }

  /**
   * One GET as it comes back, for `doctor`: status, headers and the body text (scrubbed, unparsed,
   * its escapes written out: keptText).
   * Not retried, and a non-2xx is returned rather than thrown; transport failures throw as for any
   * read. `auth` sends the bearer as reads do (when api.auth_reads and a key are set).
   */
  async probe(
    path: string,
    opts: { auth: boolean },
  ): Promise<{ url: string; status: number; headers: Record<string, string | string[] | undefined>; rawText: string }> {
    const url = joinUrl(this.baseUrl, path);
    const res = await this.exchange('GET', url, this.readHeaders(opts.auth), undefined);
    // doctor parses it itself and quotes what it finds cut short: its escapes are written out (and
    // scrubbed) here, or a secret spelled in them would be decoded there, then cut past the redactor.
    // Its headers too, which it quotes cut to 80 or 128 characters.
    const headers = Object.fromEntries(Object.entries(res.headers).map(([name, v]) => [name, Array.isArray(v) ? v.map(this.scrub) : v === undefined ? v : this.scrub(v)]));
    return { url: this.scrub(url), status: res.status, headers, rawText: keptText(res.rawText, this.scrub) };
  }

  async leaderboard(limit: number): Promise<LeaderboardResult> {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`leaderboard limit must be a positive integer, got ${limit}`);
    const url = joinUrl(this.baseUrl, `/rewards/leaderboard?limit=${limit}`);
    const res = await this.read(url, true);
    const ctx = this.context('GET', url, res);
    const raw = parseJsonBody(res.rawText, ctx, this.scrub);
    return { entries: parseLeaderboard(raw, ctx), raw };
  }

  /** The summary; its `raw` is the lossless-parsed body. */
  async walletSummary(address: string): Promise<WalletSummary> {
    const url = joinUrl(this.baseUrl, `/rewards/wallet/${encodeURIComponent(address)}`);
    const res = await this.read(url, true);
    const ctx = this.context('GET', url, res);
    return parseWalletSummary(parseJsonBody(res.rawText, ctx, this.scrub), address, ctx);
  }

  /** Signs and builds a request; nothing is sent. Record it (as `sending`) before calling send. */
  prepare(input: SignedInput, signer: Signer, nowMs: number): PreparedRequest {
    return prepareSigned(this.config, this.baseUrl, input, signer, nowMs);
  }

  /** A request without its signature, and the action to ask the wallet's signer for (SPEC §7). */
  unsigned(input: SignedInput, nowMs: number): UnsignedRequest {
    return prepareUnsigned(this.config, this.baseUrl, input, nowMs);
  }

  /** The unsigned request with its (checked) signature: ready to record and send. */
  seal(unsigned: UnsignedRequest, signature: Uint8Array): PreparedRequest {
    return sealSigned(this.config, unsigned, signature);
  }

  /**
   * Sends a prepared request. A 2xx with a body that fits the schema is an ActionResult; anything
   * else is an ApiError. Re-sent only while the failure is provably `not_sent`.
   */
  async send(prepared: PreparedRequest, gate?: SendGate): Promise<ActionResult> {
    const headers: Record<string, string> = { ...prepared.headers, 'user-agent': USER_AGENT };
    if (this.apiKey !== undefined) headers['authorization'] = `Bearer ${this.apiKey}`;
    for (let attempt = 1; ; attempt += 1) {
      let res: RawResponse;
      try {
        res = await this.exchange(prepared.method, prepared.url, headers, prepared.body, gate);
      } catch (err) {
        if (err instanceof ApiError && err.disposition === 'not_sent' && err.code !== 'WITHHELD' && attempt < this.attempts) {
          await this.backoff(err, attempt);
          continue;
        }
        throw err;
      }
      if (res.status < 200 || res.status >= 300) throw statusError(prepared.method, prepared.url, res, this.clock.now(), this.scrub);
      const ctx = this.context(prepared.method, prepared.url, res);
      // An empty 2xx (e.g. 204) is an acknowledgement with nothing more to say.
      const raw = res.rawText.trim() === '' ? {} : parseJsonBody(res.rawText, ctx, this.scrub);
      return { status: res.status, body: parseActionResponse(raw, ctx), rawText: ctx.rawBody, requestId: res.requestId };
    }
  }

  private readHeaders(withAuth: boolean): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT };
    if (withAuth && this.config.authReads && this.apiKey !== undefined) headers['authorization'] = `Bearer ${this.apiKey}`;
    return headers;
  }

  /** A GET that must end in a 2xx, retried with capped exponential backoff and full jitter. */
  private async read(url: string, withAuth: boolean): Promise<RawResponse> {
    const headers = this.readHeaders(withAuth);
    for (let attempt = 1; ; attempt += 1) {
      try {
        const res = await this.exchange('GET', url, headers, undefined);
        if (res.status >= 200 && res.status < 300) return res;
        throw statusError('GET', url, res, this.clock.now(), this.scrub);
      } catch (err) {
        if (!(err instanceof ApiError) || attempt >= this.attempts || !isRetryableRead(err)) throw err;
        await this.backoff(err, attempt);
      }
    }
  }

  private async backoff(err: ApiError, attempt: number): Promise<void> {
    this.stats.retries += 1;
    // The limiter already holds every request for the server's Retry-After (or its default).
    const pausedByLimiter = err.code === 'RATE_LIMITED' || err.retryAfterMs !== undefined;
    const ceiling = Math.min(this.backoffMs.capMs, this.backoffMs.baseMs * 2 ** (attempt - 1));
    const delayMs = pausedByLimiter ? 0 : Math.floor(this.random() * ceiling);
    this.logger.debug(
      { event: 'api.retry', method: err.method, url: err.url, attempt, code: err.code, delayMs },
      `retrying after ${err.code}`,
    );
    if (delayMs > 0) await this.sleep(delayMs);
  }

  /** One request: rate limit, dispatch, read the body within the size cap. Non-2xx is returned. */
  private async exchange(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    gate?: SendGate,
  ): Promise<RawResponse> {
    await this.limiter.acquire();
    const withheld = gate?.();
    if (withheld !== undefined) {
      throw new ApiError('WITHHELD', `${method} ${this.scrub(url)} not sent: ${withheld}`, { method, url: this.scrub(url), disposition: 'not_sent' });
    }
    this.stats.requests += 1;
    const started = this.clock.monotonic();
    let status: number | undefined;
    try {
      const res = await this.exchangeOnce(method, url, headers, body);
      status = res.status;
      return res;
    } finally {
      this.events.emit('request:done', { method, url, status, seconds: (this.clock.monotonic() - started) / 1000 });
    }
  }

  private async exchangeOnce(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
  ): Promise<RawResponse> {
    const target = new URL(url);
    const { timeoutMs, maxResponseBytes: max } = this.config;
    const { answer, statusSoFar } = exchange(
      this.dispatcher,
      {
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method,
        headers,
        body: body ?? null,
        // timeout_ms bounds the whole exchange; undici's own timeouts (idle time) stay as a backstop.
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      { timeoutMs, max, onStatus: (status, h) => this.noteStatus(method, url, status, h) },
    );
    let res: Answer;
    try {
      res = await answer;
    } catch (err) {
      const status = statusSoFar();
      if (err instanceof BodyTooLarge && status !== undefined) throw tooLargeError({ method, url, max, scrub: this.scrub }, status, err.partial, err.cause);
      if (err instanceof DeadlineExceeded) throw deadlineError(method, this.scrub(url), err, status);
      throw transportError(method, url, err, status, this.scrub);
    }
    // Scrubbed before anything else sees it.
    const rawText = this.scrub(res.body.toString('utf8'));
    this.logger.debug({ event: 'api.response', method, url, status: res.status }, `${method} ${url} ${res.status}`);
    return { status: res.status, headers: res.headers, rawText, requestId: requestIdOf(res.headers['x-request-id'], this.scrub) };
  }

  /** Headers are in: note the server's date and any rate limit before the body is read. */
  private noteStatus(method: string, url: string, status: number, headers: Record<string, string | string[] | undefined>): void {
    this.noteServerDate(headers['date']);
    if (status === 429 || status === 503) {
      const retryAfterMs = parseRetryAfter(headers['retry-after'], this.clock.now());
      if (status === 429) {
        this.stats.rateLimited += 1;
        // A 429 is a signal to slow down, not an incident: debug, never warn (SPEC §1).
        this.logger.debug({ event: 'api.rate_limited', method, url, retryAfterMs }, 'rate limited by the API');
      }
      if (status === 429 || retryAfterMs !== undefined) this.limiter.pauseFor(retryAfterMs);
    }
  }

  private noteServerDate(value: string | string[] | undefined): void {
    const text = Array.isArray(value) ? value[0] : value;
    if (text === undefined) return;
    const ms = Date.parse(text);
    if (Number.isNaN(ms)) return;
    this.lastServerDateMs = ms;
    this.lastServerDateLocalMs = this.clock.now();
  }

  private context(method: string, url: string, res: RawResponse): ResponseContext {
    // The context is read only when the answer is refused (or a signed request's is kept): the URL
    // is scrubbed and the body made ready to keep then, by whoever reads them, not for every answer
    // that passes.
    const scrub = this.scrub;
    let where: string | undefined;
    let kept: string | undefined;
    return {
      method,
      get url(): string {
        return (where ??= scrub(url));
      },
      status: res.status,
      get rawBody(): string {
        return (kept ??= keptText(res.rawText, scrub));
      },
      requestId: res.requestId,
    };
  }

}

function isRetryableRead(err: ApiError): boolean {
  if (err.code === 'RATE_LIMITED') return true;
  if (err.code === 'RESPONSE_TOO_LARGE' || err.code === 'UNEXPECTED_STATUS') return false;
  return err.disposition === 'not_sent' || err.disposition === 'ambiguous';
}
