// The PostgreSQL adapter of the store port (port.ts): shared state for several daemons. Every
// method answers with a promise; every write is one transaction on a connection of its own that
// first locks the plan's row, then (with a fence) checks the writer's lease on the wallet in the
// same transaction, then makes one guarded transition. Every failure is a StateError, so a caller
// that cannot record cannot send (fail closed). The buffered poll records are written before any
// plan or step write, any read of wallet_state, and close, as with SQLite.
import type { Pool } from 'pg';
import type { Lamports } from '../../amount.js';
import { systemClock, type Clock, type PlanDraft, type PlanHistoryEntry, type PlanStatus } from '../../domain.js';
import { StateError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { IN_FLIGHT_ERROR } from '../plan-status.js';
import { storePollWriteOptions, type PollWriteOptions } from '../poll-writes.js';
import type { InsertPlanOptions, ListPlansQuery, PollResult, ResponseRecord, Store, StorePragmas } from '../port.js';
import type { AttemptRow, OutboxDraft, OutboxRow, PlanWithSteps, StepRow, StoredRequest, WalletStateRow } from '../rows.js';
import * as outbox from './outbox.js';
import { openPool, redactUrl, toStateError, transaction, type Sql } from './db.js';
import { checkLease, tokenOrThrow, type Fence } from './fence.js';
import { currentVersion, migrate, PG_SCHEMA_VERSION } from './migrations.js';
import * as plans from './plans.js';
import { AsyncPollWrites } from './poll-writes.js';
import * as steps from './steps.js';
import { StepWrites } from './steps.js';
import { WalletTable } from './wallets.js';

export type { Fence } from './fence.js';

export interface PostgresStoreOptions {
  logger: Logger;
  clock?: Clock;
  /** Read by the caller (PGPASSWORD, state.password_file, the credential); never in the URL. */
  password?: string;
  /** For `status` / `actions` beside running daemons: no migration, and the server refuses writes. */
  readonly?: boolean;
  /** Lock waits and connection set-up, ms; default 5000. */
  busyTimeoutMs?: number;
  /** Scrubs free text (requests, responses, errors, summaries) before it is stored. */
  redactor?: { redact(text: string): string };
  pollWrites?: Omit<PollWriteOptions, 'onTimerError'>;
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
    pool = await openPool(url, { password: opts.password, readonly: opts.readonly, busyTimeoutMs: opts.busyTimeoutMs });
    const client = await pool.connect();
    try {
      if (opts.readonly === true) {
        const v = await currentVersion(client);
        if (v === 0) throw new StateError('STATE_MISSING', `no autoclaim state in ${where} (has a daemon run with this state.url?)`);
        if (v > PG_SCHEMA_VERSION) throw new StateError('STATE_TOO_NEW', `state database ${where} has schema version ${v}; this autoclaim knows up to ${PG_SCHEMA_VERSION}`);
        if (v < PG_SCHEMA_VERSION) throw new StateError('STATE_TOO_OLD', `state database ${where} has schema version ${v}; a daemon migrates it to ${PG_SCHEMA_VERSION}`);
      } else {
        const applied = await migrate(client, where);
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
  private readonly polls: AsyncPollWrites;
  private readonly fence: Fence | undefined;
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
    this.wallets = new WalletTable(this.scrub);
    this.polls = new AsyncPollWrites(
      {
        okRow: (w, a, at, s) => this.wallets.okRow(w, a, at, s),
        failedRow: (w, a, at, e) => this.wallets.failedRow(w, a, at, e),
        epochSeen: (a, e) => this.wallets.epochSeen(this.pool, a, e),
        write: (batch) => transaction(this.pool, (c) => this.wallets.write(c, batch, this.fence)),
      },
      storePollWriteOptions(opts, opts.logger, (err) => toStateError(err, 'write poll records', path).message),
    );
  }

  /** Runs `fn` on the pool, turning any failure that is not already ours into STATE_IO. */
  private async io<T>(what: string, fn: (c: Sql) => Promise<T>): Promise<T> {
    if (this.closed) throw new StateError('STATE_IO', `state database ${this.path} is closed`);
    try {
      return await fn(this.pool);
    } catch (err) {
      throw toStateError(err, what, this.path);
    }
  }

  /** A write: the buffered poll records first, then `fn` in a transaction of its own. */
  private async write<T>(what: string, fn: (c: Sql) => Promise<T>): Promise<T> {
    await this.flushPolls();
    return this.io(what, () => transaction(this.pool, fn));
  }

  /** A write to one step: its plan's row locked, the lease checked, then the transition. */
  private stepWrite<T>(what: string, stepId: number, fn: (w: StepWrites) => Promise<T>): Promise<T> {
    return this.write(what, async (c) => {
      const owner = await plans.lockPlanOfStep(c, stepId);
      if (owner === undefined) throw new StateError('STATE_NOT_FOUND', `no step ${stepId}`);
      if (this.fence !== undefined) await checkLease(c, this.fence, owner.address);
      return fn(new StepWrites(c, this.scrub));
    });
  }

  /** A write to one plan, locked and fenced the same way. */
  private planWrite<T>(what: string, planId: number, fn: (c: Sql) => Promise<T>): Promise<T> {
    return this.write(what, async (c) => {
      const owner = await plans.lockPlan(c, planId);
      if (owner === undefined) throw new StateError('STATE_NOT_FOUND', `no plan ${planId}`);
      if (this.fence !== undefined) await checkLease(c, this.fence, owner.address);
      return fn(c);
    });
  }

  async recordPoll(wallet: string, address: string, at: number, result: PollResult): Promise<{ newEpoch: boolean }> {
    if (this.closed) throw new StateError('STATE_IO', `state database ${this.path} is closed`);
    try {
      return await this.polls.record(wallet, address, at, result);
    } catch (err) {
      throw toStateError(err, 'recordPoll', this.path);
    }
  }
  async flushPolls(): Promise<void> {
    try {
      await this.polls.flush();
    } catch (err) {
      throw toStateError(err, 'write poll records', this.path);
    }
  }
  async walletStates(): Promise<WalletStateRow[]> {
    await this.flushPolls();
    return this.io('walletStates', (c) => this.wallets.all(c));
  }
  async walletState(address: string): Promise<WalletStateRow | undefined> {
    await this.flushPolls();
    return this.io('walletState', (c) => this.wallets.get(c, address));
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
    return this.stepWrite('markSending', stepId, (w) => w.markSending(stepId, request, now));
  }
  markAcknowledged(stepId: number, res: ResponseRecord & { claimedLamports?: Lamports }, now = this.clock.now()): Promise<StepRow> {
    return this.stepWrite('markAcknowledged', stepId, (w) => w.markAcknowledged(stepId, res, now));
  }
  markRejected(stepId: number, res: ResponseRecord & { error: string }, now = this.clock.now()): Promise<StepRow> {
    return this.stepWrite('markRejected', stepId, (w) => w.markRejected(stepId, res, now));
  }
  markFailed(stepId: number, res: ResponseRecord & { error: string }, now = this.clock.now()): Promise<StepRow> {
    return this.stepWrite('markFailed', stepId, (w) => w.markFailed(stepId, res, now));
  }
  markUnknown(stepId: number, res: ResponseRecord & { error: string }, now = this.clock.now()): Promise<StepRow> {
    return this.stepWrite('markUnknown', stepId, (w) => w.markUnknown(stepId, res, now));
  }
  markNotSent(stepId: number, error: string, now = this.clock.now()): Promise<StepRow> {
    return this.stepWrite('markNotSent', stepId, (w) => w.markNotSent(stepId, error, now));
  }
  markRefused(stepId: number, error: string, now = this.clock.now()): Promise<StepRow> {
    return this.stepWrite('markRefused', stepId, (w) => w.markRefused(stepId, error, now));
  }
  reconcile(stepId: number, applied: boolean, opts: { claimedLamports?: Lamports; note: string }, now = this.clock.now()): Promise<StepRow> {
    return this.stepWrite('reconcile', stepId, (w) => w.reconcile(stepId, applied, opts, now));
  }
  resolve(stepId: number, applied: boolean, note: string, now = this.clock.now()): Promise<StepRow> {
    return this.stepWrite('resolve', stepId, (w) => w.resolve(stepId, applied, note, now));
  }
  setStepAmount(stepId: number, lamports: Lamports, now = this.clock.now()): Promise<StepRow> {
    return this.stepWrite('setStepAmount', stepId, (w) => w.setAmount(stepId, lamports, now));
  }
  skipRemaining(planId: number, reason: string, now = this.clock.now()): Promise<number> {
    return this.planWrite('skipRemaining', planId, (c) => new StepWrites(c, this.scrub).skipRemaining(planId, reason, now));
  }
  finishPlan(planId: number, now = this.clock.now()): Promise<PlanStatus> {
    return this.planWrite('finishPlan', planId, (c) => plans.finishPlan(c, planId, now));
  }

  /**
   * Steps left `sending` (by a crash, or by a daemon whose lease this one took over) become
   * unknown; of one wallet when `address` is given. Under a fence only wallets leased now are
   * touched, each in a fenced transaction of its own.
   */
  async recoverInFlight(now = this.clock.now(), address?: string): Promise<StepRow[]> {
    await this.flushPolls();
    const sending = await this.io('recoverInFlight', (c) => steps.stepsInState(c, 'sending', address));
    const out: StepRow[] = [];
    const byPlan = new Map<number, number[]>();
    for (const s of sending) byPlan.set(s.planId, [...(byPlan.get(s.planId) ?? []), s.id]);
    for (const [planId, ids] of byPlan) {
      const recovered = await this.write('recoverInFlight', async (c) => {
        const owner = await plans.lockPlan(c, planId);
        if (owner === undefined) return [];
        if (this.fence !== undefined) {
          if (this.fence.tokenFor(owner.address) === undefined) return [];
          await checkLease(c, this.fence, owner.address);
        }
        const w = new StepWrites(c, this.scrub);
        const rows: StepRow[] = [];
        // Another daemon may have settled one meanwhile: only those still sending are turned.
        const still = await steps.stepsInState(c, 'sending', owner.address);
        for (const s of still) if (ids.includes(s.id)) rows.push(await w.recover(s.id, IN_FLIGHT_ERROR, now));
        return rows;
      });
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

  /**
   * SQLite's names, PostgreSQL's nearest equivalents: journalMode is wal_level (PostgreSQL always
   * logs ahead), synchronous 2 when synchronous_commit is on (a commit waits for its WAL flush,
   * SQLite's FULL) and 1 otherwise, foreign keys are always enforced, busyTimeoutMs is lock_timeout,
   * userVersion the schema version.
   */
  pragmas(): Promise<StorePragmas> {
    return this.io('pragmas', async (c) => {
      const r = await c.query<{ wal: string; sync: string; lock: string; version: number | null }>(
        `SELECT current_setting('wal_level') AS wal, current_setting('synchronous_commit') AS sync,
                (SELECT setting FROM pg_settings WHERE name = 'lock_timeout') AS lock,
                (SELECT max(version) FROM autoclaim_schema) AS version`,
      );
      const row = r.rows[0];
      return {
        journalMode: row?.wal ?? 'unknown',
        synchronous: row?.sync === 'off' || row?.sync === 'local' ? 1 : 2,
        foreignKeys: true,
        busyTimeoutMs: Number(row?.lock ?? 0),
        userVersion: row?.version ?? 0,
      };
    });
  }

  /**
   * PostgreSQL has no integrity_check; the nearest cheap question is whether every table of the
   * schema is there and readable and the schema version is the one this build knows: 'ok' or why not.
   */
  integrityCheck(): Promise<string> {
    return this.io('integrityCheck', async (c) => {
      const problems: string[] = [];
      for (const t of ['wallet_state', 'epochs_seen', 'plans', 'steps', 'attempts', 'daemons', 'leases', 'outbox']) {
        const r = await c.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [t]);
        if (r.rows[0]?.t == null) problems.push(`table ${t} is missing`);
        else await c.query(`SELECT 1 FROM ${t} LIMIT 1`);
      }
      const v = await currentVersion(c);
      if (v !== PG_SCHEMA_VERSION) problems.push(`schema version is ${v}, not ${PG_SCHEMA_VERSION}`);
      return problems.length === 0 ? 'ok' : problems.join('\n');
    });
  }

  /** A write that goes through now: a row written in a transaction that is rolled back. */
  probeWrite(): Promise<void> {
    return this.io('probeWrite', async () => {
      const client = await this.pool.connect();
      try {
        await client.query('BEGIN');
        try {
          await client.query("INSERT INTO epochs_seen (address, epoch, first_seen_at) VALUES ('', '', 0) ON CONFLICT DO NOTHING");
        } finally {
          await client.query('ROLLBACK');
        }
      } finally {
        client.release();
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flushPolls();
    } catch (err) {
      this.opts.logger.error(
        { event: 'state.poll_write_failed', err: err instanceof Error ? err.message : String(err), buffered: this.polls.buffered },
        'poll records could not be written before closing; they are lost',
      );
      this.polls.discard();
    }
    this.closed = true;
    await this.pool.end().catch(() => undefined);
  }
}
