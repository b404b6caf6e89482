// The PostgreSQL adapter of the store port (port.ts): shared state for several daemons. Every
// method answers with a promise; every write is one transaction on a connection of its own that
// first locks the plan's row, then (with a fence) checks the writer's lease on the wallet in the
// same transaction, then makes one guarded transition. Every failure is a StateError, so a caller
// that cannot record cannot send (fail closed). A poll's record is a (fenced) transaction of its own.
import type { Pool } from 'pg';
import type { Lamports } from '../../amount.js';
import { systemClock, type Clock, type PlanDraft, type PlanHistoryEntry, type PlanStatus } from '../../domain.js';
import { StateError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { IN_FLIGHT_ERROR } from '../plan-status.js';
import { stepRef, type ClaimedRecord, type InsertPlanOptions, type ListPlansQuery, type PollResult, type ResponseRecord, type StepRef, type Store } from '../port.js';
import type { AttemptRow, OutboxDraft, OutboxRow, PlanWithSteps, RulePlan, StepRow, StoredRequest, WalletStateRow } from '../rows.js';
import * as outbox from './outbox.js';
import { CommitInDoubt, DEFAULT_QUERY_TIMEOUT_MS, endPool, openPool, redactUrl, toStateError, transaction, type Sql } from './db.js';
import { checkLease, tokenOrThrow, type Fence } from './fence.js';
import { settleInDoubt } from './in-doubt.js';
import * as diagnostics from './diagnostics.js';
import { currentVersion, migrate, PG_SCHEMA_VERSION } from './migrations.js';
import * as plans from './plans.js';
import { POLL_VIEW_SQL, pollViewFromRows, type PollView, type PollViewRow } from '../poll-view.js';
import { Reachability } from './reachability.js';
import { runAsync, StepMachine, type Op } from '../step-machine.js';
import * as steps from './steps.js';
import { pgExec } from './steps.js';
import { WalletTable } from './wallets.js';

export type { Fence } from './fence.js';

export interface PostgresStoreOptions {
  logger: Logger;
  clock?: Clock;
  /** Read by the caller (PGPASSWORD, state.password_file, the credential); never in the URL. */
  password?: string;
  /** For `status` / `actions` beside running daemons: no migration, and the server refuses writes. */
  readonly?: boolean;
  /** false: create the schema where there is none, but refuse an older one (migrations.ts); default true. */
  upgrade?: boolean;
  /** Lock waits and connection set-up, ms; default 5000. */
  busyTimeoutMs?: number;
  /** state.query_timeout: every query's deadline (db.ts); default 10 s. */
  queryTimeoutMs?: number;
  /**
   * Whether the database answers (shared with the lease manager's pool in a cluster); one of the
   * store's own when absent. While it says unreachable, every call fails at once.
   */
  reachability?: Reachability;
  /** Scrubs free text (requests, responses, errors, summaries) before it is stored. */
  redactor?: { redact(text: string): string };
  /**
   * The lease manager's view: every plan and step write is fenced by the writer's lease on the
   * wallet, and poll records of wallets not leased are dropped. Without it (the CLI) writes are not
   * fenced.
   */
  fence?: Fence;
}

export async function openPostgresStore(url: string, opts: PostgresStoreOptions): Promise<Store> {
  const where = redactUrl(url);
  let pool: Pool | undefined;
  try {
    pool = await openPool(url, {
      password: opts.password,
      readonly: opts.readonly,
      busyTimeoutMs: opts.busyTimeoutMs,
      queryTimeoutMs: opts.queryTimeoutMs,
      onConnectionError: (err) => opts.reachability?.observe(err),
    });
    const client = await pool.connect();
    try {
      if (opts.readonly === true) {
        const v = await currentVersion(client);
        if (v === 0) throw new StateError('STATE_MISSING', `no autoclaim state in ${where} (has a daemon run with this state.url?)`);
        if (v > PG_SCHEMA_VERSION) throw new StateError('STATE_TOO_NEW', `state database ${where} has schema version ${v}; this autoclaim knows up to ${PG_SCHEMA_VERSION}`);
        if (v < PG_SCHEMA_VERSION) throw new StateError('STATE_TOO_OLD', `state database ${where} has schema version ${v}; a daemon migrates it to ${PG_SCHEMA_VERSION}`);
      } else {
        const applied = await migrate(client, where, { upgrade: opts.upgrade });
        if (applied > 0) opts.logger.info({ event: 'state.migrated', path: where, applied, version: PG_SCHEMA_VERSION }, 'state database migrated');
      }
    } finally {
      client.release();
    }
    return new PostgresStore(pool, where, opts);
  } catch (err) {
    await pool?.end().catch(() => undefined);
    throw toStateError(err, 'open', where);
  }
}

class PostgresStore implements Store {
  readonly schemaVersion = PG_SCHEMA_VERSION;
  private readonly clock: Clock;
  private readonly scrub: (t: string) => string;
  private readonly wallets: WalletTable;
  private readonly machine: StepMachine;
  private readonly fence: Fence | undefined;
  readonly reachability: Reachability;
  private readonly ownReachability: boolean;
  private closed = false;

  constructor(
    private readonly pool: Pool,
    readonly path: string,
    private readonly opts: PostgresStoreOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    const redactor = opts.redactor;
    this.scrub = redactor === undefined ? (t) => t : (t) => redactor.redact(t);
    this.fence = opts.fence;
    this.ownReachability = opts.reachability === undefined;
    this.reachability =
      opts.reachability ??
      new Reachability({ probe: async () => void (await pool.query('SELECT 1')), where: path, logger: opts.logger, clock: this.clock });
    this.wallets = new WalletTable(this.scrub);
    this.machine = new StepMachine(this.scrub);
  }

  /**
   * Runs `fn` on the pool, turning any failure that is not already ours into STATE_IO. Refused at
   * once while the database is known to be unreachable; each outcome tells the reachability.
   */
  private async io<T>(what: string, fn: (c: Sql) => Promise<T>): Promise<T> {
    if (this.closed) throw new StateError('STATE_IO', `state database ${this.path} is closed`);
    this.reachability.assertReachable();
    try {
      return await this.reachability.track(fn(this.pool));
    } catch (err) {
      throw toStateError(err, what, this.path);
    }
  }

  /** A write: `fn` in a transaction of its own. */
  private write<T>(what: string, fn: (c: Sql) => Promise<T>): Promise<T> {
    return this.io(what, () => transaction(this.pool, fn));
  }

  /**
   * Every write to steps, one path: in a transaction of its own, the plan's row locked (so the
   * transition, the plan's status and a concurrent writer of the plan see one order; SQLite gets
   * this from its single writer), the writer's lease checked (fence.ts), then the machine's
   * transition (../step-machine.ts). `wrote` names the steps as the transaction left them; a COMMIT
   * whose answer is lost is settled by reading those back (in-doubt.ts), never assumed. A plan
   * under a fence whose wallet this daemon does not lease is refused, or left alone with `unleased`.
   */
  private async stepWrite<T>(
    what: string,
    target: { stepId: number } | { planId: number },
    op: () => Op<T>,
    wrote: (out: T, read: <R>(op: Op<R>) => Promise<R>) => Promise<readonly StepRow[]>,
    unleased?: T,
  ): Promise<T> {
    let done: { out: T; steps: readonly StepRow[] } | undefined;
    try {
      return await this.write(what, async (c) => {
        const owner = 'stepId' in target ? await plans.lockPlanOfStep(c, target.stepId) : await plans.lockPlan(c, target.planId);
        if (owner === undefined) throw new StateError('STATE_NOT_FOUND', 'stepId' in target ? `no step ${target.stepId}` : `no plan ${target.planId}`);
        if (this.fence !== undefined) {
          if (unleased !== undefined && this.fence.tokenFor(owner.address) === undefined) return unleased;
          await checkLease(c, this.fence, owner.address);
        }
        const read = <R>(o: Op<R>): Promise<R> => runAsync(o, pgExec(c));
        const out = await read(op());
        done = { out, steps: await wrote(out, read) };
        return out;
      });
    } catch (err) {
      const doubt = err instanceof StateError ? err.cause : undefined;
      if (!(doubt instanceof CommitInDoubt) || done === undefined) throw err;
      const deadlineMs = 2 * (this.opts.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS);
      await settleInDoubt(what, doubt, done.steps, { pool: this.pool, where: this.path, logger: this.opts.logger, deadlineMs, monotonic: () => this.clock.monotonic() });
      return done.out;
    }
  }

  /** A transition of one step: what it wrote is the step it returns. */
  private transition(what: string, ref: StepRef, op: (m: StepMachine) => Op<StepRow>): Promise<StepRow> {
    return this.stepWrite(what, { stepId: stepRef(ref).id }, () => op(this.machine), (step) => Promise.resolve([step]));
  }

  /** A write to a plan's steps: what it wrote is read back from the plan, in the same transaction. */
  private planWrite<T>(what: string, planId: number, op: (m: StepMachine) => Op<T>): Promise<T> {
    return this.stepWrite(what, { planId }, () => op(this.machine), async (_, read) => (await read(this.machine.getPlan(planId)))?.steps ?? []);
  }

  recordPoll(wallet: string, address: string, at: number, result: PollResult): Promise<{ newEpoch: boolean }> {
    return this.write('recordPoll', (c) => this.wallets.record(c, this.fence, wallet, address, at, result));
  }
  walletStates(): Promise<WalletStateRow[]> {
    return this.io('walletStates', (c) => this.wallets.all(c));
  }
  walletState(address: string): Promise<WalletStateRow | undefined> {
    return this.io('walletState', (c) => this.wallets.get(c, address));
  }
  async lastEpoch(address: string): Promise<string | undefined> {
    return (await this.io('lastEpoch', (c) => this.wallets.get(c, address)))?.epoch ?? undefined;
  }
  pollView(address: string, sinceMs: number, epoch: string): Promise<PollView> {
    return this.io('pollView', async (c) => pollViewFromRows((await c.query<PollViewRow>(POLL_VIEW_SQL, [address, sinceMs, epoch])).rows));
  }

  async insertPlan(draft: PlanDraft, opts: Omit<InsertPlanOptions, 'now'> & { now?: number }): Promise<PlanWithSteps | undefined> {
    const now = opts.now ?? this.clock.now();
    if (draft.steps.length === 0) throw new StateError('STATE_INVALID', `plan for rule ${draft.rule} has no steps`);
    // Refused before touching the database when the lease is not even believed held.
    if (this.fence !== undefined) tokenOrThrow(this.fence, draft.address);
    return this.write('insertPlan', async (c) => {
      if (this.fence !== undefined) await checkLease(c, this.fence, draft.address);
      return plans.insertPlan(c, draft, { ...opts, now });
    });
  }
  planHistory(address: string, sinceMs: number, epoch?: string): Promise<PlanHistoryEntry[]> {
    return this.io('planHistory', (c) => plans.planHistory(c, address, sinceMs, epoch));
  }
  openPlans(address?: string): Promise<PlanWithSteps[]> {
    return this.io('openPlans', (c) => plans.openPlans(c, address));
  }
  activePlans(address: string): Promise<PlanWithSteps[]> {
    return this.io('activePlans', (c) => plans.activePlans(c, address));
  }
  latestRulePlans(): Promise<RulePlan[]> {
    return this.io('latestRulePlans', (c) => plans.latestRulePlans(c));
  }
  planByManualId(id: string): Promise<PlanWithSteps | undefined> {
    return this.io('planByManualId', (c) => plans.planByManualId(c, id));
  }
  getPlan(id: number): Promise<PlanWithSteps | undefined> {
    return this.io('getPlan', (c) => plans.getPlan(c, id));
  }
  listPlans(q: ListPlansQuery = {}): Promise<PlanWithSteps[]> {
    return this.io('listPlans', (c) => plans.listPlans(c, q));
  }
  getStep(id: number): Promise<StepRow | undefined> {
    return this.io('getStep', (c) => steps.getStep(c, id));
  }
  stepAttempts(stepId: number): Promise<AttemptRow[]> {
    return this.io('stepAttempts', (c) => steps.stepAttempts(c, stepId));
  }

  markSending(stepId: number, request: StoredRequest, now = this.clock.now()): Promise<StepRow> {
    return this.transition('markSending', stepId, (m) => m.markSending(stepId, request, now));
  }
  recordSigned(stepId: StepRef, request: StoredRequest, now = this.clock.now()): Promise<StepRow> {
    return this.transition('recordSigned', stepId, (m) => m.recordSigned(stepId, request, now));
  }
  markAcknowledged(stepId: StepRef, res: ResponseRecord & ClaimedRecord, now = this.clock.now()): Promise<StepRow> {
    return this.transition('markAcknowledged', stepId, (m) => m.markAcknowledged(stepId, res, now));
  }
  recordClaimed(stepId: number, lamports: Lamports, now = this.clock.now()): Promise<StepRow> {
    return this.transition('recordClaimed', stepId, (m) => m.recordClaimed(stepId, lamports, now));
  }
  markRejected(stepId: StepRef, res: ResponseRecord & { error: string }, now = this.clock.now()): Promise<StepRow> {
    return this.transition('markRejected', stepId, (m) => m.markRejected(stepId, res, now));
  }
  markFailed(stepId: StepRef, res: ResponseRecord & { error: string }, now = this.clock.now()): Promise<StepRow> {
    return this.transition('markFailed', stepId, (m) => m.markFailed(stepId, res, now));
  }
  markUnknown(stepId: StepRef, res: ResponseRecord & { error: string }, now = this.clock.now()): Promise<StepRow> {
    return this.transition('markUnknown', stepId, (m) => m.markUnknown(stepId, res, now));
  }
  markNotSent(stepId: StepRef, error: string, now = this.clock.now()): Promise<StepRow> {
    return this.transition('markNotSent', stepId, (m) => m.markNotSent(stepId, error, now));
  }
  markRefused(stepId: number, error: string, now = this.clock.now()): Promise<StepRow> {
    return this.transition('markRefused', stepId, (m) => m.markRefused(stepId, error, now));
  }
  reconcile(stepId: StepRef, applied: boolean, opts: { claimedLamports?: Lamports; note: string }, now = this.clock.now()): Promise<StepRow> {
    return this.transition('reconcile', stepId, (m) => m.reconcile(stepId, applied, opts, now));
  }
  holdForOperator(stepId: StepRef, note: string, now = this.clock.now()): Promise<StepRow> {
    return this.transition('holdForOperator', stepId, (m) => m.holdForOperator(stepId, note, now));
  }
  resolve(stepId: StepRef, applied: boolean, note: string, now = this.clock.now()): Promise<StepRow> {
    return this.transition('resolve', stepId, (m) => m.resolve(stepId, applied, note, now));
  }
  setStepAmount(stepId: number, lamports: Lamports, now = this.clock.now()): Promise<StepRow> {
    return this.transition('setStepAmount', stepId, (m) => m.setAmount(stepId, lamports, now));
  }
  skipRemaining(planId: number, reason: string, now = this.clock.now()): Promise<number> {
    return this.planWrite('skipRemaining', planId, (m) => m.skipRemaining(planId, reason, now));
  }
  cancelPlan(planId: number, by: string, now = this.clock.now()): Promise<PlanWithSteps> {
    return this.planWrite('cancelPlan', planId, (m) => m.cancelPlan(planId, by, now));
  }
  finishPlan(planId: number, now = this.clock.now()): Promise<PlanStatus> {
    return this.planWrite('finishPlan', planId, (m) => m.finishPlan(planId, now));
  }

  /**
   * Steps left `sending` (by a crash, or by a daemon whose lease this one took over) become
   * unknown; of one wallet when `address` is given. Under a fence only wallets leased now are
   * touched, each in a fenced transaction of its own. Steps in `except` are in flight in this
   * process right now, and are left alone (the per-turn recovery).
   */
  async recoverInFlight(now = this.clock.now(), address?: string, except?: ReadonlySet<number>): Promise<StepRow[]> {
    const skip = (s: StepRow): boolean => except?.has(s.id) === true;
    const sending = (await this.io('recoverInFlight', (c) => steps.stepsInState(c, 'sending', address))).filter((s) => !skip(s));
    // Asked at every wallet turn: nothing to recover is one read.
    if (sending.length === 0) return [];
    const byPlan = new Map<number, Set<number>>();
    for (const s of sending) byPlan.set(s.planId, (byPlan.get(s.planId) ?? new Set()).add(s.id));
    const out: StepRow[] = [];
    for (const [planId, ids] of byPlan) {
      // Another daemon may have settled one meanwhile: only those still sending are turned.
      const recovered = await this.stepWrite('recoverInFlight', { planId }, () => this.machine.recoverSending(ids, IN_FLIGHT_ERROR, now), (rows) => Promise.resolve(rows), []);
      out.push(...recovered);
    }
    return out.sort((a, b) => a.id - b.id);
  }
  lastRequestTs(address: string): Promise<number | undefined> {
    return this.io('lastRequestTs', (c) => steps.lastRequestTs(c, address));
  }
  requestTsFrom(address: string, fromTs: number, limit: number): Promise<number[]> {
    return this.io('requestTsFrom', (c) => steps.requestTsFrom(c, address, fromTs, limit));
  }
  claimInDoubt(address: string, exceptStepId?: number): Promise<boolean> {
    return this.io('claimInDoubt', (c) => steps.claimInDoubt(c, address, exceptStepId));
  }
  hasUnknownSignedStep(address: string): Promise<boolean> {
    return this.io('hasUnknownSignedStep', (c) => steps.hasUnknownSigned(c, address));
  }
  /** The database's clock: every daemon of the cluster reads the same one (clock_timestamp(), not the transaction's now()). */
  clockNow(): Promise<number> {
    return this.io('clockNow', async (c) => {
      const r = await c.query<{ ms: string }>('SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint::text AS ms');
      return Number(r.rows[0]?.ms);
    });
  }
  unknownSteps(): Promise<StepRow[]> {
    return this.io('unknownSteps', (c) => steps.stepsInState(c, 'unknown'));
  }

  outboxAdd(draft: OutboxDraft, now = this.clock.now()): Promise<boolean> {
    return this.io('outboxAdd', (c) => outbox.outboxAdd(c, { ...draft, body: this.scrub(draft.body) }, now));
  }
  outboxClaim(channel: string, now: number, limit: number, claimUntil: number): Promise<OutboxRow[]> {
    return this.io('outboxClaim', (c) => outbox.outboxClaim(c, channel, now, limit, claimUntil));
  }
  outboxDelivered(ids: readonly number[]): Promise<void> {
    return this.io('outboxDelivered', (c) => outbox.outboxDelivered(c, ids));
  }
  outboxRetry(ids: readonly number[], nextAt: number, error: string): Promise<void> {
    return this.io('outboxRetry', (c) => outbox.outboxRetry(c, ids, nextAt, this.scrub(error)));
  }
  outboxExpire(channel: string, now: number): Promise<OutboxRow[]> {
    return this.io('outboxExpire', (c) => outbox.outboxExpire(c, channel, now));
  }

  integrityCheck(): Promise<string> {
    return this.io('integrityCheck', (c) => diagnostics.integrityCheck(c));
  }

  probeWrite(): Promise<void> {
    return this.io('probeWrite', () => diagnostics.probeWrite(this.pool));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownReachability) this.reachability.close();
    await endPool(this.pool);
  }
}
