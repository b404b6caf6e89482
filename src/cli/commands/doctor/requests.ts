// The signed requests autoclaim would send, built by the same code that sends them (prepare), for
// a sample action, and shown instead of sent. The API key never reaches this module: the bearer
// is shown as `Bearer [REDACTED]`, so no part of the key can be printed from here.
import { formatSol } from '../../../amount.js';
import { templateVariables } from '../../../api/endpoints.js';
import type { PreparedRequest, SignedInput } from '../../../api/signed-request.js';
import type { Signer } from '../../../keys/signer.js';
import type { ApiConfig, Lamports, SignedOp } from '../../../domain.js';
import type { Finding, RequestPreview } from './report.js';

const SAMPLE_SYMBOL = 'SOL2X';
/** One lamport: the smallest amount there is, in case a preview is ever sent by mistake. */
const SAMPLE_AMOUNT: Lamports = 1n;
const REDACTED_BEARER = 'Bearer [REDACTED]';
/** Said under the claim: doctor can show the claim it would send, but only the service can say it is right. */
const CLAIM_TEMPLATE_NOTE =
  'the service does not publish the claim message: confirm this template with the service before the first claim ' +
  '(doctor cannot tell without sending one; a wrong message is refused with 401 and pauses signing)';
/** The signed message the real service documents for its actions (SPEC §6). */
const DOCUMENTED_ACTION_MESSAGE = '{wallet}|{symbol}|{amount}|{ts}';

export interface PreviewInput {
  api: Pick<ApiConfig, 'endpoints'>;
  prepare: (input: SignedInput, signer: Signer, nowMs: number) => PreparedRequest;
  wallet: { name: string; address: string };
  signer: Signer;
  /** Whether an API key will be sent; its value is never passed in. */
  apiKeyPresent: boolean;
  /** The wallet's epoch as its summary said, when it was read. */
  epoch: string | undefined;
  /** The signed timestamp, ms: doctor's SAMPLE_TS_MS, which the service refuses as stale. */
  nowMs: number;
  /** Today, ms: the epoch a missing summary stands in for; nowMs when not given. */
  todayMs?: number;
}

export function previewRequests(input: PreviewInput): { requests: RequestPreview[]; findings: Finding[] } {
  const requests: RequestPreview[] = [];
  const findings: Finding[] = [];
  // Today's UTC date stands in for an epoch the summary did not give (said so in a note).
  const epoch = input.epoch ?? new Date(input.todayMs ?? input.nowMs).toISOString().slice(0, 10);
  for (const op of Object.keys(input.api.endpoints) as SignedOp[]) {
    const template = input.api.endpoints[op].message;
    const signed: SignedInput =
      op === 'claim'
        ? { op, wallet: input.wallet.address, epoch }
        : { op, wallet: input.wallet.address, symbol: SAMPLE_SYMBOL, amount: SAMPLE_AMOUNT, epoch };
    let prepared: PreparedRequest;
    try {
      prepared = input.prepare(signed, input.signer, input.nowMs);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      findings.push({ area: 'signing', level: 'problem', text: `${op}: cannot build the signed request (${why}); fix api.endpoints.${op}` });
      continue;
    }
    const notes: string[] = [];
    if (op === 'claim') notes.push(CLAIM_TEMPLATE_NOTE);
    else if (template !== DOCUMENTED_ACTION_MESSAGE) {
      notes.push(`this template differs from the message the service documents for actions (${DOCUMENTED_ACTION_MESSAGE})`);
    }
    if (input.epoch === undefined && templateVariables(template).includes('epoch')) {
      notes.push(`{epoch} is today's UTC date here (no summary was read); a plan signs its own epoch`);
    }
    requests.push({
      op,
      method: prepared.method,
      url: prepared.url,
      headers: {
        authorization: input.apiKeyPresent ? REDACTED_BEARER : '(none: no API key, the request would be refused)',
        ...prepared.headers,
      },
      template,
      message: prepared.message,
      body: prepared.body,
      notes,
    });
  }
  return { requests, findings };
}

export function sampleOf(wallet: { name: string; address: string }, nowMs: number): {
  wallet: string;
  address: string;
  symbol: string;
  amount: string;
  ts: number;
} {
  return { wallet: wallet.name, address: wallet.address, symbol: SAMPLE_SYMBOL, amount: formatSol(SAMPLE_AMOUNT), ts: Math.floor(nowMs / 1000) };
}
