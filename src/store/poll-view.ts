// What a wallet's turn reads before it decides, written once for both adapters (as the step machine
// is): the last epoch, whether the wallet has work left (an open or blocked plan), the two guards
// (a claim in doubt, an unknown signed step) and the plan history the rules judge by, in one
// statement. The same answers lastEpoch, activePlans, claimInDoubt, hasUnknownSignedStep and
// planHistory give asked one after the other (the contract tests compare them), but in one read: a
// turn of a large fleet mostly finds nothing to do, and five statements cost it five read locks of
// the SQLite file (five round trips on PostgreSQL) to learn that.
//
// The dialect both understand ($n placeholders, integers for booleans). The history rows come as a
// LEFT JOIN of the one row of answers, so an address without history still gets its answers; they
// are put in id order here, not by the statement: SQLite would build a temporary b-tree to sort
// what is, on almost every turn, a single row without history.
import type { PlanHistoryEntry } from '../domain.js';
import { historyFromRaw, historyPlanIds, historyStepColumns } from './codecs.js';
import type { RawHistory } from './rows.js';

/** What the turn reads (port.ts pollView). */
export interface PollView {
  /** lastEpoch(address). */
  lastEpoch: string | undefined;
  /** activePlans(address) is not empty: a plan of this address is open or blocked (not dry). */
  hasActivePlans: boolean;
  /** claimInDoubt(address). */
  claimInDoubt: boolean;
  /** hasUnknownSignedStep(address). */
  unknownSignedStep: boolean;
  /** planHistory(address, sinceMs, epoch). */
  history: PlanHistoryEntry[];
}

/** $1 address, $2 sinceMs, $3 epoch. Each predicate is the one its single-purpose method asks. */
export const POLL_VIEW_SQL = `
  SELECT g.last_epoch, g.active, g.claim_in_doubt, g.unknown_signed,
         h.id, h.rule, h.epoch, h.seq, h.created_at, h.dry, h.status, h.estimate_lamports, h.claimed_lamports,
         ${historyStepColumns('h')}
  FROM (SELECT
          (SELECT w.epoch FROM wallet_state w WHERE w.address = $1) AS last_epoch,
          CASE WHEN EXISTS (
            SELECT 1 FROM plans a WHERE a.status IN ('open', 'blocked') AND a.dry = 0 AND a.address = $1
          ) THEN 1 ELSE 0 END AS active,
          CASE WHEN EXISTS (
            SELECT 1 FROM steps s JOIN plans p ON p.id = s.plan_id
            WHERE p.address = $1 AND p.dry = 0 AND s.kind = 'claim' AND s.state IN ('sending', 'unknown')
          ) THEN 1 ELSE 0 END AS claim_in_doubt,
          CASE WHEN EXISTS (
            SELECT 1 FROM steps s JOIN plans p ON p.id = s.plan_id
            WHERE p.address = $1 AND p.dry = 0 AND s.state = 'unknown' AND s.kind <> 'claim'
          ) THEN 1 ELSE 0 END AS unknown_signed
       ) g
  LEFT JOIN plans h ON h.id IN (${historyPlanIds('$1', '$2', '$3')})`;

type PollViewRow = { last_epoch: string | null; active: number; claim_in_doubt: number; unknown_signed: number } & {
  [K in keyof RawHistory]: RawHistory[K] | null;
};

/** The statement's rows as the view: the answers are on every row, a history entry on each row that has one. */
export function pollViewFromRows(rows: readonly PollViewRow[]): PollView {
  const first = rows[0];
  if (first === undefined) throw new Error('the poll view answered no row');
  return {
    lastEpoch: first.last_epoch ?? undefined,
    hasActivePlans: Number(first.active) === 1,
    claimInDoubt: Number(first.claim_in_doubt) === 1,
    unknownSignedStep: Number(first.unknown_signed) === 1,
    history: rows
      .filter((r) => r.id !== null)
      .map((r) => historyFromRaw(r as RawHistory))
      .sort((a, b) => (a.id ?? 0) - (b.id ?? 0)),
  };
}

export type { PollViewRow };
