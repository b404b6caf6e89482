// The state store: one synchronous API over the SQLite file, composed of one module per table
// family. Every method is a short transaction that never spans an await, and every failure comes
// out as a StateError, so a caller that cannot record cannot send (fail closed).
import type { Lamports } from '../amount.js';
import { systemClock, type Clock, type PlanDraft, type PlanHistoryEntry, type PlanStatus } from '../domain.js';
import { StateError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { openDatabase, toStateError, type Db } from './db.js';
import { StateFiles } from './identity.js';
import { SCHEMA_VERSION } from './migrations.js';
import { PlanRepo, type InsertPlanOptions, type ListPlansQuery } from './plans.js';
import type { AttemptRow, PlanWithSteps, StepRow, StoredRequest, WalletStateRow } from './rows.js';
import { StepRepo, type ResponseRecord } from './steps.js';
import { WalletRepo, type PollResult } from './wallets.js';

export type { InsertPlanOptions, ListPlansQuery } from './plans.js';
export type { PollResult } from './wallets.js';
export type { ResponseRecord } from './steps.js';
export { IN_FLIGHT_ERROR } from './steps.js';
export type {
  AttemptRow,
  ClaimBaseline,
  PlanRow,
  PlanWithSteps,
  StoredRequest,
  StepRow,
  WalletStateRow,
} from './rows.js';

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
}

/** Times are wall-clock Unix ms; when `now` is omitted the store's clock is asked. */
export interface Store {
  readonly path: string;
  readonly schemaVersion: number;

  /** Every key below is the wallet's address; `wallet` (the configured name) is kept as a label. */
  recordPoll(wallet: string, address: string, at: number, result: PollResult): { newEpoch: boolean };
  walletStates(): WalletStateRow[];
  walletState(address: string): WalletStateRow | undefined;

  insertPlan(draft: PlanDraft, opts: Omit<InsertPlanOptions, 'now'> & { now?: number }): PlanWithSteps | undefined;
  planHistory(address: string, sinceMs: number, epoch?: string): PlanHistoryEntry[];
  /** Plans still to be worked on (status open, not dry), oldest first; of one address if given. */
  openPlans(address?: string): PlanWithSteps[];
  /** Plans of this address that still have work: status open or blocked, oldest first. */
  activePlans(address: string): PlanWithSteps[];
  getPlan(id: number): PlanWithSteps | undefined;
  /** The plan of a one-off `send --id ID`, if that id was ever used. */
  planByManualId(id: string): PlanWithSteps | undefined;
  listPlans(q?: ListPlansQuery): PlanWithSteps[];
  getStep(id: number): StepRow | undefined;
  stepAttempts(stepId: number): AttemptRow[];

  markSending(stepId: number, request: StoredRequest, now?: number): StepRow;
  markAcknowledged(stepId: number, res: ResponseRecord & { claimedLamports?: Lamports }, now?: number): StepRow;
  markRejected(stepId: number, res: ResponseRecord & { error: string }, now?: number): StepRow;
  markFailed(stepId: number, res: ResponseRecord & { error: string }, now?: number): StepRow;
  markUnknown(stepId: number, res: ResponseRecord & { error: string }, now?: number): StepRow;
  markNotSent(stepId: number, error: string, now?: number): StepRow;
  markRefused(stepId: number, error: string, now?: number): StepRow;
  reconcile(stepId: number, applied: boolean, opts: { claimedLamports?: Lamports; note: string }, now?: number): StepRow;
  resolve(stepId: number, applied: boolean, note: string, now?: number): StepRow;
  setStepAmount(stepId: number, lamports: Lamports, now?: number): StepRow;
  skipRemaining(planId: number, reason: string, now?: number): number;
  finishPlan(planId: number, now?: number): PlanStatus;

  recoverInFlight(now?: number): StepRow[];
  hasUnknownSignedStep(address: string): boolean;
  /**
   * A claim of this address (other than `exceptStepId`) is sending or unknown: until it is
   * settled, another claim would move the summary that reconciles it, and a claim never applied
   * could be credited with another's money.
   */
  claimInDoubt(address: string, exceptStepId?: number): boolean;
  /** The newest request timestamp (Unix seconds) this address ever signed. */
  lastRequestTs(address: string): number | undefined;
  unknownSteps(): StepRow[];

