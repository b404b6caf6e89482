// `autoclaim prune`: deletes settled history older than a cutoff from the state file, and never a
// row the exactly-once guards read. Each rule below is one reader's, named where it reads:
//
// - open, blocked or unknown plans, and any plan with a step planned, sending or unknown: the work
//   left (openPlans, activePlans, recoverInFlight), the claim in doubt and the unknown signed step
//   (poll-view.ts), `actions resolve`. Only plans `done`, `rejected`, `failed` or `dry` whose every
//   step is settled go.
// - plans recorded or updated since the cutoff: the rules' history (codecs.ts historyPlanIds: created
//   since, or updated since and moved). The command refuses a cutoff inside the rules' lookback
//   (rules/limits.ts historyLookbackMs: the rolling day, or the longest cooldown).
// - the plans of the address's two epochs first seen last (the current and the previous), and of the
//   epoch of its last good poll: the history's `epoch =` branch, once_per_epoch and the next seq of
//   a rule in its epoch (rules/decide.ts). An older epoch is not polled again: an epoch going back
//   is refused before anything is recorded (executor/epoch-check.ts). By when they were first seen,
//   not by their text: an epoch recorded ahead of the calendar (the sandbox's fast epochs, before
//   the real API) sorts after the real current one, and would have pushed it out.
// - each wallet's newest plan of each rule, dry and not: a cooldown reads it (rules/limits.ts), and
//   the lookback the command checks is the config's of the day: a cooldown lengthened later, or a
//   clock stepped back, reads further than it. Among them each rule's newest: latestRulePlans
//   (codecs.ts LATEST_RULE_PLANS_SQL) carries a replaced rule's id and history at every start and
//   reload (rules/rule-ids.ts).
// - every one-off send's plan (manual_id): its id is refused as used, ever (`send --id`).
// - the plan of the newest attempt: the lock file's send mark is compared with max(attempts.id)
//   (identity.ts), and SQLite gives a new row the highest rowid + 1, so a deleted newest attempt
//   would have its id handed out again. The newest plan and step are kept by the rules above.
// - epochs_seen: the same epochs of each address (what recordPoll's newEpoch asks of the current one).
// signed_ts is not touched: it is one row an address, and its running maximum outlives the attempts.
//
// Batched: each batch of plans (their attempts, then steps, then the plans) is one IMMEDIATE
// transaction, so the WAL and the write lock are held for a bounded time whatever the history.
// A dry run runs the same batches and rolls each back: its counts are what a prune would delete.
import type { Db } from './db.js';

export interface PruneOptions {
  /** Unix ms: only history recorded and last updated before it goes. */
  cutoffMs: number;
  /** Count what would go, delete nothing. */
  dryRun: boolean;
  /** Plans (or epochs_seen rows) per transaction; default 500. */
  batch?: number;
}

export interface PruneCounts {
  plans: number;
  steps: number;
  attempts: number;
  epochsSeen: number;
}

const DEFAULT_BATCH = 500;

/**
 * Worked out once before the batches (no daemon runs: the lock is held), as temporary tables of
 * this connection: the epochs kept, per address (the two first seen last, and the last good
 * poll's), and the plans kept as the newest of their address, rule and dry-ness.
 */
const KEPT_SQL = `
  CREATE TEMP TABLE IF NOT EXISTS prune_newest (id INTEGER PRIMARY KEY);
  DELETE FROM temp.prune_newest;
  INSERT INTO temp.prune_newest (id) SELECT MAX(id) FROM plans GROUP BY address, rule, dry;
  CREATE TEMP TABLE IF NOT EXISTS prune_epochs (address TEXT NOT NULL, epoch TEXT NOT NULL, PRIMARY KEY (address, epoch)) WITHOUT ROWID;
  DELETE FROM temp.prune_epochs;
  INSERT INTO temp.prune_epochs (address, epoch)
    SELECT address, epoch FROM (
      SELECT address, epoch, ROW_NUMBER() OVER (PARTITION BY address ORDER BY first_seen_at DESC, epoch DESC) AS n FROM epochs_seen
    ) WHERE n <= 2;
  INSERT OR IGNORE INTO temp.prune_epochs (address, epoch) SELECT address, epoch FROM wallet_state WHERE epoch IS NOT NULL;`;

const KEPT_EPOCH = (row: string) => `NOT EXISTS (SELECT 1 FROM temp.prune_epochs k WHERE k.address = ${row}.address AND k.epoch = ${row}.epoch)`;

