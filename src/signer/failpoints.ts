// The signer's failpoint, as the executor's (executor/failpoints.ts): inert unless
// AUTOCLAIM_SIGNER_FAILPOINT names it; then the process SIGKILLs itself there, the n-th time.
//
//   after_journal_commit   a batch's records are committed (its signatures made); none is sent
import { AutoclaimError } from '../errors.js';

const POINTS = ['after_journal_commit'] as const;
export type SignerFailpointName = (typeof POINTS)[number];
export type SignerFailpoint = (name: SignerFailpointName) => void;

export const noSignerFailpoints: SignerFailpoint = () => {};

export function signerFailpointsFromEnv(env: NodeJS.ProcessEnv, kill: () => void = () => process.kill(process.pid, 'SIGKILL')): SignerFailpoint {
  const spec = env.AUTOCLAIM_SIGNER_FAILPOINT;
  if (spec === undefined || spec === '') return noSignerFailpoints;
  const [name, countText, ...rest] = spec.split(':');
  if (!POINTS.includes(name as SignerFailpointName)) {
    throw new AutoclaimError('FAILPOINT_INVALID', `AUTOCLAIM_SIGNER_FAILPOINT names an unknown failpoint "${name}"; known: ${POINTS.join(', ')}`);
  }
  let remaining = countText === undefined ? 1 : Number(countText);
  if (rest.length > 0 || !Number.isInteger(remaining) || remaining < 1) {
    throw new AutoclaimError('FAILPOINT_INVALID', `AUTOCLAIM_SIGNER_FAILPOINT "${spec}": the count after ":" must be a positive integer`);
  }
  return (point) => {
    if (point !== name) return;
    remaining--;
    if (remaining === 0) kill();
  };
}
