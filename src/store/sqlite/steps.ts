// Step transitions (SPEC §2). Each is one guarded UPDATE ... WHERE state = <expected> inside a
// short transaction that also keeps the attempts audit trail and the plan's status in step; when
// no row matches, nothing changed and a StateError says why, so a double transition cannot happen.
//
//   planned ──markSending──▶ sending ──markAcknowledged──▶ acknowledged
//      ▲                        ├──markRejected──▶ rejected        (rest of the plan skipped)
//      └──────markNotSent───────┤
//      │                        └──markUnknown──▶ unknown ──reconcile(claim only)──▶ acknowledged | planned
//      │                                                  └──resolve(operator)──────▶ acknowledged | rejected
//      └──markRefused (refused before sending, e.g. above safety.max_sol_per_action) ──▶ rejected
import type { Lamports } from '../../amount.js';
import type { StepState } from '../../domain.js';
import { StateError } from '../../errors.js';
import { attemptFromRaw, encodeRequest, lamportsText, stepFromRaw } from '../codecs.js';
import type { Db } from './db.js';
import { cancelNote, cancelRefusal, IN_FLIGHT_ERROR, UNSIGNED_ERROR } from '../plan-status.js';
import type { PlanRepo } from './plans.js';
import { stepRef, type ResponseRecord, type StepRef } from '../port.js';
import { isUnsigned, type AttemptRow, type PlanWithSteps, type RawAttempt, type RawStep, type StepRow, type StoredRequest } from '../rows.js';

type Outcome = 'acknowledged' | 'rejected' | 'failed' | 'unknown' | 'not_sent';
type Scrub = (text: string) => string;

export class StepRepo {
  private readonly selectStep;
  private readonly selectByState;
  private readonly selectSendingOf;
  private readonly selectUnknownSigned;
  private readonly selectAttempts;
  private readonly selectClaimInDoubt;
  private readonly selectLastTs;
  private readonly selectTsFrom;
  private readonly toSending;
  private readonly signed;
  private readonly signedAttempt;
  private readonly selectEarlierOpen;
  private readonly fromSending;
  private readonly refuse;
  private readonly settleUnknown;
  private readonly holdUnknown;
  private readonly setAmount;
  private readonly insertAttempt;
  private readonly closeAttempt;
  private readonly tx: <T>(fn: () => T) => T;

