// plans and the step rows they own: recording a plan before anything is signed (SPEC §2) and
// reading plans back. What changes a plan's steps, and its status, is the step machine (../step-machine.ts).
import type { PlanDraft, PlanHistoryEntry } from '../../domain.js';
import { StateError } from '../../errors.js';
import { historyFromRaw, historyPlanIds, LATEST_RULE_PLANS_SQL, historyStepColumns, lamportsText, planFromRaw, stepColumns, stepFromRaw } from '../codecs.js';
import type { Db } from './db.js';
import { DEFAULT_LIST_LIMIT, type InsertPlanOptions, type ListPlansQuery } from '../port.js';
import type { PlanWithSteps, RawHistory, RawPlan, RawStep, RulePlan } from '../rows.js';

export class PlanRepo {
  private readonly insertPlanStmt;
  private readonly insertStepStmt;
  private readonly selectPlan;
  private readonly selectManual;
  private readonly selectSteps;
  private readonly selectOpen;
  private readonly selectActive;
  private readonly selectList;
  private readonly selectHistory;
  private readonly insertTx;

  constructor(private readonly db: Db) {
    this.insertPlanStmt = db.prepare<Record<string, unknown>, RawPlan>(`
      INSERT INTO plans (wallet, address, rule, epoch, seq, dry, status, estimate_lamports, reason, manual_id, created_at, updated_at)
      VALUES (@wallet, @address, @rule, @epoch, @seq, @dry, @status, @estimate, @reason, @manualId, @now, @now)
      ON CONFLICT DO NOTHING
      RETURNING *`);
    this.insertStepStmt = db.prepare<Record<string, unknown>>(`
      INSERT INTO steps (plan_id, idx, kind, symbol, amount_spec, amount_lamports, state, resolution, created_at, updated_at)
      VALUES (@planId, @idx, @kind, @symbol, @spec, @lamports, @state, @resolution, @now, @now)`);
    this.selectPlan = db.prepare<[number], RawPlan>('SELECT * FROM plans WHERE id = ?');
    this.selectManual = db.prepare<[string], RawPlan>('SELECT * FROM plans WHERE manual_id = ?');
    this.selectSteps = db.prepare<[number], RawStep>('SELECT * FROM steps WHERE plan_id = ? ORDER BY idx');
    this.selectOpen = db.prepare<{ address: string | null }, RawPlan>(
      "SELECT * FROM plans WHERE status = 'open' AND dry = 0 AND (@address IS NULL OR address = @address) ORDER BY id",
    );
    this.selectActive = db.prepare<[string], RawPlan>(
      "SELECT * FROM plans WHERE status IN ('open', 'blocked') AND dry = 0 AND address = ? ORDER BY id",
    );
    this.selectList = db.prepare<Record<string, unknown>, RawPlan>(`
      SELECT * FROM plans p
      WHERE (@address IS NULL OR p.address = @address)
        AND (@state IS NULL OR EXISTS (SELECT 1 FROM steps s WHERE s.plan_id = p.id AND s.state = @state))
      ORDER BY p.id DESC
      LIMIT @limit`);
    this.selectHistory = db.prepare<Record<string, unknown>, RawHistory>(`
      SELECT p.id, p.rule, p.epoch, p.seq, p.created_at, p.dry, p.status, p.estimate_lamports, p.claimed_lamports,
        ${historyStepColumns('p')}
      FROM plans p
      WHERE p.id IN (${historyPlanIds('@address', '@since', '@epoch')})
      ORDER BY p.id`);
    this.insertTx = db.transaction((draft: PlanDraft, opts: InsertPlanOptions) => this.insertInTx(draft, opts));
  }

  /** Records a plan and all its steps at once; undefined when this (address, rule, epoch, seq, dry) exists. */
  insert(draft: PlanDraft, opts: InsertPlanOptions): PlanWithSteps | undefined {
    if (draft.steps.length === 0) throw new StateError('STATE_INVALID', `plan for rule ${draft.rule} has no steps`);
    return this.insertTx.immediate(draft, opts);
  }

  private insertInTx(draft: PlanDraft, opts: InsertPlanOptions): PlanWithSteps | undefined {
    const plan = this.insertPlanStmt.get({
      wallet: draft.wallet,
      address: draft.address,
      rule: draft.rule,
      epoch: draft.epoch,
      seq: draft.seq,
      dry: opts.dry ? 1 : 0,
      status: opts.dry ? 'dry' : 'open',
      estimate: lamportsText(draft.estimateLamports, 'estimate'),
      reason: opts.reason,
      manualId: draft.manualId ?? null,
      now: opts.now,
    });
    if (plan === undefined) return undefined;
    draft.steps.forEach((spec, idx) => {
      this.insertStepStmt.run({
        planId: plan.id,
        idx,
        ...stepColumns(spec),
        state: opts.dry ? 'skipped' : 'planned',
        resolution: opts.dry ? 'dry run' : null,
        now: opts.now,
      });
    });
    return this.get(plan.id);
  }

  get(id: number): PlanWithSteps | undefined {
    const r = this.selectPlan.get(id);
    return r === undefined ? undefined : this.withSteps(r);
  }

  /** Each rule id's newest plan (one-off sends left out); read at start and reload, and at a turn after a read that failed. */
  latestPerRule(): RulePlan[] {
    return this.db
      .prepare<[], RawPlan & { has_real: number }>(LATEST_RULE_PLANS_SQL)
      .all()
      .map((r) => ({ ...this.withSteps(r), hasRealPlans: r.has_real === 1 }));
  }

  /** The plan of a one-off `send --id ID`, if that id was ever used. */
  byManualId(id: string): PlanWithSteps | undefined {
    const r = this.selectManual.get(id);
    return r === undefined ? undefined : this.withSteps(r);
  }

  /** Plans still to be worked on (not dry), oldest first. */
  open(address?: string): PlanWithSteps[] {
    return this.selectOpen.all({ address: address ?? null }).map((r) => this.withSteps(r));
  }

  /** Plans of this address with work left: open, or blocked on an unknown step. */
  active(address: string): PlanWithSteps[] {
    return this.selectActive.all(address).map((r) => this.withSteps(r));
  }

  list(q: ListPlansQuery): PlanWithSteps[] {
    const limit = q.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1) throw new StateError('STATE_INVALID', `limit must be a positive integer`);
    return this.selectList
      .all({ address: q.address ?? null, state: q.state ?? null, limit })
      .map((r) => this.withSteps(r));
  }

  /** Plans of this address created at or after `sinceMs`, or belonging to `epoch`, or with a request sent since `sinceMs` (codecs.ts movedSince), oldest first. */
  history(address: string, sinceMs: number, epoch?: string): PlanHistoryEntry[] {
    return this.selectHistory.all({ address, since: sinceMs, epoch: epoch ?? null }).map(historyFromRaw);
  }

  private withSteps(r: RawPlan): PlanWithSteps {
    return { ...planFromRaw(r), steps: this.selectSteps.all(r.id).map(stepFromRaw) };
  }
}
