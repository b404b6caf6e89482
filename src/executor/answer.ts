// What a 2xx answer to a signed request says happened (SPEC §2). The status code only says how the
// request travelled; the body says whether the server applied it. A body is a claim to be checked,
// so anything that is not a plain "applied" reads as refused or unknown, and contradictions as
// unknown: only "applied" lets the next step of a plan run. Pure, so it is table-tested.
import type { SignedEndpoint } from '../domain.js';

export type AnswerOutcome = 'applied' | 'refused' | 'unknown';

interface AnswerVerdict {
  outcome: AnswerOutcome;
  /** One short phrase for logs and the step's record: `status "pending"`, `HTTP 202`. */
  detail: string;
  /** The body's `status` as sent, when it had one. */
  status: string | undefined;
  /** The body's `error.code` (or a string `error`), when it had one. */
  errorCode: string | undefined;
}

interface AnswerBody {
  status?: string | null | undefined;
  /** The parsed body, unknown fields included. */
  raw?: unknown;
}

function norm(s: string): string {
  return s.trim().toLowerCase();
}

/** An `error` member that says something: an object, a non-empty string, `true`. */
function errorOf(raw: unknown): { present: boolean; code: string | undefined } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { present: false, code: undefined };
  const e = (raw as Record<string, unknown>)['error'];
  if (e === undefined || e === null || e === false || e === '') return { present: false, code: undefined };
  if (typeof e === 'string') return { present: true, code: e.slice(0, 64) };
  if (typeof e === 'object' && !Array.isArray(e)) {
    const code = (e as Record<string, unknown>)['code'];
    return { present: true, code: typeof code === 'string' ? code.slice(0, 64) : undefined };
  }
  return { present: true, code: undefined };
}

/**
 * Classifies a 2xx answer with the endpoint's status sets:
 * - an `error` member together with an applied status: unknown (the body contradicts itself);
 * - an `error` member, or a refused status: refused;
 * - an applied status: applied, except under HTTP 202 Accepted, which by definition is queued
 *   and not yet done: unknown;
 * - no status, an empty body, `pending` or any other word: unknown.
 */
export function classifyAnswer(
  httpStatus: number,
  body: AnswerBody | undefined,
  endpoint: Pick<SignedEndpoint, 'applied' | 'refused'>,
): AnswerVerdict {
  const status = body?.status ?? undefined;
  const err = errorOf(body?.raw);
  const word = status === undefined ? undefined : norm(status);
  const applied = word !== undefined && endpoint.applied.some((s) => norm(s) === word);
  const refused = word !== undefined && endpoint.refused.some((s) => norm(s) === word);
  const base = { status, errorCode: err.code };
  const said = status === undefined ? 'no status' : `status ${JSON.stringify(status.slice(0, 40))}`;
  const errText = err.code === undefined ? 'an error' : `error ${JSON.stringify(err.code)}`;

  if (err.present && applied) return { ...base, outcome: 'unknown', detail: `${said} with ${errText}: the answer contradicts itself` };
  if (err.present) return { ...base, outcome: 'refused', detail: `HTTP ${httpStatus} with ${errText}` };
  if (refused) return { ...base, outcome: 'refused', detail: `HTTP ${httpStatus} ${said}` };
  if (applied && httpStatus === 202) return { ...base, outcome: 'unknown', detail: `HTTP 202 (accepted, not yet done) ${said}` };
  if (applied) return { ...base, outcome: 'applied', detail: `HTTP ${httpStatus} ${said}` };
  return { ...base, outcome: 'unknown', detail: `HTTP ${httpStatus} ${said}: neither applied nor refused` };
}

/** What a 4xx refusal's words are about, read from the server's code and message. */
// Not "token": `insufficient_tokens` is a refusal of a burn, not of the request.
const ABOUT_THE_REQUEST = /signature|timestamp|\bts\b|header|\bauth(?:entication|orization|orisation)?\b|unauthori[sz]ed|forbidden|api[ _-]?key|bearer|credential/i;

/**
 * Whether a refusal says the *request* is wrong (SPEC §2) rather than the action: 401/403 always
 * (the API key: every wallet), 400/422 when its words name the signature, timestamp, headers or
 * auth (this wallet's setup). Undefined for a refusal of the action itself (nothing to claim,
 * insufficient balance, vault paused), which counts as `rejected`.
 */
export function requestRefusalScope(status: number | undefined, words: string): 'all' | 'wallet' | undefined {
  if (status === 401 || status === 403) return 'all';
  if ((status === 400 || status === 422) && ABOUT_THE_REQUEST.test(words)) return 'wallet';
  return undefined;
}
