// What the real-process cluster tests read back from the shared state to judge a run against the
// sandbox's ledger (ledger-check.ts): every signed attempt a daemon recorded, with the signature it
// carried, and the steps still `sending`. Plus the one wait loop those tests share.
import pg from 'pg';
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
      const signature = (JSON.parse(body) as { signature?: string }).signature;
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
