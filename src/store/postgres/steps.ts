// Step transitions in PostgreSQL (the state machine is drawn in sqlite/steps.ts). Each is one
// guarded UPDATE … WHERE state = <expected>, run by the store inside a transaction that has already
// locked the plan's row (plans.ts lockPlan*) and checked the lease (fence.ts); when no row matches,
// nothing changed and a StateError says why, the same errors as SQLite's. Under READ COMMITTED a
// concurrent transition of the same step waits for the first and then re-checks the guard against
// the committed row, so a double transition cannot happen here either.
import type { Lamports } from '../../amount.js';
import type { StepState } from '../../domain.js';
import { StateError } from '../../errors.js';
import { attemptFromRaw, encodeRequest, lamportsText, stepFromRaw } from '../codecs.js';
import { cancelNote, cancelRefusal, UNSIGNED_ERROR } from '../plan-status.js';
import { stepRef, type ResponseRecord, type StepRef } from '../port.js';
import type { AttemptRow, PlanWithSteps, RawAttempt, RawStep, StepRow, StoredRequest } from '../rows.js';
import type { Sql } from './db.js';
import { finishPlan, getPlan, planRow, setCancelled, setClaimed, skipPlanned } from './plans.js';

type Outcome = 'acknowledged' | 'rejected' | 'failed' | 'unknown' | 'not_sent';
export type Scrub = (text: string) => string;

export async function getStep(c: Sql, id: number): Promise<StepRow | undefined> {
  const r = await c.query<RawStep>('SELECT * FROM steps WHERE id = $1', [id]);
  const row = r.rows[0];
  return row === undefined ? undefined : stepFromRaw(row);
}

export async function stepsInState(c: Sql, state: StepState, address?: string): Promise<StepRow[]> {
  const r = await c.query<RawStep>(
    `SELECT s.* FROM steps s JOIN plans p ON p.id = s.plan_id
     WHERE s.state = $1 AND ($2::text IS NULL OR p.address = $2) ORDER BY s.id`,
    [state, address ?? null],
  );
  return r.rows.map(stepFromRaw);
}

export async function stepAttempts(c: Sql, stepId: number): Promise<AttemptRow[]> {
  const r = await c.query<RawAttempt>('SELECT * FROM attempts WHERE step_id = $1 ORDER BY n', [stepId]);
  return r.rows.map(attemptFromRaw);
}

/** The newest x-svc-ts this address ever signed, so a new request never repeats one. */
export async function lastRequestTs(c: Sql, address: string): Promise<number | undefined> {
  const r = await c.query<{ ts: string | null }>(
    `SELECT max((a.request::jsonb ->> 'ts')::numeric)::text AS ts
     FROM attempts a JOIN steps s ON s.id = a.step_id JOIN plans p ON p.id = s.plan_id
     WHERE p.address = $1`,
    [address],
  );
  const ts = r.rows[0]?.ts;
  return ts == null ? undefined : Number(ts);
}

/** The seconds this address signed at or after fromTs, ascending (see the store port). */
export async function requestTsFrom(c: Sql, address: string, fromTs: number, limit: number): Promise<number[]> {
  const r = await c.query<{ ts: string }>(
    `SELECT DISTINCT (a.request::jsonb ->> 'ts')::numeric AS ts
     FROM attempts a JOIN steps s ON s.id = a.step_id JOIN plans p ON p.id = s.plan_id
     WHERE p.address = $1 AND (a.request::jsonb ->> 'ts')::numeric >= $2
     ORDER BY ts LIMIT $3`,
    [address, fromTs, limit],
  );
  return r.rows.map((row) => Number(row.ts));
}

/** A claim of this address (other than `exceptStepId`) that may or may not have been applied. */
export async function claimInDoubt(c: Sql, address: string, exceptStepId = 0): Promise<boolean> {
  const r = await c.query<{ n: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM steps s JOIN plans p ON p.id = s.plan_id
       WHERE p.address = $1 AND p.dry = 0 AND s.kind = 'claim' AND s.state IN ('sending', 'unknown') AND s.id <> $2
     ) AS n`,
    [address, exceptStepId],
  );
  return r.rows[0]?.n === true;
}

export async function hasUnknownSigned(c: Sql, address: string): Promise<boolean> {
  const r = await c.query<{ n: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM steps s JOIN plans p ON p.id = s.plan_id
       WHERE p.address = $1 AND p.dry = 0 AND s.state = 'unknown' AND s.kind <> 'claim'
     ) AS n`,
    [address],
  );
  return r.rows[0]?.n === true;
}

