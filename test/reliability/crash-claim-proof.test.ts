// SIGKILL around the proof of a claim answered without claimed_sol (outcome.ts claimedOf), on
// SQLite and on PostgreSQL: a real daemon process (dist/) runs `once` against the real sandbox, is
// killed between the claim's acknowledgement and the record of what lifetime's rise proves (before
// and after the summary read), or after that record and before the deposit "all" is `sending`, and
// is run again until nothing changes. The server takes a quarter of each claim as a fee and does
// not say so, and the wallet holds 100 SOL of its own: a deposit sized from the pending seen (1 SOL)
// would be paid from it. Whatever the kill, the claim is applied once and never sent again, and the
// deposit is either sent once with the proved 0.75 SOL or skipped (claim_unproved).
import { beforeAll, describe, it, type TestContext } from 'vitest';
import Database from 'better-sqlite3';
import pg from 'pg';
import { buildOnce } from '../e2e/build.js';
import { runCli, spawnCli } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';
import { crashWorld, SOL, type CrashWorld } from './crash-harness.js';

beforeAll(() => buildOnce(), 120_000);

const SWEEP = `  - name: sweep
    when:
      pending_sol: { gte: 0.5 }
    do:
      - claim
      - deposit: { symbol: SOL2X, amount: all }
`;
const OK_NO_AMOUNT = '{"status":"success","tx":"t1"}';
const FEE = SOL / 4n;

type Backend = 'sqlite' | 'postgresql';

interface World extends CrashWorld {
  env: NodeJS.ProcessEnv;
  /** Runs SQL on the state database behind the daemon's back (it is dead then). */
  sql(text: string): Promise<void>;
}

async function openWorld(ctx: TestContext, backend: Backend): Promise<World> {
  // Shared state refuses a claim_settle below its window; nothing here is reconciled, so leave it unset there.
  const w = await crashWorld({ names: ['alpha'], rules: SWEEP, ...(backend === 'postgresql' ? { apiExtra: '' } : {}) });
  ctx.onTestFinished(() => w.close());
  const address = w.wallets[0]!.address;
  const world = w.sandbox.world;
  world.setWallet(address, { balanceLamports: 100n * SOL, lifetimeLamports: 5n * SOL });
  // The server keeps a fee of each claim and says nothing of it: lifetime and the balance rise by 0.75 SOL.
  const claim = world.claim.bind(world);
  world.claim = (a, signature, requestId) => {
    const entry = claim(a, signature, requestId);
    const now = world.wallet(a)!;
    world.setWallet(a, { lifetimeLamports: now.lifetimeLamports - FEE, balanceLamports: now.balanceLamports - FEE });
    return entry;
  };
  // Every claim is answered "success" without claimed_sol, and applied.
  w.sandbox.addFault({ kind: 'malformed', match: { op: 'claim' }, status: 200, body: OK_NO_AMOUNT, times: 100 });
  if (backend === 'sqlite') {
    return {
      ...w,
      env: {},
      sql: (text) => {
        const db = new Database(w.statePath);
        try {
          db.exec(text);
        } finally {
          db.close();
        }
        return Promise.resolve();
      },
    };
  }
  const url = await createDatabase();
  return {
    ...w,
    env: { AUTOCLAIM_STATE_URL: url },
    sql: async (text) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(text);
      } finally {
        await c.end();
      }
    },
  };
}

/** One `once` that must die by SIGKILL at the named failpoint. */
async function crashAt({ expect, onTestFinished }: TestContext, w: World, failpoint: string): Promise<void> {
  const c = spawnCli(['once', '--config', w.config], { cwd: w.dir, env: { ...w.env, AUTOCLAIM_FAILPOINT: failpoint } });
  onTestFinished(async () => {
    await c.stop();
  });
  const exit = await c.exited;
  expect(exit.signal, `${failpoint} was not reached:\n${c.stdout().slice(-2000)}\n${c.stderr()}`).toBe('SIGKILL');
  // The dead daemon's lease on the wallet and its row lapse now, as state.lease without a renewal
  // would make them (cluster/db.ts expire): the next `once` takes the wallet over as after a wait.
  if (w.env.AUTOCLAIM_STATE_URL !== undefined) await w.sql("UPDATE leases SET expires_at = now() - interval '1 second'; UPDATE daemons SET expires_at = now() - interval '1 second'");
}

interface Listed {
  claimedLamports: string | null;
  status: string;
  steps: Array<{ kind: string; state: string; amountLamports: string | null; resolution: string | null }>;
}

