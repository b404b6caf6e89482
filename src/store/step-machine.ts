// The step state machine (SPEC §2), written once for both adapters. Each transition is one guarded
// UPDATE … WHERE state = <expected> (and, for a write about one signed request, AND attempts = the
// attempt it judged), which also keeps the attempts audit trail and the plan's status in step; when
// no row matches, nothing changed and a StateError says why, so a double transition cannot happen.
//
//   planned ──markSending──▶ sending ──markAcknowledged──▶ acknowledged
//                  (unsigned, then recordSigned: the signer's answer, before the first byte; SPEC §7)
//      ▲                        ├──markRejected / markFailed──▶ rejected / failed  (rest of the plan skipped)
//      └──────markNotSent───────┤
//      │                        └──markUnknown──▶ unknown ──reconcile(claim only)──▶ acknowledged | planned
//      │                                                  ├──holdForOperator(claim only): stays unknown
//      │                                                  └──resolve(operator)──────▶ acknowledged | rejected
//      └──markRefused (refused before sending, e.g. above safety.max_sol_per_action) ──▶ rejected
//
// The dialect seam (as pg-boss's dialect.ts): a transition is a generator that yields its queries
// and is handed back each answer, so one description runs on SQLite synchronously (runSync, inside
// the adapter's BEGIN IMMEDIATE) and on PostgreSQL asynchronously (runAsync, inside a transaction
// that has locked the plan's row and checked the writer's lease, store.ts). The SQL is written once,
// in the dialect both understand ($n placeholders, CAST rather than ::, integers for booleans); the
// SQLite adapter turns $n into ? (sqlite/steps.ts). What each adapter adds is the transaction
// around the transition: its lock, its fence, and (PostgreSQL) the read-back of a lost COMMIT answer.
import type { Lamports } from '../amount.js';
import type { PlanStatus, StepState } from '../domain.js';
import { StateError } from '../errors.js';
import { encodeRequest, lamportsText, planFromRaw, stepFromRaw } from './codecs.js';
import { cancelNote, cancelRefusal, deriveStatus, UNSIGNED_ERROR } from './plan-status.js';
import { stepRef, type ClaimedRecord, type ResponseRecord, type StepRef } from './port.js';
import { isUnsigned, type PlanWithSteps, type RawPlan, type RawStep, type StepRow, type StoredRequest } from './rows.js';

/** One query of a transition: `get` answers the first row (or undefined), `all` every row, `run` the rows changed. */
export interface Query {
  readonly sql: string;
  readonly args: readonly unknown[];
  readonly mode: 'get' | 'all' | 'run';
}

/** A transition: yields its queries, is handed each answer, returns its result. */
export type Op<T> = Generator<Query, T, unknown>;

function* get<R>(sql: string, ...args: unknown[]): Op<R | undefined> {
  return (yield { sql, args, mode: 'get' }) as R | undefined;
}
function* all<R>(sql: string, ...args: unknown[]): Op<R[]> {
  return (yield { sql, args, mode: 'all' }) as R[];
}
function* run(sql: string, ...args: unknown[]): Op<number> {
  return (yield { sql, args, mode: 'run' }) as number;
}

/** Runs a transition on a synchronous connection (SQLite): each query answered at once. */
export function runSync<T>(op: Op<T>, exec: (q: Query) => unknown): T {
  let next = op.next();
  while (next.done !== true) next = op.next(exec(next.value));
  return next.value;
}

/** Runs a transition on an asynchronous connection (PostgreSQL): each query awaited in turn. */
export async function runAsync<T>(op: Op<T>, exec: (q: Query) => Promise<unknown>): Promise<T> {
  let next = op.next();
  while (next.done !== true) next = op.next(await exec(next.value));
  return next.value;
}

type Outcome = 'acknowledged' | 'rejected' | 'failed' | 'unknown' | 'not_sent';
type Scrub = (text: string) => string;