/** The transitions, on a transaction's client whose plan row is locked. */
export class StepWrites {
  constructor(
    private readonly c: Sql,
    private readonly scrub: Scrub,
  ) {}

  /** planned → sending, committed before the first byte goes out. */
  async markSending(stepId: number, request: StoredRequest, now: number): Promise<StepRow> {
    const requestJson = this.scrub(encodeRequest(request, stepId));
    // Only a step of an open, real plan, with its amount known and every earlier step of its plan
    // settled, may go out: a deposit never overtakes the claim that funds it.
    const r = await this.c.query<{ attempts: number }>(
      `UPDATE steps SET state = 'sending', attempts = attempts + 1, request = $2,
                        response_status = NULL, response_raw = NULL, error = NULL, updated_at = $3
       WHERE id = $1 AND state = 'planned' AND (kind = 'claim' OR amount_lamports IS NOT NULL)
         AND plan_id IN (SELECT id FROM plans WHERE status = 'open' AND dry = 0)
         AND NOT EXISTS (SELECT 1 FROM steps e WHERE e.plan_id = steps.plan_id AND e.idx < steps.idx
                                                 AND e.state NOT IN ('acknowledged', 'skipped'))
       RETURNING attempts`,
      [stepId, requestJson, now],
    );
    const row = r.rows[0];
    if (row === undefined) throw await this.whyNot(stepId, 'planned', 'send');
    await this.c.query('INSERT INTO attempts (step_id, n, request, started_at) VALUES ($1, $2, $3, $4)', [stepId, row.attempts, requestJson, now]);
    return this.afterChange(stepId, now);
  }

  /** sending (unsigned) → sending (signed): see the store port. */
  async recordSigned(ref: StepRef, request: StoredRequest, now: number): Promise<StepRow> {
    const { id: stepId, attempt } = stepRef(ref);
    const requestJson = this.scrub(encodeRequest(request, stepId));
    const r = await this.c.query<{ attempts: number }>(
      `UPDATE steps SET request = $2, updated_at = $3
       WHERE id = $1 AND state = 'sending' AND ($4::integer IS NULL OR attempts = $4)
         AND (request::jsonb ->> 'body') = '' RETURNING attempts`,
      [stepId, requestJson, now, attempt],
    );
    const row = r.rows[0];
    if (row === undefined) throw await this.whyNot(stepId, 'sending', 'record the signature of', false, attempt);
    await this.c.query('UPDATE attempts SET request = $1 WHERE step_id = $2 AND n = $3', [requestJson, stepId, row.attempts]);
    return this.afterChange(stepId, now);
  }

  async markAcknowledged(ref: StepRef, res: ResponseRecord & { claimedLamports?: Lamports }, now: number): Promise<StepRow> {
    const stepId = stepRef(ref).id;
    const r = await this.leaveSending(ref, 'acknowledged', res, null, now);
    if (r.kind === 'claim' && res.claimedLamports !== undefined) await setClaimed(this.c, r.plan_id, res.claimedLamports, now);
    return this.afterChange(stepId, now);
  }

  async markRejected(ref: StepRef, res: ResponseRecord & { error: string }, now: number): Promise<StepRow> {
    const stepId = stepRef(ref).id;
    const r = await this.leaveSending(ref, 'rejected', res, res.error, now);
    await skipPlanned(this.c, r.plan_id, `step ${r.idx} was rejected`, now);
    return this.afterChange(stepId, now);
  }

  async markFailed(ref: StepRef, res: ResponseRecord & { error: string }, now: number): Promise<StepRow> {
    const stepId = stepRef(ref).id;
    const r = await this.leaveSending(ref, 'failed', res, res.error, now);
    await skipPlanned(this.c, r.plan_id, `step ${r.idx} failed: the request was refused as invalid`, now);
    return this.afterChange(stepId, now);
  }

  async markUnknown(ref: StepRef, res: ResponseRecord & { error: string }, now: number): Promise<StepRow> {
    const stepId = stepRef(ref).id;
    await this.leaveSending(ref, 'unknown', res, res.error, now);
    return this.afterChange(stepId, now);
  }

  async markNotSent(ref: StepRef, error: string, now: number): Promise<StepRow> {
    const stepId = stepRef(ref).id;
    await this.leaveSending(ref, 'planned', {}, error, now, 'not_sent');
    return this.afterChange(stepId, now);
  }