  constructor(
    db: Db,
    private readonly plans: PlanRepo,
    private readonly scrub: Scrub,
  ) {
    this.selectStep = db.prepare<[number], RawStep>('SELECT * FROM steps WHERE id = ?');
    this.selectByState = db.prepare<[StepState], RawStep>('SELECT * FROM steps WHERE state = ? ORDER BY id');
    this.selectSendingOf = db.prepare<[string], RawStep>(
      "SELECT s.* FROM steps s JOIN plans p ON p.id = s.plan_id WHERE s.state = 'sending' AND p.address = ? ORDER BY s.id",
    );
    this.selectUnknownSigned = db.prepare<[string], { n: number }>(`
      SELECT EXISTS (
        SELECT 1 FROM steps s JOIN plans p ON p.id = s.plan_id
        WHERE p.address = ? AND p.dry = 0 AND s.state = 'unknown' AND s.kind <> 'claim'
      ) AS n`);
    this.selectClaimInDoubt = db.prepare<[string, number], { n: number }>(`
      SELECT EXISTS (
        SELECT 1 FROM steps s JOIN plans p ON p.id = s.plan_id
        WHERE p.address = ? AND p.dry = 0 AND s.kind = 'claim' AND s.state IN ('sending', 'unknown') AND s.id <> ?
      ) AS n`);
    this.selectAttempts = db.prepare<[number], RawAttempt>('SELECT * FROM attempts WHERE step_id = ? ORDER BY n');
    this.selectLastTs = db.prepare<[string], { ts: number | null }>(`
      SELECT MAX(json_extract(a.request, '$.ts')) AS ts
      FROM attempts a JOIN steps s ON s.id = a.step_id JOIN plans p ON p.id = s.plan_id
      WHERE p.address = ?`);
    this.selectTsFrom = db.prepare<[string, number, number], { ts: number }>(`
      SELECT DISTINCT json_extract(a.request, '$.ts') AS ts
      FROM attempts a JOIN steps s ON s.id = a.step_id JOIN plans p ON p.id = s.plan_id
      WHERE p.address = ? AND json_extract(a.request, '$.ts') >= ?
      ORDER BY ts LIMIT ?`);
    // Only a step of an open, real plan, with its amount known and every earlier step of its plan
    // settled, may go out: a deposit never overtakes the claim that funds it.
    this.toSending = db.prepare<Record<string, unknown>, { attempts: number }>(`
      UPDATE steps SET state = 'sending', attempts = attempts + 1, request = @request,
                       response_status = NULL, response_raw = NULL, error = NULL, updated_at = @now
      WHERE id = @id AND state = 'planned' AND (kind = 'claim' OR amount_lamports IS NOT NULL)
        AND plan_id IN (SELECT id FROM plans WHERE status = 'open' AND dry = 0)
        AND NOT EXISTS (SELECT 1 FROM steps e WHERE e.plan_id = steps.plan_id AND e.idx < steps.idx
                                                AND e.state NOT IN ('acknowledged', 'skipped'))
      RETURNING attempts`);
    this.signed = db.prepare<Record<string, unknown>, { attempts: number }>(`UPDATE steps SET request = @request, updated_at = @now
      WHERE id = @id AND state = 'sending' AND (@attempt IS NULL OR attempts = @attempt) AND json_extract(request, '$.body') = '' RETURNING attempts`);
    this.signedAttempt = db.prepare<[string, number, number]>('UPDATE attempts SET request = ? WHERE step_id = ? AND n = ?');
    this.selectEarlierOpen = db.prepare<[number, number], { idx: number; state: StepState }>(
      "SELECT idx, state FROM steps WHERE plan_id = ? AND idx < ? AND state NOT IN ('acknowledged', 'skipped') ORDER BY idx LIMIT 1",
    );
    this.fromSending = db.prepare<Record<string, unknown>, RawStep>(`
      UPDATE steps SET state = @to, response_status = @status, response_raw = @raw, request_id = @requestId, error = @error, updated_at = @now
      WHERE id = @id AND state = 'sending' AND (@attempt IS NULL OR attempts = @attempt)
      RETURNING *`);
    this.refuse = db.prepare<Record<string, unknown>, RawStep>(`
      UPDATE steps SET state = 'rejected', error = @error, updated_at = @now
      WHERE id = @id AND state = 'planned'
      RETURNING *`);
    this.settleUnknown = db.prepare<Record<string, unknown>, RawStep>(`
      UPDATE steps SET state = @to, resolution = @note, updated_at = @now
      WHERE id = @id AND state = 'unknown' AND (@claimOnly = 0 OR kind = 'claim') AND (@attempt IS NULL OR attempts = @attempt)
      RETURNING *`);
    this.holdUnknown = db.prepare<[string, number, number, number | null, number | null], RawStep>(
      "UPDATE steps SET resolution = ?, updated_at = ? WHERE id = ? AND state = 'unknown' AND kind = 'claim' AND (? IS NULL OR attempts = ?) RETURNING *",
    );
    this.setAmount = db.prepare<[string, number, number]>(
      "UPDATE steps SET amount_lamports = ?, updated_at = ? WHERE id = ? AND state = 'planned'",
    );
    this.insertAttempt = db.prepare<[number, number, string, number]>(
      'INSERT INTO attempts (step_id, n, request, started_at) VALUES (?, ?, ?, ?)',
    );
    this.closeAttempt = db.prepare<Record<string, unknown>>(`
      UPDATE attempts SET finished_at = @now, outcome = @outcome, status = @status, request_id = @requestId, error = @error
      WHERE step_id = @id AND finished_at IS NULL`);
    this.tx = <T>(fn: () => T): T => db.transaction(fn).immediate();
  }

  get(id: number): StepRow | undefined {
    const r = this.selectStep.get(id);
    return r === undefined ? undefined : stepFromRaw(r);
  }

  inState(state: StepState): StepRow[] {
    return this.selectByState.all(state).map(stepFromRaw);
  }

  attempts(stepId: number): AttemptRow[] {
    return this.selectAttempts.all(stepId).map(attemptFromRaw);
  }

