// The SQLite adapter of the store port (port.ts): one synchronous API over the state file, composed
// of one module per table family. Every method is a short transaction that never spans an await,
// and every failure comes out as a StateError, so a caller that cannot record cannot send (fail closed).
import type { Lamports } from '../../amount.js';
import { systemClock, type Clock, type PlanDraft, type PlanHistoryEntry, type PlanStatus } from '../../domain.js';
import { StateError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { openDatabase, prepareShared, sharedArgs, toStateError, type Db, type SharedStatement } from './db.js';
import { StateFiles } from './identity.js';
import type { Lock } from './lock.js';
import { SCHEMA_VERSION } from './migrations.js';
import { PlanRepo } from './plans.js';
import { pruneState, type PruneCounts, type PruneOptions } from './prune.js';
import { POLL_VIEW_SQL, pollViewFromRows, type PollView, type PollViewRow } from '../poll-view.js';
import type { ClaimedRecord, InsertPlanOptions, ListPlansQuery, PollResult, ResponseRecord, SyncStore, StepRef } from '../port.js';
import type { AttemptRow, OutboxDraft, OutboxRow, PlanWithSteps, RulePlan, StepRow, StoredRequest, WalletStateRow } from '../rows.js';
import { OutboxRepo } from './outbox.js';
import { StepRepo } from './steps.js';
import { WalletRepo } from './wallets.js';

export interface StoreOptions {
  logger: Logger;
  clock?: Clock;
  /** For `status` / `actions` beside a running daemon: no file creation, no migration, no writes. */
  readonly?: boolean;
  /** How long to wait for another connection's write lock; default 5000. */
  busyTimeoutMs?: number;
  /**
   * Scrubs free text (requests, responses, errors, summaries) before it is stored; pass the
   * logger's Redactor so a secret echoed by a server never reaches the file.
   */
  redactor?: { redact(text: string): string };
  /** The state lock this process holds: re-checked before each `sending` commit, and its mark of what was sent checked at open (identity.ts). */
  lock?: Pick<Lock, 'path' | 'file'> & Partial<Pick<Lock, 'sent'>>;
}

/** The connection's settings, for tests and diagnostics of the SQLite file (2 = FULL). */
export interface SqlitePragmas {
  journalMode: string;
  synchronous: number;
  foreignKeys: boolean;
  busyTimeoutMs: number;
  userVersion: number;
}

/**
 * The port, and what only a SQLite connection has: its pragmas, to prove they were applied, and
 * `autoclaim prune` (prune.ts), which runs under the state lock, never beside a daemon.
 */
export interface SqliteStore extends SyncStore {
  pragmas(): SqlitePragmas;
  prune(opts: PruneOptions): PruneCounts;
}

export function openStore(path: string, opts: StoreOptions): SqliteStore {
  const db = openDatabase(path, {
    logger: opts.logger,
    readonly: opts.readonly ?? false,
    busyTimeoutMs: opts.busyTimeoutMs ?? 5000,
  });
  try {
    return new SqliteStateStore(db, path, opts);
  } catch (err) {
    db.close();
    throw toStateError(err, 'prepare', path);
  }
}

class SqliteStateStore implements SqliteStore {
  readonly schemaVersion = SCHEMA_VERSION;
  private readonly clock: Clock;
  private readonly wallets: WalletRepo;
  private readonly plans: PlanRepo;
  private readonly steps: StepRepo;
  private readonly integrity;
  private readonly files: StateFiles;
  private readonly outbox: OutboxRepo;
  private readonly pollViewStmt: SharedStatement;

  constructor(
    private readonly db: Db,
    readonly path: string,
    opts: StoreOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    const redactor = opts.redactor;
    const scrub = redactor === undefined ? (t: string) => t : (t: string) => redactor.redact(t);
    this.wallets = new WalletRepo(db, scrub);
    this.plans = new PlanRepo(db);
    this.steps = new StepRepo(db, scrub);
    this.integrity = db.prepare<[], { integrity_check: string }>('PRAGMA integrity_check');
    this.outbox = new OutboxRepo(db, scrub);
    this.pollViewStmt = prepareShared(db, POLL_VIEW_SQL);
    this.files = new StateFiles(db, path, { logger: opts.logger, readonly: opts.readonly ?? false, lock: opts.lock });
  }

  /** Runs `fn`, turning any failure that is not already ours into STATE_IO. */
  private io<T>(what: string, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw toStateError(err, what, this.path);
    }
  }

  recordPoll(wallet: string, address: string, at: number, result: PollResult): { newEpoch: boolean } {
    return this.io('recordPoll', () => this.wallets.record(wallet, address, at, result));
  }
  walletStates(): WalletStateRow[] {
    return this.io('walletStates', () => this.wallets.all());
  }
  walletState(address: string): WalletStateRow | undefined {
    return this.io('walletState', () => this.wallets.get(address));
  }
  lastEpoch(address: string): string | undefined {
    return this.io('lastEpoch', () => this.wallets.epoch(address));
  }
  pollView(address: string, sinceMs: number, epoch: string): PollView {
    const args = sharedArgs(this.pollViewStmt, [address, sinceMs, epoch]);
    return this.io('pollView', () => pollViewFromRows(this.pollViewStmt.stmt.all(...args) as PollViewRow[]));
  }

  insertPlan(draft: PlanDraft, opts: Omit<InsertPlanOptions, 'now'> & { now?: number }): PlanWithSteps | undefined {
    const now = opts.now ?? this.clock.now();
    return this.io('insertPlan', () => this.plans.insert(draft, { ...opts, now }));
  }
  planHistory(address: string, sinceMs: number, epoch?: string): PlanHistoryEntry[] {
    return this.io('planHistory', () => this.plans.history(address, sinceMs, epoch));
  }
  openPlans(address?: string): PlanWithSteps[] {
    return this.io('openPlans', () => this.plans.open(address));
  }
  activePlans(address: string): PlanWithSteps[] {
    return this.io('activePlans', () => this.plans.active(address));
  }
  latestRulePlans(): RulePlan[] {
    return this.io('latestRulePlans', () => this.plans.latestPerRule());
  }
  planByManualId(id: string): PlanWithSteps | undefined {
    return this.io('planByManualId', () => this.plans.byManualId(id));
  }
  getPlan(id: number): PlanWithSteps | undefined {
    return this.io('getPlan', () => this.plans.get(id));
  }
  listPlans(q: ListPlansQuery = {}): PlanWithSteps[] {
    return this.io('listPlans', () => this.plans.list(q));
  }
  getStep(id: number): StepRow | undefined {
    return this.io('getStep', () => this.steps.get(id));
  }
  stepAttempts(stepId: number): AttemptRow[] {
    return this.io('stepAttempts', () => this.steps.attempts(stepId));
  }

  markSending(stepId: number, request: StoredRequest, now = this.clock.now()): StepRow {
    // Only while the files are the ones opened: a record written to a swapped-out file is no record.
    return this.files.sending(() => this.io('markSending', () => this.steps.markSending(stepId, request, now)));
  }
  recordSigned(stepId: StepRef, request: StoredRequest, now = this.clock.now()): StepRow {
    // The last write before the first byte: like markSending, only to the files opened.
    return this.files.sending(() => this.io('recordSigned', () => this.steps.recordSigned(stepId, request, now)));
  }
  markAcknowledged(stepId: StepRef, res: ResponseRecord & ClaimedRecord, now = this.clock.now()): StepRow {
    return this.io('markAcknowledged', () => this.steps.markAcknowledged(stepId, res, now));
  }
  recordClaimed(stepId: number, lamports: Lamports, now = this.clock.now()): StepRow {
    return this.io('recordClaimed', () => this.steps.recordClaimed(stepId, lamports, now));
  }
  markRejected(stepId: StepRef, res: ResponseRecord & { error: string }, now = this.clock.now()): StepRow {
    return this.io('markRejected', () => this.steps.markRejected(stepId, res, now));
  }
  markFailed(stepId: StepRef, res: ResponseRecord & { error: string }, now = this.clock.now()): StepRow {
    return this.io('markFailed', () => this.steps.markFailed(stepId, res, now));
  }
  markUnknown(stepId: StepRef, res: ResponseRecord & { error: string }, now = this.clock.now()): StepRow {
    return this.io('markUnknown', () => this.steps.markUnknown(stepId, res, now));
  }
  markNotSent(stepId: StepRef, error: string, now = this.clock.now()): StepRow {
    return this.io('markNotSent', () => this.steps.markNotSent(stepId, error, now));
  }
  markRefused(stepId: number, error: string, now = this.clock.now()): StepRow {
    return this.io('markRefused', () => this.steps.markRefused(stepId, error, now));
  }
  reconcile(
    stepId: number,
    applied: boolean,
    opts: { claimedLamports?: Lamports; note: string },
    now = this.clock.now(),
  ): StepRow {
    return this.io('reconcile', () => this.steps.reconcile(stepId, applied, opts, now));
  }
  holdForOperator(stepId: StepRef, note: string, now = this.clock.now()): StepRow {
    return this.io('holdForOperator', () => this.steps.holdForOperator(stepId, note, now));
  }
  resolve(stepId: StepRef, applied: boolean, note: string, now = this.clock.now()): StepRow {
    return this.io('resolve', () => this.steps.resolve(stepId, applied, note, now));
  }
  setStepAmount(stepId: number, lamports: Lamports, now = this.clock.now()): StepRow {
    return this.io('setStepAmount', () => this.steps.setAmountLamports(stepId, lamports, now));
  }
  skipRemaining(planId: number, reason: string, now = this.clock.now()): number {
    return this.io('skipRemaining', () => this.steps.skipRemaining(planId, reason, now));
  }
  cancelPlan(planId: number, by: string, now = this.clock.now()): PlanWithSteps {
    return this.io('cancelPlan', () => this.steps.cancelPlan(planId, by, now));
  }
  finishPlan(planId: number, now = this.clock.now()): PlanStatus {
    return this.io('finishPlan', () => this.steps.finishPlan(planId, now));
  }

  recoverInFlight(now = this.clock.now(), address?: string, except?: ReadonlySet<number>): StepRow[] {
    // Asked at every wallet turn: nothing to recover is one read, and no write lock is taken.
    if (except !== undefined && this.io('recoverInFlight', () => this.steps.inFlightOf(address, except)).length === 0) return [];
    return this.files.owned(() => this.io('recoverInFlight', () => this.steps.recoverInFlight(now, address, except)));
  }
  lastRequestTs(address: string): number | undefined {
    return this.io('lastRequestTs', () => this.steps.lastRequestTs(address));
  }

  /** One machine holds the state file: its clock is the store's. */
  clockNow(): number {
    return this.clock.now();
  }

  requestTsFrom(address: string, fromTs: number, limit: number): number[] {
    return this.io('requestTsFrom', () => this.steps.requestTsFrom(address, fromTs, limit));
  }

  claimInDoubt(address: string, exceptStepId?: number): boolean {
    return this.io('claimInDoubt', () => this.steps.claimInDoubt(address, exceptStepId));
  }
  hasUnknownSignedStep(address: string): boolean {
    return this.io('hasUnknownSignedStep', () => this.steps.hasUnknownSigned(address));
  }
  unknownSteps(): StepRow[] {
    return this.io('unknownSteps', () => this.steps.inState('unknown'));
  }

  outboxAdd(draft: OutboxDraft, now = this.clock.now()): boolean {
    return this.io('outboxAdd', () => this.outbox.add(draft, now));
  }
  outboxClaim(channel: string, now: number, limit: number, claimUntil: number): OutboxRow[] {
    return this.io('outboxClaim', () => this.outbox.claim(channel, now, limit, claimUntil));
  }
  outboxDelivered(ids: readonly number[]): void {
    this.io('outboxDelivered', () => this.outbox.markDelivered(ids));
  }
  outboxRetry(ids: readonly number[], nextAt: number, error: string): void {
    this.io('outboxRetry', () => this.outbox.markRetry(ids, nextAt, error));
  }
  outboxExpire(channel: string, now: number): OutboxRow[] {
    return this.io('outboxExpire', () => this.outbox.expired(channel, now));
  }

  pragmas(): SqlitePragmas {
    return this.io('pragmas', () => {
      const get = (name: string): unknown => this.db.pragma(name, { simple: true });
      return {
        journalMode: String(get('journal_mode')),
        synchronous: Number(get('synchronous')),
        foreignKeys: Number(get('foreign_keys')) === 1,
        busyTimeoutMs: Number(get('busy_timeout')),
        userVersion: Number(get('user_version')),
      };
    });
  }

  prune(opts: PruneOptions): PruneCounts {
    return this.io('prune', () => this.files.owned(() => pruneState(this.db, opts)));
  }

  integrityCheck(): string {
    return this.io('integrityCheck', () =>
      this.integrity
        .all()
        .map((r) => r.integrity_check)
        .join('\n'),
    );
  }

  probeWrite(): void {
    this.io('probeWrite', () => {
      if (!this.db.open) throw new StateError('STATE_IO', `state database ${this.path} is closed`);
      // BEGIN IMMEDIATE takes the write lock as every real write does; the insert touches a page.
      this.db.exec('BEGIN IMMEDIATE');
      try {
        this.db.prepare("INSERT OR REPLACE INTO epochs_seen (address, epoch, first_seen_at) VALUES ('', '', 0)").run();
      } finally {
        this.db.exec('ROLLBACK');
      }
    });
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