  async markRefused(stepId: number, error: string, now: number): Promise<StepRow> {
    const r = await this.c.query<RawStep>(
      "UPDATE steps SET state = 'rejected', error = $2, updated_at = $3 WHERE id = $1 AND state = 'planned' RETURNING *",
      [stepId, this.scrub(error), now],
    );
    const row = r.rows[0];
    if (row === undefined) throw await this.whyNot(stepId, 'planned', 'refuse');
    await skipPlanned(this.c, row.plan_id, `step ${row.idx} was refused`, now);
    return this.afterChange(stepId, now);
  }

  async reconcile(ref: StepRef, applied: boolean, opts: { claimedLamports?: Lamports; note: string }, now: number): Promise<StepRow> {
    const { id: stepId, attempt } = stepRef(ref);
    const r = await this.settleUnknown(stepId, applied ? 'acknowledged' : 'planned', opts.note, true, now, attempt);
    if (r === undefined) throw await this.whyNot(stepId, 'unknown', 'reconcile', true, attempt);
    if (applied && opts.claimedLamports !== undefined) await setClaimed(this.c, r.plan_id, opts.claimedLamports, now);
    return this.afterChange(stepId, now);
  }

  async holdForOperator(ref: StepRef, note: string, now: number): Promise<StepRow> {
    const { id: stepId, attempt } = stepRef(ref);
    const r = await this.c.query<RawStep>(
      "UPDATE steps SET resolution = $2, updated_at = $3 WHERE id = $1 AND state = 'unknown' AND kind = 'claim' AND ($4::integer IS NULL OR attempts = $4) RETURNING *",
      [stepId, this.scrub(note), now, attempt],
    );
    if (r.rows[0] === undefined) throw await this.whyNot(stepId, 'unknown', 'hold', true, attempt);
    return this.mustGet(stepId);
  }

  async resolve(stepId: number, applied: boolean, note: string, now: number): Promise<StepRow> {
    const r = await this.settleUnknown(stepId, applied ? 'acknowledged' : 'rejected', note, false, now);
    if (r === undefined) throw await this.whyNot(stepId, 'unknown', 'resolve');
    if (!applied) await skipPlanned(this.c, r.plan_id, `step ${r.idx} was resolved as not applied`, now);
    return this.afterChange(stepId, now);
  }

  async setAmount(stepId: number, lamports: Lamports, now: number): Promise<StepRow> {
    const text = lamportsText(lamports, 'step amount');
    const r = await this.c.query("UPDATE steps SET amount_lamports = $1, updated_at = $2 WHERE id = $3 AND state = 'planned'", [text, now, stepId]);
    if ((r.rowCount ?? 0) === 0) throw await this.whyNot(stepId, 'planned', 'set the amount of');
    return this.mustGet(stepId);
  }

  async skipRemaining(planId: number, reason: string, now: number): Promise<number> {
    const n = await skipPlanned(this.c, planId, this.scrub(reason), now);
    await finishPlan(this.c, planId, now);
    return n;
  }

  /** `send --cancel` (port.ts); the caller holds the plan's row lock, which markSending also takes. */
  async cancelPlan(planId: number, by: string, now: number): Promise<PlanWithSteps> {
    const plan = await getPlan(this.c, planId);
    if (plan === undefined) throw new StateError('STATE_NOT_FOUND', `no plan ${planId}`);
    const refusal = cancelRefusal(plan);
    if (refusal !== undefined) throw new StateError('STATE_TRANSITION', refusal);
    const who = this.scrub(by);
    if (!(await setCancelled(this.c, planId, who, now))) throw new StateError('STATE_TRANSITION', `plan ${planId} changed concurrently`);
    await skipPlanned(this.c, planId, cancelNote(who, now), now);
    await finishPlan(this.c, planId, now);
    const after = await getPlan(this.c, planId);
    if (after === undefined) throw new StateError('STATE_NOT_FOUND', `no plan ${planId}`);
    return after;
  }

  /** sending → unknown: whatever was in flight may or may not have reached the server. */
  async recover(stepId: number, error: string, now: number, unsigned = false): Promise<StepRow> {
    // A step whose signer never answered was never sent: it may be signed and sent afresh.
    if (unsigned) await this.leaveSending(stepId, 'planned', {}, UNSIGNED_ERROR, now, 'not_sent');
    else await this.leaveSending(stepId, 'unknown', {}, error, now);
    return this.afterChange(stepId, now);
  }