  /** The newest x-svc-ts this address ever signed, so a new request never repeats one. */
  lastRequestTs(address: string): number | undefined {
    return this.selectLastTs.get(address)?.ts ?? undefined;
  }

  /** The seconds this address signed at or after fromTs, ascending (see the store port). */
  requestTsFrom(address: string, fromTs: number, limit: number): number[] {
    return this.selectTsFrom.all(address, fromTs, limit).map((r) => r.ts);
  }

  /** A claim of this address (other than `exceptStepId`) that may or may not have been applied. */
  claimInDoubt(address: string, exceptStepId = 0): boolean {
    // Every step belongs to a plan of its address: none, no step in doubt.
    return this.plans.mayHave(address) && this.selectClaimInDoubt.get(address, exceptStepId)?.n === 1;
  }

  hasUnknownSigned(address: string): boolean {
    return this.plans.mayHave(address) && this.selectUnknownSigned.get(address)?.n === 1;
  }

  /** planned → sending, committed before the first byte goes out. */
  markSending(stepId: number, request: StoredRequest, now: number): StepRow {
    const requestJson = this.scrub(encodeRequest(request, stepId));
    return this.tx(() => {
      const r = this.toSending.get({ id: stepId, request: requestJson, now });
      if (r === undefined) throw this.whyNot(stepId, 'planned', 'send');
      this.insertAttempt.run(stepId, r.attempts, requestJson, now);
      return this.afterChange(stepId, now);
    });
  }

  /** sending (unsigned) → sending (signed): see the store port. */
  recordSigned(ref: StepRef, request: StoredRequest, now: number): StepRow {
    const { id: stepId, attempt } = stepRef(ref);
    const requestJson = this.scrub(encodeRequest(request, stepId));
    return this.tx(() => {
      const r = this.signed.get({ id: stepId, attempt, request: requestJson, now });
      if (r === undefined) throw this.whyNot(stepId, 'sending', 'record the signature of', false, attempt);
      this.signedAttempt.run(requestJson, stepId, r.attempts);
      return this.mustGet(stepId);
    });
  }

  markAcknowledged(ref: StepRef, res: ResponseRecord & { claimedLamports?: Lamports }, now: number): StepRow {
    return this.tx(() => {
      const stepId = stepRef(ref).id;
      const r = this.leaveSending(ref, 'acknowledged', res, null, now);
      if (r.kind === 'claim' && res.claimedLamports !== undefined) this.plans.setClaimed(r.plan_id, res.claimedLamports, now);
      return this.afterChange(stepId, now);
    });
  }

  markRejected(ref: StepRef, res: ResponseRecord & { error: string }, now: number): StepRow {
    return this.tx(() => {
      const stepId = stepRef(ref).id;
      const r = this.leaveSending(ref, 'rejected', res, res.error, now);
      this.plans.skipRemaining(r.plan_id, `step ${r.idx} was rejected`, now);
      return this.afterChange(stepId, now);
    });
  }

  /** sending → failed: the server refused the request itself (signature, auth, ...); the rest of the plan is skipped. */
  markFailed(ref: StepRef, res: ResponseRecord & { error: string }, now: number): StepRow {
    return this.tx(() => {
      const stepId = stepRef(ref).id;
      const r = this.leaveSending(ref, 'failed', res, res.error, now);
      this.plans.skipRemaining(r.plan_id, `step ${r.idx} failed: the request was refused as invalid`, now);
      return this.afterChange(stepId, now);
    });
  }

  markUnknown(ref: StepRef, res: ResponseRecord & { error: string }, now: number): StepRow {
    return this.tx(() => {
      const stepId = stepRef(ref).id;
      this.leaveSending(ref, 'unknown', res, res.error, now);
      return this.afterChange(stepId, now);
    });
  }

  /** sending → planned: the request provably never reached the server, so it may be tried again. */
  markNotSent(ref: StepRef, error: string, now: number): StepRow {
    return this.tx(() => {
      const stepId = stepRef(ref).id;
      this.leaveSending(ref, 'planned', {}, error, now, 'not_sent');
      return this.afterChange(stepId, now);
    });
  }

