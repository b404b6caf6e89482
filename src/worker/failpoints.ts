// Failpoints let the crash tests kill a real daemon at each labelled step of the worker. They are
// inert unless AUTOCLAIM_FAILPOINT names one; then the process SIGKILLs itself there, exactly as
// a power cut would leave it (no finally blocks, no flushed buffers beyond what SQLite synced).

export const FAILPOINTS = [
  'after_plan_recorded',
  'after_sending_committed',
  'after_request_written',
  'after_answer_before_record',
  'during_reconciliation',
] as const;
export type FailpointName = (typeof FAILPOINTS)[number];
export type Failpoint = (name: FailpointName) => void;

export const noFailpoints: Failpoint = () => {};

/**
 * AUTOCLAIM_FAILPOINT=name[:n] kills the process the n-th time (default 1st) the named point is
 * reached. Unknown names are refused so a typo cannot silently disable a crash test.
 */
export function failpointsFromEnv(env: NodeJS.ProcessEnv, kill: () => void = () => process.kill(process.pid, 'SIGKILL')): Failpoint {
  const spec = env.AUTOCLAIM_FAILPOINT;
  if (spec === undefined || spec === '') return noFailpoints;
  const [name, countText] = spec.split(':');
  if (!FAILPOINTS.includes(name as FailpointName)) {
    throw new Error(`AUTOCLAIM_FAILPOINT names an unknown failpoint "${name}"; known: ${FAILPOINTS.join(', ')}`);
  }
  let remaining = countText === undefined ? 1 : Number(countText);
  return (point) => {
    if (point !== name) return;
    remaining--;
    if (remaining <= 0) kill();
  };
}
