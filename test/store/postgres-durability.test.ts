// The PostgreSQL store's sessions commit durably and under deadlines whatever the server says
// (issue 25, finding 2): synchronous_commit = off in the database's settings (ALTER DATABASE, as an
// operator or a managed service may have it) does not reach autoclaim's session. What is judged of
// a server's replication (durability.ts), what counts as losing the database (reachability.ts),
// and how a lost COMMIT answer is settled by reading back (in-doubt.ts).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { silentLogger } from '../../src/log/logger.js';
import { CommitInDoubt, isConnectionLoss, openPool } from '../../src/store/postgres/db.js';
import { judgeDurability, readDurability } from '../../src/store/postgres/durability.js';
import { settleInDoubt } from '../../src/store/postgres/in-doubt.js';
import { Reachability } from '../../src/store/postgres/reachability.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { stateFindings } from '../../src/cli/commands/doctor/state.js';
import { captureLog } from '../support/log.js';
import { closedPort } from '../support/net.js';
import { createDatabase } from '../support/postgres.js';
import { code, fields } from './contract-adapters.js';
import { draft, request, T0 } from './fixtures.js';

const logger = silentLogger();
const clock = { now: () => T0, monotonic: () => performance.now() };

let url: string;
let admin: pg.Client;
beforeAll(async () => {
  url = await createDatabase();
  admin = new pg.Client(fields(url));
  await admin.connect();
  const db = new URL(url).pathname.slice(1);
  await admin.query(`ALTER DATABASE "${db}" SET synchronous_commit = off`);
  await admin.query(`ALTER DATABASE "${db}" SET statement_timeout = 0`);
});
afterAll(async () => {
  await admin.end();
});

describe('the store’s sessions', () => {
  it('commit durably and under a deadline though the database says otherwise', async () => {
    // A session of anyone else gets the database's settings: the test can tell.
    const other = new pg.Client(fields(url));
    await other.connect();
    try {
      expect((await other.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]?.synchronous_commit).toBe('off');
    } finally {
      await other.end();
    }
    const pool = await openPool(url, { queryTimeoutMs: 1_500 });
    try {
      const r = await pool.query<{ sync: string; stmt: string; ka: string }>(
        "SELECT current_setting('synchronous_commit') AS sync, current_setting('statement_timeout') AS stmt",
      );
      expect(r.rows[0]).toMatchObject({ sync: 'on', stmt: '1500ms' });
      // The server's deadline ends a statement that would run longer.
      await expect(pool.query('SELECT pg_sleep(5)')).rejects.toMatchObject({ code: '57014' });
    } finally {
      await pool.end();
    }
  });

  it('report a primary without standbys as durable', async () => {
    const pool = await openPool(url, {});
    try {
      const d = await readDurability(pool);
      expect(d).toMatchObject({ inRecovery: false, synchronousCommit: 'on', standbys: [] });
      expect(judgeDurability(d)).toEqual({ refuse: undefined, warnings: [] });
    } finally {
      await pool.end();
    }
  });
});

describe('doctor on the state database', () => {
  it('finds a primary without standbys durable, and says when it cannot read the database', async () => {
    expect(await stateFindings(url, { password: undefined, queryTimeoutMs: 2_000 })).toEqual([
      { area: 'state', level: 'ok', text: expect.stringMatching(/a primary; commits are durable/) as string },
    ]);
    const nobody = `postgres://postgres@127.0.0.1:${await closedPort()}/x`;
    expect(await stateFindings(nobody, { password: undefined, queryTimeoutMs: 2_000 })).toEqual([
      { area: 'state', level: 'problem', text: expect.stringMatching(/^cannot read the state database postgres:\/\/postgres@127\.0\.0\.1:\d+\/x: /) as string },
    ]);
  });
});

describe('judgeDurability', () => {
  const base = { inRecovery: false, synchronousCommit: 'on', synchronousStandbyNames: '', standbys: [] };
  it('refuses a database in recovery: a read-only standby', () => {
    expect(judgeDurability({ ...base, inRecovery: true }).refuse).toMatch(/in recovery: it is a read-only standby/);
  });
  it('warns of an asynchronous standby, and of one whose mode it may not see; not of a synchronous one', () => {
    const async = judgeDurability({ ...base, standbys: [{ name: 'replica1', syncState: 'async' }] });
    expect(async.refuse).toBeUndefined();
    expect(async.warnings).toEqual([expect.stringMatching(/^asynchronous standby: replica1 \(async\); synchronous_standby_names is empty/)]);
    const uncovered = judgeDurability({ ...base, synchronousStandbyNames: 'replica1', standbys: [{ name: 'replica1', syncState: 'sync' }, { name: 'replica2', syncState: 'potential' }] });
    expect(uncovered.warnings).toEqual([expect.stringMatching(/replica2 \(potential\); synchronous_standby_names \(replica1\) does not cover them/)]);
    expect(judgeDurability({ ...base, synchronousStandbyNames: 'ANY 1 (a, b)', standbys: [{ name: 'a', syncState: 'quorum' }] }).warnings).toEqual([]);
    expect(judgeDurability({ ...base, standbys: [{ name: 'x', syncState: null }] }).warnings).toEqual([expect.stringMatching(/pg_read_all_stats/)]);
    expect(judgeDurability({ ...base, synchronousCommit: 'off' }).warnings).toEqual([expect.stringMatching(/synchronous_commit is off/)]);
  });
});