  /** planned → rejected without sending (a safety limit refused it); the rest of the plan is skipped. */
  markRefused(stepId: number, error: string, now: number): StepRow {
    return this.tx(() => {
      const r = this.refuse.get({ id: stepId, error: this.scrub(error), now });
      if (r === undefined) throw this.whyNot(stepId, 'planned', 'refuse');
      this.plans.skipRemaining(r.plan_id, `step ${r.idx} was refused`, now);
      return this.afterChange(stepId, now);
    });
  }

  /**
   * An unknown claim, settled by reading the wallet again: applied → acknowledged; not applied →
   * planned, to be tried again as a new signed request. Deposits and mints are never reconciled
   * automatically (SPEC §2), so they are refused here.
   */
  reconcile(ref: StepRef, applied: boolean, opts: { claimedLamports?: Lamports; note: string }, now: number): StepRow {
    return this.tx(() => {
      const { id: stepId, attempt } = stepRef(ref);
      const r = this.settleUnknown.get({
        id: stepId,
        attempt,
        to: applied ? 'acknowledged' : 'planned',
        note: this.scrub(opts.note),
        claimOnly: 1,
        now,
      });
      if (r === undefined) throw this.whyNot(stepId, 'unknown', 'reconcile', true, attempt);
      if (applied && opts.claimedLamports !== undefined) this.plans.setClaimed(r.plan_id, opts.claimedLamports, now);
      return this.afterChange(stepId, now);
    });
  }

  /** An unknown claim held for an operator: only its resolution changes (see the store port). */
  holdForOperator(ref: StepRef, note: string, now: number): StepRow {
    return this.tx(() => {
      const { id: stepId, attempt } = stepRef(ref);
      const r = this.holdUnknown.get(this.scrub(note), now, stepId, attempt, attempt);
      if (r === undefined) throw this.whyNot(stepId, 'unknown', 'hold', true, attempt);
      return this.mustGet(stepId);
    });
  }

  /** The operator's verdict on an unknown step: applied → acknowledged; not applied → rejected, rest skipped. */
  resolve(stepId: number, applied: boolean, note: string, now: number): StepRow {
    return this.tx(() => {
      const r = this.settleUnknown.get({
        id: stepId,
        attempt: null,
        to: applied ? 'acknowledged' : 'rejected',
        note: this.scrub(note),
        claimOnly: 0,
        now,
      });
      if (r === undefined) throw this.whyNot(stepId, 'unknown', 'resolve');
      if (!applied) this.plans.skipRemaining(r.plan_id, `step ${r.idx} was resolved as not applied`, now);
      return this.afterChange(stepId, now);
    });
  }

  setAmountLamports(stepId: number, lamports: Lamports, now: number): StepRow {
    const text = lamportsText(lamports, 'step amount');
    return this.tx(() => {
      if (this.setAmount.run(text, now, stepId).changes === 0) throw this.whyNot(stepId, 'planned', 'set the amount of');
      return this.mustGet(stepId);
    });
  }

  skipRemaining(planId: number, reason: string, now: number): number {
    return this.tx(() => {
      const n = this.plans.skipRemaining(planId, this.scrub(reason), now);
      this.plans.finish(planId, now);
      return n;
    });
  }

  /** `send --cancel` (port.ts): in the write lock markSending also takes, so one of the two wins. */
  cancelPlan(planId: number, by: string, now: number): PlanWithSteps {
    return this.tx(() => {
      const plan = this.plans.get(planId);
      if (plan === undefined) throw new StateError('STATE_NOT_FOUND', `no plan ${planId}`);
      const refusal = cancelRefusal(plan);
      if (refusal !== undefined) throw new StateError('STATE_TRANSITION', refusal);
      const who = this.scrub(by);
      if (!this.plans.setCancelled(planId, who, now)) throw new StateError('STATE_TRANSITION', `plan ${planId} changed concurrently`);
      this.plans.skipRemaining(planId, cancelNote(who, now), now);
      this.plans.finish(planId, now);
      const after = this.plans.get(planId);
      if (after === undefined) throw new StateError('STATE_NOT_FOUND', `no plan ${planId}`);
      return after;
    });
  }