/** Only a step of an open, real plan, with its amount known and every earlier step settled, may go out: a deposit never overtakes the claim that funds it. */
const TO_SENDING = `
  UPDATE steps SET state = 'sending', attempts = attempts + 1, request = $2,
                   response_status = NULL, response_raw = NULL, error = NULL, updated_at = $3
  WHERE id = $1 AND state = 'planned' AND (kind = 'claim' OR amount_lamports IS NOT NULL)
    AND plan_id IN (SELECT id FROM plans WHERE status = 'open' AND dry = 0)
    AND NOT EXISTS (SELECT 1 FROM steps e WHERE e.plan_id = steps.plan_id AND e.idx < steps.idx
                                            AND e.state NOT IN ('acknowledged', 'skipped'))
  RETURNING attempts`;

/** $n IS NULL needs a type on PostgreSQL; CAST gives one in both dialects. */
const ATTEMPT_GUARD = (n: number): string => `(CAST($${n} AS INTEGER) IS NULL OR attempts = $${n})`;

export class StepMachine {
  constructor(private readonly scrub: Scrub) {}

  /** planned → sending, committed before the first byte goes out. */
  *markSending(stepId: number, request: StoredRequest, now: number): Op<StepRow> {
    const requestJson = this.scrub(encodeRequest(request, stepId));
    const r = yield* get<{ attempts: number }>(TO_SENDING, stepId, requestJson, now);
    if (r === undefined) throw yield* this.whyNot(stepId, 'planned', 'send');
    yield* run('INSERT INTO attempts (step_id, n, request, started_at) VALUES ($1, $2, $3, $4)', stepId, r.attempts, requestJson, now);
    const seen = request.before?.pendingLamports;
    yield* this.planSending(stepId, seen === undefined ? undefined : BigInt(seen), now);
    return yield* this.afterChange(stepId, now);
  }

  /**
   * What a request going out changes of its plan. Its updated_at: the history's window reads a
   * plan recorded before it but sent in it only among plans updated since (codecs.ts movedSince),
   * so a turn does not look up the attempts of every plan the address ever had. And a claim's
   * estimate: a claim takes what is pending when it is applied, so signed against more than its
   * plan was decided on (accrual, a plan resumed hours later, a server that moves pending), the
   * plan expects that much, and counts for it against the daily caps; were the answer lost and
   * the claim held in doubt, the smaller estimate would let other plans spend what this one may
   * have taken. Never lowered.
   */
  private *planSending(stepId: number, seen: Lamports | undefined, now: number): Op<void> {
    const p = yield* get<{ id: number; estimate_lamports: string }>(
      'SELECT p.id, p.estimate_lamports FROM plans p JOIN steps s ON s.plan_id = p.id WHERE s.id = $1',
      stepId,
    );
    if (p === undefined) return;
    const estimate = seen !== undefined && seen > BigInt(p.estimate_lamports) ? seen : BigInt(p.estimate_lamports);
    yield* run('UPDATE plans SET estimate_lamports = $1, updated_at = $2 WHERE id = $3', lamportsText(estimate, 'estimate'), now, p.id);
  }

  /**
   * sending (unsigned) → sending (signed): the signer's answer recorded before the first byte goes
   * out. Guarded on the attempt and on the request still being unsigned, so a step that recovery
   * returned to planned (or that another daemon re-sent) is never given a signature.
   */
  *recordSigned(ref: StepRef, request: StoredRequest, now: number): Op<StepRow> {
    const { id: stepId, attempt } = stepRef(ref);
    const requestJson = this.scrub(encodeRequest(request, stepId));
    const cur = yield* get<RawStep>(`SELECT * FROM steps WHERE id = $1 AND state = 'sending' AND ${ATTEMPT_GUARD(2)}`, stepId, attempt ?? null);
    if (cur === undefined || !isUnsigned(stepFromRaw(cur).request)) throw yield* this.whyNot(stepId, 'sending', 'record the signature of', false, attempt);
    yield* run('UPDATE steps SET request = $2, updated_at = $3 WHERE id = $1', stepId, requestJson, now);
    yield* run('UPDATE attempts SET request = $1 WHERE step_id = $2 AND n = $3', requestJson, stepId, cur.attempts);
    return yield* this.afterChange(stepId, now);
  }