describe('reachability', () => {
  it('counts only a failure to reach the database; refuses at once while it is down; a probe brings it back', async () => {
    const log = captureLog();
    let answers = false;
    let probes = 0;
    const r = new Reachability({
      probe: () => {
        probes++;
        return answers ? Promise.resolve() : Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      },
      where: 'postgres://db',
      logger: log.logger,
      clock,
      minBackoffMs: 5,
      maxBackoffMs: 20,
    });
    try {
      r.observe(Object.assign(new Error('duplicate key'), { code: '23505' }));
      r.observe(new StateError('STATE_TRANSITION', 'not planned'));
      expect(r.state()).toEqual({ reachable: true });
      expect(isConnectionLoss(new StateError('STATE_IO', 'x', { cause: new Error('Connection terminated unexpectedly') }))).toBe(true);
      expect(isConnectionLoss(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);

      r.observe(new Error('Connection terminated unexpectedly'));
      expect(r.state()).toMatchObject({ reachable: false, error: 'Connection terminated unexpectedly' });
      let refused: unknown;
      try {
        r.assertReachable();
      } catch (err) {
        refused = err;
      }
      expect(refused).toMatchObject({ code: 'STATE_IO', message: expect.stringMatching(/unreachable since/) as string });
      await expect.poll(() => probes).toBeGreaterThan(2);
      expect(r.state()).toMatchObject({ reachable: false, error: expect.stringMatching(/ECONNREFUSED/) as string });
      answers = true;
      await expect.poll(() => r.state().reachable).toBe(true);
      expect(log.lines.map((l) => l.event)).toEqual(['state.unreachable', 'state.reachable']);
    } finally {
      r.close();
    }
  });
});

describe('a lost COMMIT answer', () => {
  it('is settled by reading the steps back: committed when they are as written, not when one is not; the old backend is ended first', async () => {
    const fresh = await createDatabase();
    const store = await openPostgresStore(fresh, { logger, clock });
    const pool = await openPool(fresh, {});
    const holder = new pg.Client(fields(fresh));
    await holder.connect();
    holder.on('error', () => undefined);
    try {
      const plan = await store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' });
      const stepId = plan?.steps[0]?.id ?? 0;
      const sent = await store.markSending(stepId, request(), T0 + 1);
      const pid = (holder as unknown as { processID: number }).processID;
      const o = { pool, where: 'db', logger, deadlineMs: 10_000, monotonic: () => performance.now() };
      // Upgrades review (helper 31): the pid alone may be another session's after a failover to
      // another server. A session with this pid but another start time is neither waited for nor
      // ended (before: ended, whoever it was); the step is read back at once.
      const bystander = new pg.Client(fields(fresh));
      await bystander.connect();
      bystander.on('error', () => undefined);
      const bystanderPid = (bystander as unknown as { processID: number }).processID;
      await settleInDoubt('markSending', new CommitInDoubt(bystanderPid, new Error('Connection terminated'), '2000-01-01 00:00:00+00'), [sent], o);
      expect((await bystander.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1);
      await bystander.end();
      // As if `holder` had run the transaction: it is ended, then the step read back.
      const started = (await pool.query<{ s: string }>('SELECT backend_start::text AS s FROM pg_stat_activity WHERE pid = $1', [pid])).rows[0]?.s;
      await settleInDoubt('markSending', new CommitInDoubt(pid, new Error('Connection terminated'), started), [sent], o);
      await expect(holder.query('SELECT 1')).rejects.toThrow();
      // What the transition would have written is not there: it did not commit.
      const notThere = { ...sent, updatedAt: T0 + 2 };
      expect(await code(() => settleInDoubt('markAcknowledged', new CommitInDoubt(undefined, new Error('x')), [notThere], o))).toBe('STATE_IO');
      // A write of several steps (a recovery, a cancel) committed only if every one is as written.
      const other = plan?.steps[1];
      expect(other).toBeDefined();
      await settleInDoubt('cancelPlan', new CommitInDoubt(undefined, new Error('x')), [sent, other!], o);
      expect(await code(() => settleInDoubt('cancelPlan', new CommitInDoubt(undefined, new Error('x')), [sent, { ...other!, state: 'skipped' }], o))).toBe('STATE_IO');
    } finally {
      await store.close();
      await pool.end();
      await holder.end().catch(() => undefined);
    }
  });
});