/** The next batch of plans that may go, in id order after @after. */
const PLAN_BATCH_SQL = `
  SELECT p.id FROM plans p
  WHERE p.id > @after
    AND p.created_at < @cutoff AND p.updated_at < @cutoff
    AND p.status IN ('done', 'rejected', 'failed', 'dry')
    AND p.manual_id IS NULL
    AND p.id <> @keepPlan
    AND p.id NOT IN (SELECT id FROM temp.prune_newest)
    AND ${KEPT_EPOCH('p')}
    AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.plan_id = p.id AND s.state IN ('planned', 'sending', 'unknown'))
  ORDER BY p.id
  LIMIT @limit`;

/** The plan holding the newest attempt (-1 when there is none). */
const NEWEST_ATTEMPT_PLAN_SQL = 'SELECT s.plan_id AS id FROM attempts a JOIN steps s ON s.id = a.step_id ORDER BY a.id DESC LIMIT 1';

const IDS = 'SELECT value FROM json_each(@ids)';

/** The next batch of epochs_seen rows that may go, in key order after (@address, @epoch). */
const EPOCH_BATCH_SQL = `
  SELECT e.address, e.epoch FROM epochs_seen e
  WHERE (e.address, e.epoch) > (@address, @epoch)
    AND e.first_seen_at < @cutoff
    AND ${KEPT_EPOCH('e')}
  ORDER BY e.address, e.epoch
  LIMIT @limit`;

export function pruneState(db: Db, opts: PruneOptions): PruneCounts {
  const limit = opts.batch ?? DEFAULT_BATCH;
  const counts: PruneCounts = { plans: 0, steps: 0, attempts: 0, epochsSeen: 0 };
  db.exec(KEPT_SQL);
  const planBatch = db.prepare<Record<string, unknown>, { id: number }>(PLAN_BATCH_SQL);
  const delAttempts = db.prepare<{ ids: string }>(`DELETE FROM attempts WHERE step_id IN (SELECT id FROM steps WHERE plan_id IN (${IDS}))`);
  const delSteps = db.prepare<{ ids: string }>(`DELETE FROM steps WHERE plan_id IN (${IDS})`);
  const delPlans = db.prepare<{ ids: string }>(`DELETE FROM plans WHERE id IN (${IDS})`);
  const keepPlan = db.prepare<[], { id: number }>(NEWEST_ATTEMPT_PLAN_SQL);
  inBatches(db, opts.dryRun, limit, 0, (after) => {
    const found = planBatch.all({ after, cutoff: opts.cutoffMs, keepPlan: keepPlan.get()?.id ?? -1, limit }).map((r) => r.id);
    const json = JSON.stringify(found);
    counts.attempts += delAttempts.run({ ids: json }).changes;
    counts.steps += delSteps.run({ ids: json }).changes;
    counts.plans += delPlans.run({ ids: json }).changes;
    return found;
  });

  const epochBatch = db.prepare<Record<string, unknown>, { address: string; epoch: string }>(EPOCH_BATCH_SQL);
  const delEpochs = db.prepare<{ keys: string }>(
    "DELETE FROM epochs_seen WHERE (address, epoch) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(@keys))",
  );
  inBatches(db, opts.dryRun, limit, { address: '', epoch: '' }, (after) => {
    const found = epochBatch.all({ ...after, cutoff: opts.cutoffMs, limit });
    counts.epochsSeen += delEpochs.run({ keys: JSON.stringify(found.map((r) => [r.address, r.epoch])) }).changes;
    return found;
  });
  db.exec('DROP TABLE temp.prune_epochs; DROP TABLE temp.prune_newest');
  return counts;
}

/**
 * Deletes in batches, each one IMMEDIATE transaction (rolled back in a dry run): `batch(after)`
 * deletes what it finds after the key `after` (at most `limit` rows, in key order) and returns the
 * rows found; the next batch starts after the last of them, so a dry run, which leaves them in
 * place, moves on too. Stops at a batch that found fewer than `limit`. Also the signer journal's.
 */
export function inBatches<K>(db: Db, dryRun: boolean, limit: number, start: K, batch: (after: K) => K[]): void {
  for (let after = start; ; ) {
    db.exec('BEGIN IMMEDIATE');
    let found: K[];
    try {
      found = batch(after);
      db.exec(dryRun ? 'ROLLBACK' : 'COMMIT');
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
    const last = found[found.length - 1];
    if (found.length < limit || last === undefined) return;
    after = last;
  }
}