  *markAcknowledged(ref: StepRef, res: ResponseRecord & ClaimedRecord, now: number): Op<StepRow> {
    const r = yield* this.leaveSending(ref, 'acknowledged', res, null, now);
    if (r.kind === 'claim' && res.claimedLamports !== undefined) yield* this.setClaimed(r.plan_id, res.claimedLamports, res.claimedProved === true, now);
    return yield* this.afterChange(r.id, now);
  }

  /**
   * What an acknowledged claim is proved to have brought, recorded after its acknowledgement: a
   * claim answered without claimed_sol is recorded at once, and its amount only once a summary read
   * after the answer proves one (executor/outcome.ts claimedOf). Only while the plan has none yet.
   */
  *recordClaimed(stepId: number, lamports: Lamports, now: number): Op<StepRow> {
    const text = lamportsText(lamports, 'claimed');
    const n = yield* run(
      `UPDATE plans SET claimed_lamports = $1, claimed_proved = 1, updated_at = $2
       WHERE claimed_lamports IS NULL AND id = (SELECT plan_id FROM steps WHERE id = $3 AND kind = 'claim' AND state = 'acknowledged')`,
      text,
      now,
      stepId,
    );
    if (n === 0) {
      const r = yield* get<RawStep>('SELECT * FROM steps WHERE id = $1', stepId);
      if (r === undefined) throw new StateError('STATE_NOT_FOUND', `no step ${stepId}`);
      throw new StateError('STATE_TRANSITION', `cannot record what claim step ${stepId} brought: it is a ${r.kind} ${r.state}, or its plan's claimed amount is already recorded`);
    }
    return yield* this.afterChange(stepId, now);
  }

  *markRejected(ref: StepRef, res: ResponseRecord & { error: string }, now: number): Op<StepRow> {
    const r = yield* this.leaveSending(ref, 'rejected', res, res.error, now);
    yield* this.skipPlanned(r.plan_id, `step ${r.idx} was rejected`, now);
    return yield* this.afterChange(r.id, now);
  }

  /** sending → failed: the server refused the request itself (signature, auth, ...); the rest of the plan is skipped. */
  *markFailed(ref: StepRef, res: ResponseRecord & { error: string }, now: number): Op<StepRow> {
    const r = yield* this.leaveSending(ref, 'failed', res, res.error, now);
    yield* this.skipPlanned(r.plan_id, `step ${r.idx} failed: the request was refused as invalid`, now);
    return yield* this.afterChange(r.id, now);
  }

  *markUnknown(ref: StepRef, res: ResponseRecord & { error: string }, now: number): Op<StepRow> {
    const r = yield* this.leaveSending(ref, 'unknown', res, res.error, now);
    return yield* this.afterChange(r.id, now);
  }

  /** sending → planned: the request provably never reached the server, so it may be tried again. */
  *markNotSent(ref: StepRef, error: string, now: number): Op<StepRow> {
    const r = yield* this.leaveSending(ref, 'planned', {}, error, now, 'not_sent');
    return yield* this.afterChange(r.id, now);
  }

  /** sending → unknown: whatever was in flight (a crash, a lost lease) may or may not have reached the server. */
  *recover(stepId: number, error: string, now: number): Op<StepRow> {
    yield* this.leaveSending(stepId, 'unknown', {}, error, now);
    return yield* this.afterChange(stepId, now);
  }

