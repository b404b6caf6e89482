// plans and the step rows they own, in PostgreSQL: recording a plan before anything is signed
// (SPEC §2), reading plans back, and locking a plan's row for a write (the step machine,
// ../step-machine.ts, makes the write). The same statements as sqlite/plans.ts; each takes the connection it runs on (the pool for a read, a transaction's
// client for a write).
import type { PlanDraft, PlanHistoryEntry } from '../../domain.js';
import { StateError } from '../../errors.js';
import { historyFromRaw, historyPlanIds, LATEST_RULE_PLANS_SQL, historyStepColumns, lamportsText, planFromRaw, stepColumns, stepFromRaw } from '../codecs.js';
import { DEFAULT_LIST_LIMIT, type InsertPlanOptions, type ListPlansQuery } from '../port.js';
import type { PlanWithSteps, RawHistory, RawPlan, RawStep, RulePlan } from '../rows.js';
import type { Sql } from './db.js';


/** Records a plan and all its steps (in the caller's transaction); undefined when its key exists. */
export async function insertPlan(c: Sql, draft: PlanDraft, opts: InsertPlanOptions): Promise<PlanWithSteps | undefined> {
  const r = await c.query<RawPlan>(
    `INSERT INTO plans (wallet, address, rule, epoch, seq, dry, status, estimate_lamports, reason, manual_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
     ON CONFLICT DO NOTHING
     RETURNING *`,
    [
      draft.wallet,
      draft.address,
      draft.rule,
      draft.epoch,
      draft.seq,
      opts.dry ? 1 : 0,
      opts.dry ? 'dry' : 'open',
      lamportsText(draft.estimateLamports, 'estimate'),
      opts.reason,
      draft.manualId ?? null,
      opts.now,
    ],
  );
  const plan = r.rows[0];
  if (plan === undefined) return undefined;
  const cols = draft.steps.map(stepColumns);
  // One statement for every step: a plan is written in as few round trips as it can be.
  await c.query(
    `INSERT INTO steps (plan_id, idx, kind, symbol, amount_spec, amount_lamports, state, resolution, created_at, updated_at)
     SELECT $1, s.idx, s.kind, s.symbol, s.spec, s.lamports::numeric, $2, $3, $4, $4
     FROM unnest($5::int[], $6::text[], $7::text[], $8::text[], $9::text[]) AS s(idx, kind, symbol, spec, lamports)`,
    [
      plan.id,
      opts.dry ? 'skipped' : 'planned',
      opts.dry ? 'dry run' : null,
      opts.now,
      cols.map((_, i) => i),
      cols.map((s) => s.kind),
      cols.map((s) => s.symbol),
      cols.map((s) => s.spec),
      cols.map((s) => s.lamports),
    ],
  );
  return getPlan(c, plan.id);
}

export async function getPlan(c: Sql, id: number): Promise<PlanWithSteps | undefined> {
  const r = await c.query<RawPlan>('SELECT * FROM plans WHERE id = $1', [id]);
  return (await withSteps(c, r.rows))[0];
}

/** Each rule id's newest plan (one-off sends left out); read at start and reload, and at a turn after a read that failed. */
export async function latestRulePlans(c: Sql): Promise<RulePlan[]> {
  const r = await c.query<RawPlan & { has_real: number }>(LATEST_RULE_PLANS_SQL);
  return (await withSteps(c, r.rows)).map((p, i) => ({ ...p, hasRealPlans: r.rows[i]?.has_real === 1 }));
}

/** The plan of a one-off `send --id ID`, if that id was ever used. */
export async function planByManualId(c: Sql, id: string): Promise<PlanWithSteps | undefined> {
  const r = await c.query<RawPlan>('SELECT * FROM plans WHERE manual_id = $1', [id]);
  return (await withSteps(c, r.rows))[0];
}

