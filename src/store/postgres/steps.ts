// Steps in PostgreSQL: the reads, and the dialect the shared state machine (../step-machine.ts) runs
// in here — its queries awaited on a transaction's client, which the store has made lock the plan's
// row (plans.ts lockPlan*) and check the lease (fence.ts) first. Under READ COMMITTED a concurrent
// transition of the same step waits for the first and then re-checks the guard against the
// committed row, so a double transition cannot happen here either.
import type { StepState } from '../../domain.js';
import { attemptFromRaw, stepFromRaw } from '../codecs.js';
import type { AttemptRow, RawAttempt, RawStep, StepRow } from '../rows.js';
import type { Query } from '../step-machine.js';
import type { Sql } from './db.js';

export async function getStep(c: Sql, id: number): Promise<StepRow | undefined> {
  const r = await c.query<RawStep>('SELECT * FROM steps WHERE id = $1', [id]);
  const row = r.rows[0];
  return row === undefined ? undefined : stepFromRaw(row);
}

export async function stepsInState(c: Sql, state: StepState, address?: string): Promise<StepRow[]> {
  const r = await c.query<RawStep>(
    `SELECT s.* FROM steps s JOIN plans p ON p.id = s.plan_id
     WHERE s.state = $1 AND ($2::text IS NULL OR p.address = $2) ORDER BY s.id`,
    [state, address ?? null],
  );
  return r.rows.map(stepFromRaw);
}

export async function stepAttempts(c: Sql, stepId: number): Promise<AttemptRow[]> {
  const r = await c.query<RawAttempt>('SELECT * FROM attempts WHERE step_id = $1 ORDER BY n', [stepId]);
  return r.rows.map(attemptFromRaw);
}

/** The newest x-svc-ts this address ever signed, so a new request never repeats one. */
export async function lastRequestTs(c: Sql, address: string): Promise<number | undefined> {
  // The running maximum attempts' trigger keeps (migrations.ts 6), not every attempt read again.
  const r = await c.query<{ ts: string | null }>('SELECT ts::text AS ts FROM signed_ts WHERE address = $1', [address]);
  const ts = r.rows[0]?.ts;
  return ts == null ? undefined : Number(ts);
}

/** The seconds this address signed at or after fromTs, ascending (see the store port). */
export async function requestTsFrom(c: Sql, address: string, fromTs: number, limit: number): Promise<number[]> {
  const r = await c.query<{ ts: string }>(
    `SELECT DISTINCT (a.request::jsonb ->> 'ts')::numeric AS ts
     FROM attempts a JOIN steps s ON s.id = a.step_id JOIN plans p ON p.id = s.plan_id
     WHERE p.address = $1 AND (a.request::jsonb ->> 'ts')::numeric >= $2
     ORDER BY ts LIMIT $3`,
    [address, fromTs, limit],
  );
  return r.rows.map((row) => Number(row.ts));
}

/** A claim of this address (other than `exceptStepId`) that may or may not have been applied. */
export async function claimInDoubt(c: Sql, address: string, exceptStepId = 0): Promise<boolean> {
  const r = await c.query<{ n: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM steps s JOIN plans p ON p.id = s.plan_id
       WHERE p.address = $1 AND p.dry = 0 AND s.kind = 'claim' AND s.state IN ('sending', 'unknown') AND s.id <> $2
     ) AS n`,
    [address, exceptStepId],
  );
  return r.rows[0]?.n === true;
}

export async function hasUnknownSigned(c: Sql, address: string): Promise<boolean> {
  const r = await c.query<{ n: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM steps s JOIN plans p ON p.id = s.plan_id
       WHERE p.address = $1 AND p.dry = 0 AND s.state = 'unknown' AND s.kind <> 'claim'
     ) AS n`,
    [address],
  );
  return r.rows[0]?.n === true;
}

/** The machine's queries on this connection ($n placeholders are PostgreSQL's own). */
export function pgExec(c: Sql): (q: Query) => Promise<unknown> {
  return async (q) => {
    const r = await c.query(q.sql, q.args);
    return q.mode === 'get' ? r.rows[0] : q.mode === 'all' ? r.rows : (r.rowCount ?? 0);
  };
}