  /** The connection's settings, for diagnostics (and to prove they were applied). */
  pragmas(): StorePragmas;
  integrityCheck(): string;
  /**
   * Proves a write would go through now (readiness): takes the write lock, writes a row and rolls
   * it back, so nothing reaches the disk and nothing is fsynced. Throws a StateError when it cannot.
   */
  probeWrite(): void;
  close(): void;
}

export interface StorePragmas {
  journalMode: string;
  /** 2 = FULL */
  synchronous: number;
  foreignKeys: boolean;
  busyTimeoutMs: number;
  userVersion: number;
}

export function openStore(path: string, opts: StoreOptions): Store {
  const db = openDatabase(path, {
    logger: opts.logger,
    readonly: opts.readonly ?? false,
    busyTimeoutMs: opts.busyTimeoutMs ?? 5000,
  });
  try {
    return new SqliteStore(db, path, opts);
  } catch (err) {
    db.close();
    throw toStateError(err, 'prepare', path);
  }
}

class SqliteStore implements Store {
  readonly schemaVersion = SCHEMA_VERSION;
  private readonly clock: Clock;
  private readonly wallets: WalletRepo;
  private readonly plans: PlanRepo;
  private readonly steps: StepRepo;
  private readonly integrity;
  private readonly files: StateFiles;

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
    this.steps = new StepRepo(db, this.plans, scrub);
    this.integrity = db.prepare<[], { integrity_check: string }>('PRAGMA integrity_check');
    this.files = new StateFiles(db, path, { logger: opts.logger, readonly: opts.readonly ?? false });
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
    return this.io('recordPoll', () => this.wallets.recordPoll(wallet, address, at, result));
  }
  walletStates(): WalletStateRow[] {
    return this.io('walletStates', () => this.wallets.all());
  }
  walletState(address: string): WalletStateRow | undefined {
    return this.io('walletState', () => this.wallets.get(address));
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
  markAcknowledged(stepId: number, res: ResponseRecord & { claimedLamports?: Lamports }, now = this.clock.now()): StepRow {
    return this.io('markAcknowledged', () => this.steps.markAcknowledged(stepId, res, now));
  }
  markRejected(stepId: number, res: ResponseRecord & { error: string }, now = this.clock.now()): StepRow {
    return this.io('markRejected', () => this.steps.markRejected(stepId, res, now));
  }
  markFailed(stepId: number, res: ResponseRecord & { error: string }, now = this.clock.now()): StepRow {
    return this.io('markFailed', () => this.steps.markFailed(stepId, res, now));
  }
  markUnknown(stepId: number, res: ResponseRecord & { error: string }, now = this.clock.now()): StepRow {
    return this.io('markUnknown', () => this.steps.markUnknown(stepId, res, now));
  }
  markNotSent(stepId: number, error: string, now = this.clock.now()): StepRow {
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
  resolve(stepId: number, applied: boolean, note: string, now = this.clock.now()): StepRow {
    return this.io('resolve', () => this.steps.resolve(stepId, applied, note, now));
  }
  setStepAmount(stepId: number, lamports: Lamports, now = this.clock.now()): StepRow {
    return this.io('setStepAmount', () => this.steps.setAmountLamports(stepId, lamports, now));
  }
  skipRemaining(planId: number, reason: string, now = this.clock.now()): number {
    return this.io('skipRemaining', () => this.steps.skipRemaining(planId, reason, now));
  }
  finishPlan(planId: number, now = this.clock.now()): PlanStatus {
    return this.io('finishPlan', () => this.plans.finish(planId, now));
  }

  recoverInFlight(now = this.clock.now()): StepRow[] {
    return this.io('recoverInFlight', () => this.steps.recoverInFlight(now));
  }
  lastRequestTs(address: string): number | undefined {
    return this.io('lastRequestTs', () => this.steps.lastRequestTs(address));
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

  pragmas(): StorePragmas {
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