  /**
   * At start-up, a wallet's takeover or its turn: whatever was sending may or may not have reached
   * the server. Steps in `except` are in flight in this process right now, and are left alone.
   */
  recoverInFlight(now: number, address?: string, except?: ReadonlySet<number>): StepRow[] {
    return this.tx(() =>
      this.inFlightOf(address, except).map((s) => {
        // A step whose signer never answered was never sent: it may be signed and sent afresh.
        if (isUnsigned(stepFromRaw(s).request)) this.leaveSending(s.id, 'planned', {}, UNSIGNED_ERROR, now, 'not_sent');
        else this.leaveSending(s.id, 'unknown', {}, IN_FLIGHT_ERROR, now);
        return this.afterChange(s.id, now);
      }),
    );
  }

  /** The steps recoverInFlight would turn: a read, so a turn with nothing to recover writes nothing. */
  inFlightOf(address?: string, except?: ReadonlySet<number>): RawStep[] {
    const rows = address === undefined ? this.selectByState.all('sending') : this.selectSendingOf.all(address);
    return except === undefined ? rows : rows.filter((s) => !except.has(s.id));
  }

  private leaveSending(
    ref: StepRef,
    to: StepState,
    res: ResponseRecord,
    error: string | null,
    now: number,
    outcome: Outcome = to as Outcome,
  ): RawStep {
    const { id: stepId, attempt } = stepRef(ref);
    const scrubbed = error === null ? null : this.scrub(error);
    const r = this.fromSending.get({
      id: stepId,
      attempt,
      to,
      status: res.status ?? null,
      raw: res.responseRaw === undefined ? null : this.scrub(res.responseRaw),
      requestId: res.requestId === undefined ? null : this.scrub(res.requestId),
      error: scrubbed,
      now,
    });
    if (r === undefined) throw this.whyNot(stepId, 'sending', `mark ${to}`, false, attempt);
    this.closeAttempt.run({ id: stepId, now, outcome, status: res.status ?? null, requestId: res.requestId === undefined ? null : this.scrub(res.requestId), error: scrubbed });
    return r;
  }

  private afterChange(stepId: number, now: number): StepRow {
    const step = this.mustGet(stepId);
    this.plans.finish(step.planId, now);
    return step;
  }

  private mustGet(stepId: number): StepRow {
    const step = this.get(stepId);
    if (step === undefined) throw new StateError('STATE_NOT_FOUND', `no step ${stepId}`);
    return step;
  }

  /** Why a guarded UPDATE matched no row, as the error to throw. */
  private whyNot(stepId: number, expected: StepState, verb: string, claimOnly = false, attempt: number | null = null): StateError {
    const step = this.selectStep.get(stepId);
    if (step === undefined) return new StateError('STATE_NOT_FOUND', `no step ${stepId}`);
    const cannot = `cannot ${verb} step ${stepId} (${step.kind})`;
    if (step.state !== expected) {
      return new StateError('STATE_TRANSITION', `${cannot}: it is ${step.state}, not ${expected}`);
    }
    if (attempt !== null && Number(step.attempts) !== attempt) {
      return new StateError('STATE_TRANSITION', `${cannot}: it is on attempt ${step.attempts} now, not ${attempt}: another request of it was signed since`);
    }
    if (claimOnly && step.kind !== 'claim') {
      return new StateError(
        'STATE_TRANSITION',
        `${cannot}: only a claim is reconciled automatically; an operator resolves a ${step.kind}`,
      );
    }
    const plan = this.plans.planRow(step.plan_id);
    if (plan !== undefined && (plan.dry || plan.status !== 'open')) {
      return new StateError('STATE_TRANSITION', `${cannot}: plan ${plan.id} is ${plan.status}`);
    }
    const earlier = this.selectEarlierOpen.get(step.plan_id, step.idx);
    if (earlier !== undefined) {
      return new StateError('STATE_TRANSITION', `${cannot}: step ${earlier.idx} of its plan is still ${earlier.state}`);
    }
    if (step.kind !== 'claim' && step.amount_lamports === null) {
      return new StateError('STATE_TRANSITION', `${cannot}: its amount is not known yet`);
    }
    return new StateError('STATE_TRANSITION', `${cannot}: it changed concurrently`);
  }
}
