// `doctor --probe`: the one way to tell a wrong header prefix from a wrong API key or signed
// message is to hear the service refuse something. For each signed operation it sends one
// request for the configured wallet signed with a fresh random key (never the wallet's: a
// signature that cannot verify, so the request cannot move money), and reads the refusal's words
// (executor/refusal.ts): headers missing or malformed → the prefix; the signature refused → the
// headers were read, so the prefix is right (and the real key's refusal, if any, is the message
// or the encoding); the key refused → the API key.
import { generateKeyPairSync, sign } from 'node:crypto';
import { ApiError } from '../../../errors.js';
import type { ApiConfig, Lamports, SignedOp } from '../../../domain.js';
import type { PreparedRequest, SignedInput } from '../../../api/signed-request.js';
import type { Signer } from '../../../keys/signer.js';
import { refusalHint } from '../../../executor/refusal.js';
import type { Finding } from './report.js';

export interface ProbeClient {
  prepare(input: SignedInput, signer: Signer, nowMs: number): PreparedRequest;
  send(prepared: PreparedRequest): Promise<{ status: number; requestId?: string | undefined }>;
}

export interface ProbeResult {
  op: SignedOp;
  /** HTTP status, or undefined when no answer came. */
  status: number | undefined;
  code: string | undefined;
  serverMessage: string | undefined;
  requestId: string | undefined;
  hint: ReturnType<typeof refusalHint> | 'accepted' | 'no_answer';
}

const PROBE_SYMBOL = 'SOL2X';
const PROBE_AMOUNT: Lamports = 1n;

/** A signer that claims the wallet's address and signs with a key nobody has: its signatures never verify. */
export function wrongKeySigner(address: string): Signer {
  const { privateKey } = generateKeyPairSync('ed25519');
  return { address, sign: (message) => new Uint8Array(sign(null, message, privateKey)) };
}

export async function probeSigning(
  deps: { api: Pick<ApiConfig, 'endpoints' | 'headerPrefix'>; client: ProbeClient; nowMs: number; epoch: string },
  wallet: { name: string; address: string },
): Promise<{ results: ProbeResult[]; findings: Finding[] }> {
  const results: ProbeResult[] = [];
  const signer = wrongKeySigner(wallet.address);
  for (const op of Object.keys(deps.api.endpoints) as SignedOp[]) {
    const input: SignedInput = op === 'claim' ? { op, wallet: wallet.address, epoch: deps.epoch } : { op, wallet: wallet.address, symbol: PROBE_SYMBOL, amount: PROBE_AMOUNT, epoch: deps.epoch };
    let prepared: PreparedRequest;
    try {
      prepared = deps.client.prepare(input, signer, deps.nowMs);
    } catch {
      continue; // the preview's own finding says why it cannot be built
    }
    try {
      const answer = await deps.client.send(prepared);
      results.push({ op, status: answer.status, code: undefined, serverMessage: undefined, requestId: answer.requestId, hint: 'accepted' });
    } catch (err) {
      if (err instanceof ApiError && err.status !== undefined) {
        results.push({ op, status: err.status, code: err.serverCode, serverMessage: err.serverMessage, requestId: err.requestId, hint: refusalHint(err.serverCode, err.serverMessage) });
      } else {
        results.push({ op, status: undefined, code: undefined, serverMessage: err instanceof Error ? err.message : String(err), requestId: undefined, hint: 'no_answer' });
      }
    }
  }
  return { results, findings: results.map((r) => finding(r, deps.api.headerPrefix)) };
}

function finding(r: ProbeResult, prefix: string): Finding {
  const said = [r.status === undefined ? undefined : `HTTP ${r.status}`, r.code, r.serverMessage].filter((t) => t !== undefined).join(' ');
  const id = r.requestId === undefined ? '' : ` (x-request-id ${r.requestId})`;
  const head = `probe ${r.op} (signed with a wrong key on purpose): the service said ${said === '' ? 'nothing' : `"${said}"`}${id}`;
  switch (r.hint) {
    case 'signature':
      return { area: 'signing', level: 'ok', text: `${head}: it read the ${prefix}-ts and ${prefix}-wallet headers and refused the signature, as it should: the prefix is right; if the real key is refused, check api.endpoints.${r.op}.message and api.signature_encoding` };
    case 'headers':
      return { area: 'signing', level: 'problem', text: `${head}: it says the headers are missing or malformed: api.header_prefix (${prefix}) is not the service's; set the prefix its documentation names (x-<prefix>-ts)` };
    case 'key':
      return { area: 'signing', level: 'problem', text: `${head}: it refused the API key before reading the signature: check $AUTOCLAIM_API_KEY, api.api_key_file or the api_key credential` };
    case 'permission':
      return { area: 'signing', level: 'problem', text: `${head}: the API key may not do ${r.op}: check its permissions with the service` };
    case 'clock':
      return { area: 'signing', level: 'problem', text: `${head}: it refused the timestamp as stale: check this machine's clock (timedatectl, chronyc tracking)` };
    case 'accepted':
      return { area: 'signing', level: 'problem', text: `${head}: it ACCEPTED a request signed with a wrong key; it does not check signatures: do not trust it with money` };
    case 'no_answer':
      return { area: 'signing', level: 'note', text: `${head}: no answer, so nothing to tell from` };
    default:
      return { area: 'signing', level: 'note', text: `${head}: its words do not say whether the headers or the signature were refused` };
  }
}
