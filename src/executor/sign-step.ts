// The stretch of a step between its plan's checks and its request (SPEC §7 and §2): record it
// `sending` without a signature, ask the wallet's signer under a deadline, check its answer, record
// the signed request, and only then send. A step that stops anywhere before the last record was
// provably never sent: recovery returns a `sending` step without a signature to planned.
import type { Logger } from '../log/logger.js';
import { UNSIGNED_BODY } from '../store/rows.js';
import type { StepResult, WorkerDeps } from './deps.js';
import { errorSummary, stepEventOf } from './outcome.js';
import type { PlanWithSteps, PreparedRequest, StepRow, StoredRequest, UnsignedRequest, WalletSigner } from './ports.js';
import { askSigner, DEFAULT_SIGN_DEADLINE_MS, type SignVerdict } from './signing-guard.js';

interface SignStep {
  plan: PlanWithSteps;
  step: StepRow;
  signer: WalletSigner;
  unsigned: UnsignedRequest;
  /** What is recorded with `sending`; its body is filled in once signed. */
  request: StoredRequest;
  log: Logger;
}

/**
 * The step is in `inFlight` from before the first record commits until its outcome is recorded
 * (or it is left `sending` for a new owner), so no per-turn recovery of this process can take a
 * slow signer or a slow answer for a lost one.
 */
export async function signAndSend(
  deps: WorkerDeps,
  inFlight: Set<number>,
  s: SignStep,
  send: (prepared: PreparedRequest) => Promise<StepResult>,
): Promise<StepResult> {
  const { store, clock } = deps;
  const { plan, step, signer, unsigned, request, log } = s;
  inFlight.add(step.id);
  try {
    try {
      await store.markSending(step.id, { ...request, body: UNSIGNED_BODY }, clock.now());
    } catch (err) {
      // Fail closed: what is not recorded is not signed, let alone sent.
      log.error({ event: 'state.write_failed', err: errorSummary(err) }, `could not record the ${step.kind} before sending it; nothing was sent (nor signed)`);
      return 'retry_later';
    }
    deps.failpoint('before_signature');
    // This request's attempt, as markSending counted it: every later write about it is guarded by it.
    const ref = { id: step.id, attempt: step.attempts + 1 };
    const verdict = await askSigner(signer, unsigned.action, unsigned.message, deps.signDeadlineMs ?? DEFAULT_SIGN_DEADLINE_MS, clock);
    deps.events?.emit('signer:answered', {
      backend: signer.backend,
      wallet: plan.wallet,
      outcome: verdict.ok ? 'signed' : verdict.unanswered ? 'unanswered' : 'refused',
      ...(verdict.ok ? {} : { code: verdict.code, detail: verdict.detail.slice(0, 300) }),
      seconds: verdict.seconds,
    });
    if (!verdict.ok) return await notSigned(deps, s, ref, verdict);
    const prepared = deps.api.seal(unsigned, verdict.signature);
    try {
      await store.recordSigned(ref, { ...request, body: prepared.body }, clock.now());
    } catch (err) {
      // The signature is not recorded, so it is not sent; the step stays `sending` without one,
      // which recovery returns to planned.
      log.error({ event: 'state.write_failed', err: errorSummary(err) }, `could not record the signed ${step.kind}; it was not sent`);
      return 'retry_later';
    }
    deps.failpoint('after_sending_committed');
    return await send(prepared);
  } finally {
    inFlight.delete(step.id);
  }
}

/**
 * The signer gave no usable signature; nothing was sent. Unanswered (the deadline, a backend
 * unavailable): back to planned, signed afresh later. Refused (its policy, a malformed action, an
 * answer that fails the daemon's check): the step is refused before sending, so it moves nothing,
 * and the rest of the plan is skipped; the plan, ended rejected, still counts for the rule's plan
 * limits (max_plans_per_day, the cooldown) as any refused plan does (helper h29e).
 */
async function notSigned(deps: WorkerDeps, s: SignStep, ref: { id: number; attempt: number }, verdict: Extract<SignVerdict, { ok: false }>): Promise<StepResult> {
  const { store, clock } = deps;
  const { plan, step, signer, log } = s;
  const why = `the ${signer.backend} signer ${verdict.unanswered ? 'did not answer' : 'refused'} (${verdict.code}: ${verdict.detail})`;
  try {
    await store.markNotSent(ref, `not sent: ${why}`, clock.now());
  } catch (err) {
    log.warn({ event: 'state.write_failed', err: errorSummary(err) }, `${step.kind} not signed, and not put back to planned either; recovery does that (nothing was sent)`);
    return 'retry_later';
  }
  if (verdict.unanswered) {
    log.warn({ event: 'action.deferred', reason: 'signer', code: verdict.code, backend: signer.backend }, `${step.kind} not sent: ${why}; it will be signed afresh later`);
    deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'deferred' });
    return 'retry_later';
  }
  log.error({ event: 'action.refused', reason: 'signer', code: verdict.code, backend: signer.backend }, `${step.kind} refused before sending: ${why}`);
  await store.markRefused(step.id, `${step.kind} refused before sending: ${why}`, clock.now());
  deps.events?.emit('step:outcome', { ...stepEventOf(plan, step), state: 'rejected' });
  return 'rejected';
}

/** What is recorded of a request before it is signed; recordSigned adds its body. */
export function recordOf(p: UnsignedRequest): StoredRequest {
  return { method: p.method, url: p.url, ts: p.ts, message: p.message, body: UNSIGNED_BODY };
}

/** The ids the signer's journal keeps with the action (SPEC §7); not signed. */
export function ids(plan: PlanWithSteps, step: StepRow): { planId: string; stepId: string } {
  return { planId: String(plan.id), stepId: String(step.id) };
}
