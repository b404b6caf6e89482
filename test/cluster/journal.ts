// What the real-process cluster tests read back from the shared state to judge a run against the
// sandbox's ledger (ledger-check.ts): every signed attempt a daemon recorded, with the signature it
// carried, and the steps still `sending`; the operator who resolves what the daemons hold for one;
// and the one wait loop those tests share.
import pg from 'pg';
import { silentLogger } from '../../src/log/logger.js';
import type { LedgerEntry } from '../../src/sandbox/server.js';
import { heldForOperator } from '../../src/store/plan-status.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import type { RecordedStep } from './ledger-check.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Every recorded attempt as a RecordedStep (one signature each), as the ledger check takes them. */
export async function recordedSteps(stateUrl: string): Promise<RecordedStep[]> {
  const sql = new pg.Client({ connectionString: stateUrl });
  await sql.connect();
  try {
    const rows = await sql.query<{ step_id: number; address: string; kind: string; epoch: string; request: string }>(
      'SELECT s.id AS step_id, p.address, s.kind, p.epoch, a.request FROM attempts a JOIN steps s ON s.id = a.step_id JOIN plans p ON p.id = s.plan_id',
    );
    return rows.rows.map((r) => {
      const body = (JSON.parse(r.request) as { body: string }).body;
      // An empty body: recorded before its signer answered (SPEC §7), nothing signed or sent.
      const signature = body === '' ? undefined : (JSON.parse(body) as { signature?: string }).signature;
      return { stepId: r.step_id, address: r.address, kind: r.kind, planEpoch: r.epoch, signatures: signature === undefined ? [] : [signature] };
    });
  } finally {
    await sql.end();
  }
}

/** Ids of the steps in `sending` now. */
export async function sendingSteps(stateUrl: string): Promise<number[]> {
  const sql = new pg.Client({ connectionString: stateUrl });
  await sql.connect();
  try {
    return (await sql.query<{ id: number }>("SELECT id FROM steps WHERE state = 'sending' ORDER BY id")).rows.map((r) => r.id);
  } finally {
    await sql.end();
  }
}

/** Polls f until ok(value); throws naming `what` (and `why`, e.g. the run's seed) with the last value. */
export async function until<T>(what: string, f: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 30_000, why = ''): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`${what}: not reached in ${timeoutMs} ms${why === '' ? '' : ` (${why})`}; last ${JSON.stringify(v)}`);
    await sleep(100);
  }
}

/**
 * The operator's hand: a claim in doubt across an epoch rollover (the sandbox's 3 s epochs make it
 * common: a wallet handed over mid-claim, a database crash) is held for an operator by design
 * (claim_undetermined), and so is a deposit or mint left unknown. The ledger decides, as a block
 * explorer would: applied if its signature is there; not applied only once its ts is past the
 * sandbox's window (`tsWindowSec`), when it can never be applied any more. Returns a stop function
 * that resolves once the loop has ended, with the ids it resolved.
 */
export async function operator(stateUrl: string, ledger: () => readonly LedgerEntry[], tsWindowSec: number): Promise<() => Promise<number[]>> {
  const store = await openPostgresStore(stateUrl, { logger: silentLogger() });
  const resolved: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        for (const step of await store.unknownSteps()) {
          if ((step.kind === 'claim' && !heldForOperator(step)) || step.request === null || step.request.body === '') continue; // other claims reconcile themselves
          const signature = (JSON.parse(step.request.body) as { signature?: string }).signature;
          const applied = ledger().some((e) => e.signature === signature);
          if (!applied && Date.now() / 1000 <= step.request.ts + tsWindowSec + 1) continue;
          await store.resolve(step.id, applied, `test operator: ${applied ? 'in' : 'not in'} the sandbox ledger`);
          resolved.push(step.id);
        }
      } catch {
        // the database is down, or the step moved meanwhile: the next look
      }
      await sleep(250);
    }
  })();
  return async () => {
    running = false;
    await loop;
    await store.close();
    return resolved;
  };
}
