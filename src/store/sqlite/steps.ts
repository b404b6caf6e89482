// Steps in SQLite: the reads, and the dialect the shared state machine (../step-machine.ts) runs
// in here — each transition in a BEGIN IMMEDIATE transaction of its own, its queries answered
// synchronously by prepared statements, so a transaction never spans an await.
import type { Lamports } from '../../amount.js';
import type { PlanStatus, StepState } from '../../domain.js';
import { attemptFromRaw, stepFromRaw } from '../codecs.js';
import { prepareShared, sharedArgs, type Db, type SharedStatement } from './db.js';
import { IN_FLIGHT_ERROR } from '../plan-status.js';
import type { ClaimedRecord, ResponseRecord, StepRef } from '../port.js';
import type { AttemptRow, PlanWithSteps, RawAttempt, RawStep, StepRow, StoredRequest } from '../rows.js';
import { runSync, StepMachine, type Op, type Query } from '../step-machine.js';

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
  private readonly machine: StepMachine;
  private readonly prepared = new Map<string, SharedStatement>();

  constructor(
    private readonly db: Db,
    scrub: Scrub,
  ) {
    this.machine = new StepMachine(scrub);
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
    // The running maximum attempts' triggers keep (migrations.ts 5), not every attempt read again.
    this.selectLastTs = db.prepare<[string], { ts: number | null }>('SELECT ts FROM signed_ts WHERE address = ?');
    this.selectTsFrom = db.prepare<[string, number, number], { ts: number }>(`
      SELECT DISTINCT json_extract(a.request, '$.ts') AS ts
      FROM attempts a JOIN steps s ON s.id = a.step_id JOIN plans p ON p.id = s.plan_id
      WHERE p.address = ? AND json_extract(a.request, '$.ts') >= ?
      ORDER BY ts LIMIT ?`);
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
    return this.selectClaimInDoubt.get(address, exceptStepId)?.n === 1;
  }

  hasUnknownSigned(address: string): boolean {
    return this.selectUnknownSigned.get(address)?.n === 1;
  }

  /** Runs a transition of the machine in a transaction of its own. */
  private tx<T>(op: () => Op<T>): T {
    return this.db.transaction(() => runSync(op(), (q) => this.exec(q))).immediate();
  }

  private exec(q: Query): unknown {
    let p = this.prepared.get(q.sql);
    if (p === undefined) this.prepared.set(q.sql, (p = prepareShared(this.db, q.sql)));
    const args = sharedArgs(p, q.args);
    if (q.mode === 'get') return p.stmt.get(...args);
    if (q.mode === 'all') return p.stmt.all(...args);
    return p.stmt.run(...args).changes;
  }

  markSending(stepId: number, request: StoredRequest, now: number): StepRow {
    return this.tx(() => this.machine.markSending(stepId, request, now));
  }
  markAcknowledged(ref: StepRef, res: ResponseRecord & ClaimedRecord, now: number): StepRow {
    return this.tx(() => this.machine.markAcknowledged(ref, res, now));
  }
  recordClaimed(stepId: number, lamports: Lamports, now: number): StepRow {
    return this.tx(() => this.machine.recordClaimed(stepId, lamports, now));
  }
  markRejected(ref: StepRef, res: ResponseRecord & { error: string }, now: number): StepRow {
    return this.tx(() => this.machine.markRejected(ref, res, now));
  }
  markFailed(ref: StepRef, res: ResponseRecord & { error: string }, now: number): StepRow {
    return this.tx(() => this.machine.markFailed(ref, res, now));
  }
  markUnknown(ref: StepRef, res: ResponseRecord & { error: string }, now: number): StepRow {
    return this.tx(() => this.machine.markUnknown(ref, res, now));
  }
  recordSigned(ref: StepRef, request: StoredRequest, now: number): StepRow {
    return this.tx(() => this.machine.recordSigned(ref, request, now));
  }

  markNotSent(ref: StepRef, error: string, now: number): StepRow {
    return this.tx(() => this.machine.markNotSent(ref, error, now));
  }
  markRefused(stepId: number, error: string, now: number): StepRow {
    return this.tx(() => this.machine.markRefused(stepId, error, now));
  }
  reconcile(ref: StepRef, applied: boolean, opts: { claimedLamports?: Lamports; note: string }, now: number): StepRow {
    return this.tx(() => this.machine.reconcile(ref, applied, opts, now));
  }
  holdForOperator(ref: StepRef, note: string, now: number): StepRow {
    return this.tx(() => this.machine.holdForOperator(ref, note, now));
  }
  resolve(stepId: StepRef, applied: boolean, note: string, now: number): StepRow {
    return this.tx(() => this.machine.resolve(stepId, applied, note, now));
  }
  setAmountLamports(stepId: number, lamports: Lamports, now: number): StepRow {
    return this.tx(() => this.machine.setAmount(stepId, lamports, now));
  }
  skipRemaining(planId: number, reason: string, now: number): number {
    return this.tx(() => this.machine.skipRemaining(planId, reason, now));
  }
  /** `send --cancel` (port.ts): in the write lock markSending also takes, so one of the two wins. */
  cancelPlan(planId: number, by: string, now: number): PlanWithSteps {
    return this.tx(() => this.machine.cancelPlan(planId, by, now));
  }
  finishPlan(planId: number, now: number): PlanStatus {
    return this.tx(() => this.machine.finishPlan(planId, now));
  }

  /**
   * At start-up, a wallet's takeover or its turn: whatever was sending may or may not have reached
   * the server. Steps in `except` are in flight in this process right now, and are left alone.
   */
  recoverInFlight(now: number, address?: string, except?: ReadonlySet<number>): StepRow[] {
    return this.tx(() => this.machine.recoverSending(this.inFlightOf(address, except).map((s) => s.id), IN_FLIGHT_ERROR, now));
  }

  /** The steps recoverInFlight would turn: a read, so a turn with nothing to recover writes nothing. */
  inFlightOf(address?: string, except?: ReadonlySet<number>): RawStep[] {
    const rows = address === undefined ? this.selectByState.all('sending') : this.selectSendingOf.all(address);
    return except === undefined ? rows : rows.filter((s) => !except.has(s.id));
  }
}
