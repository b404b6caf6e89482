// Failpoints let the crash tests kill a real daemon at each labelled step of the worker. They are
// inert unless AUTOCLAIM_FAILPOINT names one; then the process SIGKILLs itself there, exactly as
// a power cut would leave it (no finally blocks, no flushed buffers beyond what SQLite synced).
//
//   after_plan_recorded         the plan and its steps are committed; nothing signed yet
//   before_signature            a step is committed as `sending` without its signature; its signer
//                               has not answered (recovery returns it to planned: nothing was sent)
//   after_sending_committed     a step's signed request is committed (`sending`); no byte of it has gone out
//   after_request_written       undici has written the whole signed request to the socket; the
//                               answer has not been read (the server may or may not apply it)
//   after_answer_before_record  the answer (or a transport error) is in hand; not yet recorded
//   during_reconciliation       an unknown claim's fresh summary is read; the verdict is not recorded
//   after_claim_acknowledged    a claim answered without claimed_sol, a step sized from it after it,
//                               is recorded acknowledged; the summary that proves its amount is not read
//   during_claim_proof          that summary is read; the amount it proves is not recorded
//   after_claim_proved          the proved amount is recorded; no later step is `sending` yet
import diagnosticsChannel from 'node:diagnostics_channel';
import { AutoclaimError } from '../errors.js';

const FAILPOINTS = [
  'after_plan_recorded',
  'before_signature',
  'after_sending_committed',
  'after_request_written',
  'after_answer_before_record',
  'during_reconciliation',
  'after_claim_acknowledged',
  'during_claim_proof',
  'after_claim_proved',
] as const;
export type FailpointName = (typeof FAILPOINTS)[number];
export type Failpoint = (name: FailpointName) => void;

export const noFailpoints: Failpoint = () => {};

/** Registers `listener` to run each time a signed request has been written in full. */
export type RequestWrittenSource = (listener: () => void) => void;

// Signed actions go out as POST or PUT (SPEC §1, api.endpoints); reads are GETs.
const SIGNED_METHODS = new Set(['POST', 'PUT']);

/**
 * undici publishes `undici:request:bodySent` synchronously right after it has handed the request
 * line, headers and body to the socket (one corked write), before any byte of the answer can be
 * read. On loopback the bytes are then already in the server's receive queue, so a kill here
 * leaves a request the server will see and may apply, with its answer lost.
 */
const undiciSignedRequestWritten: RequestWrittenSource = (listener) => {
  diagnosticsChannel.subscribe('undici:request:bodySent', (message) => {
    const method = (message as { request?: { method?: unknown } } | undefined)?.request?.method;
    if (typeof method === 'string' && SIGNED_METHODS.has(method)) listener();
  });
};

/**
 * AUTOCLAIM_FAILPOINT=name[:n] kills the process the n-th time (default 1st) the named point is
 * reached. Unknown names and bad counts are refused so a typo cannot silently disable a crash
 * test. Only `after_request_written` subscribes to anything, and only when it is named.
 */
export function failpointsFromEnv(
  env: NodeJS.ProcessEnv,
  kill: () => void = () => process.kill(process.pid, 'SIGKILL'),
  requestWritten: RequestWrittenSource = undiciSignedRequestWritten,
): Failpoint {
  const spec = env.AUTOCLAIM_FAILPOINT;
  if (spec === undefined || spec === '') return noFailpoints;
  const [name, countText, ...rest] = spec.split(':');
  if (!FAILPOINTS.includes(name as FailpointName)) {
    throw new AutoclaimError('FAILPOINT_INVALID', `AUTOCLAIM_FAILPOINT names an unknown failpoint "${name}"; known: ${FAILPOINTS.join(', ')}`);
  }
  let remaining = countText === undefined ? 1 : Number(countText);
  if (rest.length > 0 || !Number.isInteger(remaining) || remaining < 1) {
    throw new AutoclaimError('FAILPOINT_INVALID', `AUTOCLAIM_FAILPOINT "${spec}": the count after ":" must be a positive integer`);
  }
  const reached: Failpoint = (point) => {
    if (point !== name) return;
    remaining--;
    if (remaining === 0) kill();
  };
  // The request write happens inside undici, not in our code: hear it from its diagnostics channel.
  if (name === 'after_request_written') requestWritten(() => reached('after_request_written'));
  return reached;
}