/** Plans still to be worked on (not dry), oldest first. */
export async function openPlans(c: Sql, address?: string): Promise<PlanWithSteps[]> {
  const r = await c.query<RawPlan>(
    "SELECT * FROM plans WHERE status = 'open' AND dry = 0 AND ($1::text IS NULL OR address = $1) ORDER BY id",
    [address ?? null],
  );
  return withSteps(c, r.rows);
}

/** Plans of this address with work left: open, or blocked on an unknown step. */
export async function activePlans(c: Sql, address: string): Promise<PlanWithSteps[]> {
  const r = await c.query<RawPlan>(
    "SELECT * FROM plans WHERE status IN ('open', 'blocked') AND dry = 0 AND address = $1 ORDER BY id",
    [address],
  );
  return withSteps(c, r.rows);
}

export async function listPlans(c: Sql, q: ListPlansQuery): Promise<PlanWithSteps[]> {
  const limit = q.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) throw new StateError('STATE_INVALID', `limit must be a positive integer`);
  const r = await c.query<RawPlan>(
    `SELECT * FROM plans p
     WHERE ($1::text IS NULL OR p.address = $1)
       AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM steps s WHERE s.plan_id = p.id AND s.state = $2))
     ORDER BY p.id DESC
     LIMIT $3`,
    [q.address ?? null, q.state ?? null, limit],
  );
  return withSteps(c, r.rows);
}

/** Plans of this address created at or after `sinceMs`, or belonging to `epoch`, oldest first. */
export async function planHistory(c: Sql, address: string, sinceMs: number, epoch?: string): Promise<PlanHistoryEntry[]> {
  const r = await c.query<RawHistory>(
    `SELECT p.id, p.rule, p.epoch, p.seq, p.created_at, p.dry, p.status, p.estimate_lamports, p.claimed_lamports,
       ${historyStepColumns('p')}
     FROM plans p
     WHERE p.id IN (${historyPlanIds('$1', '$2', '$3')})
     ORDER BY p.id`,
    [address, sinceMs, epoch ?? null],
  );
  return r.rows.map(historyFromRaw);
}

/**
 * Locks a plan's row for the caller's transaction and says whose it is, so the transition that
 * follows, the plan's status and any concurrent writer of the same plan see one order (SQLite gets
 * this from its single writer). FOR NO KEY UPDATE: inserting rows that reference the plan still may.
 */
export async function lockPlan(c: Sql, planId: number): Promise<{ address: string } | undefined> {
  const r = await c.query<{ address: string }>('SELECT address FROM plans WHERE id = $1 FOR NO KEY UPDATE', [planId]);
  return r.rows[0];
}

/** The same, found through one of its steps. */
export async function lockPlanOfStep(c: Sql, stepId: number): Promise<{ planId: number; address: string } | undefined> {
  const r = await c.query<{ plan_id: number; address: string }>(
    'SELECT p.id AS plan_id, p.address FROM steps s JOIN plans p ON p.id = s.plan_id WHERE s.id = $1 FOR NO KEY UPDATE OF p',
    [stepId],
  );
  const row = r.rows[0];
  return row === undefined ? undefined : { planId: row.plan_id, address: row.address };
}

/** Plans with their steps, in two queries whatever their number. */
async function withSteps(c: Sql, plans: RawPlan[]): Promise<PlanWithSteps[]> {
  if (plans.length === 0) return [];
  const r = await c.query<RawStep>('SELECT * FROM steps WHERE plan_id = ANY($1::bigint[]) ORDER BY plan_id, idx', [plans.map((p) => p.id)]);
  const byPlan = new Map<number, RawStep[]>();
  for (const s of r.rows) {
    const list = byPlan.get(s.plan_id);
    if (list === undefined) byPlan.set(s.plan_id, [s]);
    else list.push(s);
  }
  return plans.map((p) => ({ ...planFromRaw(p), steps: (byPlan.get(p.id) ?? []).map(stepFromRaw) }));
}