  /**
   * Of these steps, those still `sending` are recovered; the others were settled meanwhile (by
   * whoever) and are left alone. One whose signer never answered (still unsigned) was provably
   * never sent: it goes back to planned, to be signed and sent afresh.
   */
  *recoverSending(ids: Iterable<number>, error: string, now: number): Op<StepRow[]> {
    const out: StepRow[] = [];
    for (const id of ids) {
      const s = yield* get<RawStep>('SELECT * FROM steps WHERE id = $1', id);
      if (s?.state !== 'sending') continue;
      if (isUnsigned(stepFromRaw(s).request)) {
        yield* this.leaveSending(id, 'planned', {}, UNSIGNED_ERROR, now, 'not_sent');
        out.push(yield* this.afterChange(id, now));
      } else {
        out.push(yield* this.recover(id, error, now));
      }
    }
    return out;
  }

  /** planned → rejected without sending (a safety limit refused it); the rest of the plan is skipped. */
  *markRefused(stepId: number, error: string, now: number): Op<StepRow> {
    const r = yield* get<RawStep>("UPDATE steps SET state = 'rejected', error = $2, updated_at = $3 WHERE id = $1 AND state = 'planned' RETURNING *", stepId, this.scrub(error), now);
    if (r === undefined) throw yield* this.whyNot(stepId, 'planned', 'refuse');
    yield* this.skipPlanned(r.plan_id, `step ${r.idx} was refused`, now);
    return yield* this.afterChange(stepId, now);
  }

  /**
   * An unknown claim, settled by reading the wallet again: applied → acknowledged; not applied →
   * planned, to be tried again as a new signed request. Deposits and mints are never reconciled
   * automatically (SPEC §2), so they are refused here.
   */
  *reconcile(ref: StepRef, applied: boolean, opts: { claimedLamports?: Lamports; note: string }, now: number): Op<StepRow> {
    const { id: stepId, attempt } = stepRef(ref);
    const r = yield* this.settleUnknown(stepId, applied ? 'acknowledged' : 'planned', opts.note, true, now, attempt);
    if (r === undefined) throw yield* this.whyNot(stepId, 'unknown', 'reconcile', true, attempt);
    // Reconciled as applied: the claimed amount is lifetime's rise (executor/reconcile.ts), a proof.
    if (applied && opts.claimedLamports !== undefined) yield* this.setClaimed(r.plan_id, opts.claimedLamports, true, now);
    return yield* this.afterChange(stepId, now);
  }

  /** An unknown claim held for an operator: only its resolution changes (see the store port). */
  *holdForOperator(ref: StepRef, note: string, now: number): Op<StepRow> {
    const { id: stepId, attempt } = stepRef(ref);
    const r = yield* get<RawStep>(
      `UPDATE steps SET resolution = $2, updated_at = $3 WHERE id = $1 AND state = 'unknown' AND kind = 'claim' AND ${ATTEMPT_GUARD(4)} RETURNING *`,
      stepId,
      this.scrub(note),
      now,
      attempt,
    );
    if (r === undefined) throw yield* this.whyNot(stepId, 'unknown', 'hold', true, attempt);
    return stepFromRaw(r);
  }

  /**
   * The operator's verdict on an unknown step: applied → acknowledged; not applied → rejected, rest
   * skipped. Guarded on the attempt the operator judged, when given: a daemon may have reconciled
   * it and sent another request between the operator's look and this write.
   */
  *resolve(ref: StepRef, applied: boolean, note: string, now: number): Op<StepRow> {
    const { id: stepId, attempt } = stepRef(ref);
    const r = yield* this.settleUnknown(stepId, applied ? 'acknowledged' : 'rejected', note, false, now, attempt);
    if (r === undefined) throw yield* this.whyNot(stepId, 'unknown', 'resolve', false, attempt);
    if (!applied) yield* this.skipPlanned(r.plan_id, `step ${r.idx} was resolved as not applied`, now);
    return yield* this.afterChange(stepId, now);
  }