  private async settleUnknown(stepId: number, to: StepState, note: string, claimOnly: boolean, now: number, attempt: number | null = null): Promise<RawStep | undefined> {
    const r = await this.c.query<RawStep>(
      `UPDATE steps SET state = $2, resolution = $3, updated_at = $4
       WHERE id = $1 AND state = 'unknown' AND ($5 = false OR kind = 'claim') AND ($6::integer IS NULL OR attempts = $6)
       RETURNING *`,
      [stepId, to, this.scrub(note), now, claimOnly, attempt],
    );
    return r.rows[0];
  }

  private async leaveSending(
    ref: StepRef,
    to: StepState,
    res: ResponseRecord,
    error: string | null,
    now: number,
    outcome: Outcome = to as Outcome,
  ): Promise<RawStep> {
    const { id: stepId, attempt } = stepRef(ref);
    const scrubbed = error === null ? null : this.scrub(error);
    const requestId = res.requestId === undefined ? null : this.scrub(res.requestId);
    const r = await this.c.query<RawStep>(
      `UPDATE steps SET state = $2, response_status = $3, response_raw = $4, request_id = $5, error = $6, updated_at = $7
       WHERE id = $1 AND state = 'sending' AND ($8::integer IS NULL OR attempts = $8)
       RETURNING *`,
      [stepId, to, res.status ?? null, res.responseRaw === undefined ? null : this.scrub(res.responseRaw), requestId, scrubbed, now, attempt],
    );
    const row = r.rows[0];
    if (row === undefined) throw await this.whyNot(stepId, 'sending', `mark ${to}`, false, attempt);
    await this.c.query(
      `UPDATE attempts SET finished_at = $2, outcome = $3, status = $4, request_id = $5, error = $6
       WHERE step_id = $1 AND finished_at IS NULL`,
      [stepId, now, outcome, res.status ?? null, requestId, scrubbed],
    );
    return row;
  }

  private async afterChange(stepId: number, now: number): Promise<StepRow> {
    const step = await this.mustGet(stepId);
    await finishPlan(this.c, step.planId, now);
    return step;
  }

  private async mustGet(stepId: number): Promise<StepRow> {
    const step = await getStep(this.c, stepId);
    if (step === undefined) throw new StateError('STATE_NOT_FOUND', `no step ${stepId}`);
    return step;
  }

  /** Why a guarded UPDATE matched no row, as the error to throw (the same words as SQLite's). */
  private async whyNot(stepId: number, expected: StepState, verb: string, claimOnly = false, attempt: number | null = null): Promise<StateError> {
    const r = await this.c.query<RawStep>('SELECT * FROM steps WHERE id = $1', [stepId]);
    const step = r.rows[0];
    if (step === undefined) return new StateError('STATE_NOT_FOUND', `no step ${stepId}`);
    const cannot = `cannot ${verb} step ${stepId} (${step.kind})`;
    if (step.state !== expected) {
      return new StateError('STATE_TRANSITION', `${cannot}: it is ${step.state}, not ${expected}`);
    }
    if (attempt !== null && Number(step.attempts) !== attempt) {
      return new StateError('STATE_TRANSITION', `${cannot}: it is on attempt ${step.attempts} now, not ${attempt}: another request of it was signed since`);
    }
    if (claimOnly && step.kind !== 'claim') {
      return new StateError('STATE_TRANSITION', `${cannot}: only a claim is reconciled automatically; an operator resolves a ${step.kind}`);
    }
    const plan = await planRow(this.c, step.plan_id);
    if (plan !== undefined && (plan.dry || plan.status !== 'open')) {
      return new StateError('STATE_TRANSITION', `${cannot}: plan ${plan.id} is ${plan.status}`);
    }
    const earlier = await this.c.query<{ idx: number; state: StepState }>(
      "SELECT idx, state FROM steps WHERE plan_id = $1 AND idx < $2 AND state NOT IN ('acknowledged', 'skipped') ORDER BY idx LIMIT 1",
      [step.plan_id, step.idx],
    );
    const e = earlier.rows[0];
    if (e !== undefined) return new StateError('STATE_TRANSITION', `${cannot}: step ${e.idx} of its plan is still ${e.state}`);
    if (step.kind !== 'claim' && step.amount_lamports === null) {
      return new StateError('STATE_TRANSITION', `${cannot}: its amount is not known yet`);
    }
    return new StateError('STATE_TRANSITION', `${cannot}: it changed concurrently`);
  }
}