async function plans(w: World): Promise<Listed[]> {
  const r = await runCli(['actions', '--json', '--config', w.config], { cwd: w.dir, env: w.env });
  if (r.code !== 0) throw new Error(`actions failed (${r.code}): ${r.stderr}`);
  return (JSON.parse(r.stdout) as { plans: Listed[] }).plans;
}

/** `once` in-process until the ledger and the plans stop changing; returns its events. */
async function settle(w: World): Promise<Array<Record<string, unknown>>> {
  const events: Array<Record<string, unknown>> = [];
  let before = '';
  for (let round = 1; round <= 6; round++) {
    const r = await runCli(['once', '--config', w.config], { cwd: w.dir, env: w.env });
    events.push(...r.events);
    const after = JSON.stringify([w.sandbox.ledger().length, await plans(w)]);
    if (after === before) return events;
    before = after;
  }
  throw new Error('state still changing after 6 rounds of once');
}

const moved = (w: World) => w.sandbox.ledger().map((e) => `${e.op} ${e.amountLamports}`);

describe.each<Backend>(['sqlite', 'postgresql'])('SIGKILL around the proof of a claim without claimed_sol (%s)', (backend) => {
  it.for([
    { kill: 'after_claim_acknowledged', deposit: 'skipped' },
    { kill: 'during_claim_proof', deposit: 'skipped' },
    { kill: 'after_claim_proved', deposit: 'acknowledged' },
  ])('killed at $kill: the claim is never sent again, the deposit is $deposit', async ({ kill, deposit }, ctx) => {
    const { expect } = ctx;
    const w = await openWorld(ctx, backend);
    await crashAt(ctx, w, kill);
    expect(moved(w)).toEqual([`claim ${SOL}`]);
    const [killed] = await plans(w);
    expect(killed?.steps.map((s) => `${s.kind}:${s.state}`)).toEqual(['claim:acknowledged', 'deposit:planned']);
    expect(killed?.claimedLamports).toBe(kill === 'after_claim_proved' ? String(SOL - FEE) : null);

    const events = await settle(w);
    expect(events.filter((e) => e.event === 'action.sent').map((e) => e.kind)).toEqual(deposit === 'acknowledged' ? ['deposit'] : []);
    // Never the pending seen (1 SOL), never a second claim: the proved 0.75 SOL, or nothing.
    expect(moved(w)).toEqual(deposit === 'acknowledged' ? [`claim ${SOL}`, `deposit ${SOL - FEE}`] : [`claim ${SOL}`]);
    const [after] = await plans(w);
    expect(after?.steps.map((s) => `${s.kind}:${s.state}`)).toEqual(['claim:acknowledged', `deposit:${deposit}`]);
    expect(after?.status).toBe('done');
    if (deposit === 'skipped') expect(after?.steps[1]?.resolution).toMatch(/^claim_unproved: /);
  });

  // Rolling upgrade: a release before the proof (7f24734) recorded a claim answered without
  // claimed_sol as having claimed the pending seen, in the same claimed_lamports, and sized its
  // share steps from that. Stopped (or stepped aside, or dead) between that claim and its deposit,
  // it leaves the plan to this release, which must not take that figure as proved.
  it.for([
    { sized: false, what: 'its deposit "all" not sized yet' },
    { sized: true, what: 'its deposit "all" sized from it already' },
  ])('a claim an earlier release recorded with the pending seen as its amount, $what: the deposit is skipped, not paid from the balance', async ({ sized }, ctx) => {
    const { expect } = ctx;
    const w = await openWorld(ctx, backend);
    await crashAt(ctx, w, 'after_claim_acknowledged');
    // What the earlier release's acknowledgement wrote: the pending seen (1 SOL) as the claimed
    // amount; and, stopped a moment later, the deposit's amount resolved from it.
    await w.sql(`UPDATE plans SET claimed_lamports = '${SOL}'`);
    if (sized) await w.sql(`UPDATE steps SET amount_lamports = '${SOL}' WHERE kind = 'deposit'`);
    await settle(w);
    expect(moved(w)).toEqual([`claim ${SOL}`]);
    const [after] = await plans(w);
    expect(after?.steps.map((s) => `${s.kind}:${s.state}`)).toEqual(['claim:acknowledged', 'deposit:skipped']);
    expect(after?.steps[1]?.resolution).toMatch(/^claim_unproved: .*an earlier release of autoclaim recorded the pending seen/);
  });
});