  *setAmount(stepId: number, lamports: Lamports, now: number): Op<StepRow> {
    const text = lamportsText(lamports, 'step amount');
    const r = yield* get<RawStep>("UPDATE steps SET amount_lamports = $1, updated_at = $2 WHERE id = $3 AND state = 'planned' RETURNING *", text, now, stepId);
    if (r === undefined) throw yield* this.whyNot(stepId, 'planned', 'set the amount of');
    return stepFromRaw(r);
  }

  *skipRemaining(planId: number, reason: string, now: number): Op<number> {
    const n = yield* this.skipPlanned(planId, this.scrub(reason), now);
    yield* this.finishPlan(planId, now);
    return n;
  }

  /** `send --cancel` (port.ts): under the lock markSending also takes (SQLite's write lock, PostgreSQL's plan row), so one of the two wins. */
  *cancelPlan(planId: number, by: string, now: number): Op<PlanWithSteps> {
    const plan = yield* this.getPlan(planId);
    if (plan === undefined) throw new StateError('STATE_NOT_FOUND', `no plan ${planId}`);
    const refusal = cancelRefusal(plan);
    if (refusal !== undefined) throw new StateError('STATE_TRANSITION', refusal);
    const who = this.scrub(by);
    const marked = yield* run('UPDATE plans SET cancelled_at = $1, cancelled_by = $2, updated_at = $1 WHERE id = $3 AND cancelled_at IS NULL', now, who, planId);
    if (marked !== 1) throw new StateError('STATE_TRANSITION', `plan ${planId} changed concurrently`);
    yield* this.skipPlanned(planId, cancelNote(who, now), now);
    yield* this.finishPlan(planId, now);
    const after = yield* this.getPlan(planId);
    if (after === undefined) throw new StateError('STATE_NOT_FOUND', `no plan ${planId}`);
    return after;
  }

  /** Persists the status the steps imply (a dry plan stays dry). */
  *finishPlan(planId: number, now: number): Op<PlanStatus> {
    const plan = yield* get<{ dry: number }>('SELECT dry FROM plans WHERE id = $1', planId);
    if (plan === undefined) throw new StateError('STATE_NOT_FOUND', `no plan ${planId}`);
    if (plan.dry === 1) return 'dry';
    const states = yield* all<{ state: StepState }>('SELECT state FROM steps WHERE plan_id = $1', planId);
    const status = deriveStatus(states.map((s) => s.state));
    yield* run('UPDATE plans SET status = $1, updated_at = $2 WHERE id = $3 AND status <> $1', status, now, planId);
    return status;
  }

  *getPlan(planId: number): Op<PlanWithSteps | undefined> {
    const plan = yield* get<RawPlan>('SELECT * FROM plans WHERE id = $1', planId);
    if (plan === undefined) return undefined;
    const steps = yield* all<RawStep>('SELECT * FROM steps WHERE plan_id = $1 ORDER BY idx', planId);
    return { ...planFromRaw(plan), steps: steps.map(stepFromRaw) };
  }

  private *skipPlanned(planId: number, reason: string, now: number): Op<number> {
    return yield* run("UPDATE steps SET state = 'skipped', resolution = $1, updated_at = $2 WHERE plan_id = $3 AND state = 'planned'", reason, now, planId);
  }

  private *setClaimed(planId: number, lamports: Lamports, proved: boolean, now: number): Op<void> {
    yield* run('UPDATE plans SET claimed_lamports = $1, claimed_proved = $2, updated_at = $3 WHERE id = $4', lamportsText(lamports, 'claimed'), proved ? 1 : 0, now, planId);
  }

  private *settleUnknown(stepId: number, to: StepState, note: string, claimOnly: boolean, now: number, attempt: number | null): Op<RawStep | undefined> {
    return yield* get<RawStep>(
      `UPDATE steps SET state = $2, resolution = $3, updated_at = $4
       WHERE id = $1 AND state = 'unknown' AND (CAST($5 AS INTEGER) = 0 OR kind = 'claim') AND ${ATTEMPT_GUARD(6)}
       RETURNING *`,
      stepId,
      to,
      this.scrub(note),
      now,
      claimOnly ? 1 : 0,
      attempt,
    );
  }

  private *leaveSending(ref: StepRef, to: StepState, res: ResponseRecord, error: string | null, now: number, outcome: Outcome = to as Outcome): Op<RawStep> {
    const { id: stepId, attempt } = stepRef(ref);
    const scrubbed = error === null ? null : this.scrub(error);
    const requestId = res.requestId === undefined ? null : this.scrub(res.requestId);
    const raw = res.responseRaw === undefined ? null : this.scrub(res.responseRaw);
    const r = yield* get<RawStep>(
      `UPDATE steps SET state = $2, response_status = $3, response_raw = $4, request_id = $5, error = $6, updated_at = $7
       WHERE id = $1 AND state = 'sending' AND ${ATTEMPT_GUARD(8)}
       RETURNING *`,
      stepId,
      to,
      res.status ?? null,
      raw,
      requestId,
      scrubbed,
      now,
      attempt,
    );
    if (r === undefined) throw yield* this.whyNot(stepId, 'sending', `mark ${to}`, false, attempt);
    yield* run(
      'UPDATE attempts SET finished_at = $2, outcome = $3, status = $4, request_id = $5, error = $6 WHERE step_id = $1 AND finished_at IS NULL',
      stepId,
      now,
      outcome,
      res.status ?? null,
      requestId,
      scrubbed,
    );
    return r;
  }

  /** The step as it is now, its plan's status brought in line. */
  private *afterChange(stepId: number, now: number): Op<StepRow> {
    const r = yield* get<RawStep>('SELECT * FROM steps WHERE id = $1', stepId);
    if (r === undefined) throw new StateError('STATE_NOT_FOUND', `no step ${stepId}`);
    yield* this.finishPlan(r.plan_id, now);
    return stepFromRaw(r);
  }

  /** Why a guarded UPDATE matched no row, as the error to throw. */
  private *whyNot(stepId: number, expected: StepState, verb: string, claimOnly = false, attempt: number | null = null): Op<StateError> {
    const step = yield* get<RawStep>('SELECT * FROM steps WHERE id = $1', stepId);
    if (step === undefined) return new StateError('STATE_NOT_FOUND', `no step ${stepId}`);
    const cannot = `cannot ${verb} step ${stepId} (${step.kind})`;
    if (step.state !== expected) return new StateError('STATE_TRANSITION', `${cannot}: it is ${step.state}, not ${expected}`);
    if (attempt !== null && Number(step.attempts) !== attempt) {
      return new StateError('STATE_TRANSITION', `${cannot}: it is on attempt ${step.attempts} now, not ${attempt}: another request of it was signed since`);
    }
    if (claimOnly && step.kind !== 'claim') {
      return new StateError('STATE_TRANSITION', `${cannot}: only a claim is reconciled automatically; an operator resolves a ${step.kind}`);
    }
    const plan = yield* get<RawPlan>('SELECT * FROM plans WHERE id = $1', step.plan_id);
    if (plan !== undefined && (plan.dry === 1 || plan.status !== 'open')) return new StateError('STATE_TRANSITION', `${cannot}: plan ${plan.id} is ${plan.status}`);
    const earlier = yield* get<{ idx: number; state: StepState }>(
      "SELECT idx, state FROM steps WHERE plan_id = $1 AND idx < $2 AND state NOT IN ('acknowledged', 'skipped') ORDER BY idx LIMIT 1",
      step.plan_id,
      step.idx,
    );
    if (earlier !== undefined) return new StateError('STATE_TRANSITION', `${cannot}: step ${earlier.idx} of its plan is still ${earlier.state}`);
    if (step.kind !== 'claim' && step.amount_lamports === null) return new StateError('STATE_TRANSITION', `${cannot}: its amount is not known yet`);
    return new StateError('STATE_TRANSITION', `${cannot}: it changed concurrently`);
  }
}
