// What only the PostgreSQL adapter has: migrations that several daemons run at once, the lease
// fence on every plan and step write, a takeover that waits for a fenced write in flight, and the
// connection's own edges (password, read-only, the URL it shows).
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { IN_FLIGHT_ERROR } from '../../src/store/plan-status.js';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from '../../src/store/postgres/migrations.js';
import { openPostgresStore, type Fence } from '../../src/store/postgres/store.js';
import type { Store } from '../../src/store/port.js';
import { createDatabase, startPostgres } from '../support/postgres.js';
import { code, fields } from './contract-adapters.js';
import { ADDR, ADDR2, draft, request, summary, T0 } from './fixtures.js';

const logger = silentLogger();
const clock = { now: () => T0, monotonic: () => 0 };
const open = (url: string, fence?: Fence, extra: Record<string, unknown> = {}) => openPostgresStore(url, { logger, clock, fence, ...extra });

/** A new database left at schema version 1 (as the first release made it), and a client on it. */
async function firstSchemaDatabase(): Promise<{ fresh: string; c: pg.Client }> {
  const fresh = await createDatabase();
  const c = new pg.Client(fields(fresh));
  await c.connect();
  await c.query('CREATE TABLE autoclaim_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
  await c.query(PG_MIGRATIONS[0] as string);
  await c.query('INSERT INTO autoclaim_schema (version) VALUES (1)');
  return { fresh, c };
}

let url: string;
let admin: pg.Pool;
beforeAll(async () => {
  url = await createDatabase();
  admin = new pg.Pool({ ...fields(url), max: 4 });
});
afterAll(async () => {
  await admin.end();
});

describe('migrations', () => {
  it('three connections opening a new database at once migrate it once', async () => {
    const fresh = await createDatabase();
    const stores = await Promise.all([open(fresh), open(fresh), open(fresh)]);
    try {
      const c = new pg.Client(fields(fresh));
      await c.connect();
      const v = await c.query<{ version: number }>('SELECT version FROM autoclaim_schema ORDER BY version');
      const t = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
      await c.end();
      // Each migration applied once, in order.
      expect(v.rows.map((r) => r.version)).toEqual(Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => i + 1));
      expect(t.rows[0]?.n).toBe(10); // five state tables, daemons, leases, outbox, signed_ts, autoclaim_schema
      for (const s of stores) expect(await s.integrityCheck()).toBe('ok');
    } finally {
      for (const s of stores) await s.close();
    }
  });

  it('brings a database of the first schema up to date, keeping its rows', async () => {
    const { fresh, c } = await firstSchemaDatabase();
    try {
      await c.query(`INSERT INTO daemons (id, host, pid, started_at, heartbeat_at, expires_at) VALUES ('old', 'h', 1, now(), now(), now())`);
      await (await open(fresh)).close();
      const v = await c.query<{ version: number }>('SELECT max(version) AS version FROM autoclaim_schema');
      expect(v.rows[0]?.version).toBe(PG_SCHEMA_VERSION);
      const d = await c.query<{ id: string; wallets: string | null }>('SELECT id, wallets FROM daemons');
      expect(d.rows).toEqual([{ id: 'old', wallets: null }]);
    } finally {
      await c.end();
    }
  });

  it('refuses a database migrated by a newer autoclaim', async () => {
    const fresh = await createDatabase();
    await (await open(fresh)).close();
    const c = new pg.Client(fields(fresh));
    await c.connect();
    await c.query('INSERT INTO autoclaim_schema (version) VALUES ($1)', [PG_SCHEMA_VERSION + 1]);
    await c.end();
    expect(await code(() => open(fresh))).toBe('STATE_TOO_NEW');
  });

  // Upgrades review (helper 31): `send` from a newly installed release, run before the daemons are
  // restarted on it, migrated the shared schema under them (before: migrated to the newest).
  it('upgrade: false creates a schema where there is none but leaves an older one to the daemons', async () => {
    const { fresh, c } = await firstSchemaDatabase();
    try {
      expect(await code(() => open(fresh, undefined, { upgrade: false }))).toBe('STATE_TOO_OLD');
      const v = await c.query<{ version: number }>('SELECT max(version) AS version FROM autoclaim_schema');
      expect(v.rows[0]?.version).toBe(1);
    } finally {
      await c.end();
    }
    const empty = await createDatabase();
    await (await open(empty, undefined, { upgrade: false })).close();
    await (await open(empty, undefined, { upgrade: false })).close();
  });

  // A migration cut half-way (its connection lost, the process killed, a statement failing) is one
  // transaction: nothing of it stays, and the next start applies it whole.
  it('a migration that fails half-way leaves the schema as it was, and the next open completes it', async () => {
    const { fresh, c } = await firstSchemaDatabase();
    try {
      // The last migration creates `outbox`: a table of that name in the way makes it fail there.
      await c.query('CREATE TABLE outbox (x int)');
      expect(await code(() => open(fresh))).toBe('STATE_MIGRATION');
      const v = await c.query<{ version: number }>('SELECT max(version) AS version FROM autoclaim_schema');
      expect(v.rows[0]?.version).toBe(1);
      const col = await c.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'daemons' AND column_name = 'wallets'");
      expect(col.rowCount).toBe(0);
      await c.query('DROP TABLE outbox');
      await (await open(fresh)).close();
      const after = await c.query<{ version: number }>('SELECT max(version) AS version FROM autoclaim_schema');
      expect(after.rows[0]?.version).toBe(PG_SCHEMA_VERSION);
    } finally {
      await c.end();
    }
  });

  it('read-only: no migration of a new database, and the server refuses writes', async () => {
    const fresh = await createDatabase();
    expect(await code(() => open(fresh, undefined, { readonly: true }))).toBe('STATE_MISSING');
    await (await open(fresh)).close();
    const ro = await open(fresh, undefined, { readonly: true });
    try {
      expect(await ro.listPlans()).toEqual([]);
      expect(await code(() => ro.insertPlan(draft(), { dry: false, now: T0, reason: 'r' }))).toBe('STATE_IO');
      expect(await code(() => ro.probeWrite())).toBe('STATE_IO');
    } finally {
      await ro.close();
    }
  });
});

describe('the connection', () => {
  it('takes the password as an option, shows the URL without one, and fails closed without it', async () => {
    const cluster = await startPostgres({ password: 'pw-canary-42' });
    try {
      const db = await cluster.createDatabase('state');
      expect(await code(() => open(db))).toBe('STATE_IO');
      const store = await open(db, undefined, { password: 'pw-canary-42' });
      expect(store.path).toBe(db);
      expect(store.path).not.toContain('pw-canary-42');
      await store.probeWrite();
      await store.close();
      expect(await code(() => store.listPlans())).toBe('STATE_IO');
    } finally {
      await cluster.stop();
    }
  });

  it('honours sslmode in the URL: require refuses a server without TLS, disable connects', async () => {
    const err = await openPostgresStore(`${url}?sslmode=require`, { logger, clock }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'STATE_IO', message: expect.stringMatching(/SSL/) as string });
    await (await open(`${url}?sslmode=disable`)).close();
  });

  it('never shows a password put in the URL by mistake', async () => {
    const u = new URL(url);
    u.password = 'oops-secret';
    const store = await open(u.toString());
    try {
      expect(store.path).not.toContain('oops-secret');
      expect(await store.integrityCheck()).toBe('ok'); // the tables, at PG_SCHEMA_VERSION
    } finally {
      await store.close();
    }
  });
});

describe('poll records', () => {
  it('a record that cannot be written fails its poll (closed), and nothing of it is stored', async () => {
    const fresh = await createDatabase();
    const store = await open(fresh, undefined, { busyTimeoutMs: 50 });
    const locker = new pg.Client(fields(fresh));
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE wallet_state IN ACCESS EXCLUSIVE MODE');
      expect(await code(() => store.recordPoll('treasury', ADDR, T0, { ok: true, summary: summary() }))).toBe('STATE_IO');
      await locker.query('ROLLBACK');
      const reader = await open(fresh);
      expect(await reader.walletState(ADDR)).toBeUndefined();
      // The epoch was not kept either: the next record still says it is new.
      expect(await store.recordPoll('treasury', ADDR, T0 + 1, { ok: true, summary: summary() })).toEqual({ newEpoch: true });
      expect((await reader.walletState(ADDR))?.lastPollAt).toBe(T0 + 1);
      await reader.close();
    } finally {
      await locker.end();
      await store.close();
    }
  });
});

/** A lease row as the lease manager would leave it; expires `ms` from the database's now. */
async function setLease(address: string, owner: string | null, token: bigint, ms: number): Promise<void> {
  await admin.query(
    `INSERT INTO leases (address, owner, token, expires_at) VALUES ($1, $2, $3, now() + $4::double precision * interval '1 millisecond')
     ON CONFLICT (address) DO UPDATE SET owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at`,
    [address, owner, token.toString(), ms],
  );
}

function fenceOf(owner: string, tokens: Map<string, bigint>): Fence {
  return { owner, tokenFor: (a) => tokens.get(a) };
}

describe('fencing', () => {
  const tokens = new Map<string, bigint>();
  let store: Store;
  let free: Store;
  let stepId: number;
  let planId: number;

  beforeEach(async () => {
    await admin.query('TRUNCATE attempts, steps, plans, epochs_seen, wallet_state, leases, daemons, signed_ts RESTART IDENTITY');
    tokens.clear();
    tokens.set(ADDR, 3n);
    await setLease(ADDR, 'd1', 3n, 60_000);
    store = await open(url, fenceOf('d1', tokens));
    free = await open(url);
    const plan = (await store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' }))!;
    planId = plan.id;
    stepId = plan.steps[0]!.id;
  });
  afterEach(async () => {
    await store.close();
    await free.close();
  });

  it('lets the holder write every transition', async () => {
    await store.markSending(stepId, request(), T0);
    await store.markUnknown(stepId, { error: 'timeout' }, T0);
    await store.reconcile(stepId, true, { note: 'applied' }, T0);
    await store.setStepAmount(stepId + 1, 5n, T0);
    expect(await store.skipRemaining(planId, 'done', T0)).toBe(1);
    expect(await store.finishPlan(planId, T0)).toBe('done');
  });

  const cases: Array<[string, () => Promise<void>]> = [
    ['an expired lease', () => setLease(ADDR, 'd1', 3n, -1)],
    ["someone else's lease", () => setLease(ADDR, 'd2', 4n, 60_000)],
    ['a stale token (the wallet was taken and given back)', () => setLease(ADDR, 'd1', 5n, 60_000)],
    ['a free lease', () => setLease(ADDR, null, 4n, 60_000)],
    ['no lease row at all', async () => void (await admin.query('DELETE FROM leases'))],
  ];
  it.each(cases)('refuses every plan and step write under %s, changing nothing', async (_, lose) => {
    await lose();
    const before = await free.getPlan(planId);
    const writes: Array<() => unknown> = [
      () => store.markSending(stepId, request(), T0),
      () => store.markRefused(stepId, 'x', T0),
      () => store.setStepAmount(stepId + 1, 5n, T0),
      () => store.skipRemaining(planId, 'x', T0),
      () => store.finishPlan(planId, T0),
      () => store.insertPlan(draft({ seq: 1 }), { dry: false, now: T0, reason: 'r' }),
    ];
    for (const w of writes) expect(await code(w)).toBe('STATE_LEASE_LOST');
    expect(await free.getPlan(planId)).toEqual(before);
    expect(await free.listPlans()).toHaveLength(1);
    expect(await free.stepAttempts(stepId)).toEqual([]);
  });

  it('refuses the transitions out of sending once the lease is lost, leaving the step sending', async () => {
    await store.markSending(stepId, request(), T0);
    await setLease(ADDR, 'd2', 4n, 60_000);
    for (const w of [
      () => store.markAcknowledged(stepId, { status: 200, responseRaw: '{}' }, T0),
      () => store.markRejected(stepId, { error: 'x' }, T0),
      () => store.markFailed(stepId, { error: 'x' }, T0),
      () => store.markUnknown(stepId, { error: 'x' }, T0),
      () => store.markNotSent(stepId, 'x', T0),
    ]) {
      expect(await code(w)).toBe('STATE_LEASE_LOST');
    }
    expect((await free.getStep(stepId))?.state).toBe('sending');
  });

  it('refuses a plan without asking the database when the lease is not believed held', async () => {
    tokens.delete(ADDR);
    expect(await code(() => store.markSending(stepId, request(), T0))).toBe('STATE_LEASE_LOST');
    // Closed, any query would fail as STATE_IO: the lease answer comes first.
    await store.close();
    expect(await code(() => store.insertPlan(draft({ seq: 1 }), { dry: false, now: T0, reason: 'r' }))).toBe('STATE_LEASE_LOST');
    expect(await free.listPlans()).toHaveLength(1);
  });

  it('an unfenced store (the CLI) writes whoever holds the lease', async () => {
    await setLease(ADDR, 'd2', 9n, 60_000);
    await free.markSending(stepId, request(), T0);
    await free.markUnknown(stepId, { error: 'x' }, T0);
    expect((await free.resolve(stepId, true, 'operator', T0)).state).toBe('acknowledged');
  });

  it('drops poll records of wallets not leased, and keeps those of wallets leased', async () => {
    await store.recordPoll('mine', ADDR, T0, { ok: true, summary: summary() });
    await store.recordPoll('theirs', ADDR2, T0, { ok: true, summary: summary({ address: ADDR2 }) });
    expect((await free.walletStates()).map((w) => w.address)).toEqual([ADDR]);
    await setLease(ADDR, 'd2', 4n, 60_000); // lost since the poll began: dropped, not an error
    expect(await store.recordPoll('mine', ADDR, T0 + 1, { ok: false, error: 'HTTP 503' })).toEqual({ newEpoch: false });
    expect(await free.walletState(ADDR)).toMatchObject({ lastPollAt: T0, lastError: null });
  });

  it('recoverInFlight under a fence turns only leased wallets’ sending steps', async () => {
    const theirs = (await free.insertPlan(draft({ address: ADDR2 }), { dry: false, now: T0, reason: 'r' }))!;
    await store.markSending(stepId, request(), T0);
    await free.markSending(theirs.steps[0]!.id, request(), T0);
    expect((await store.recoverInFlight(T0 + 1)).map((s) => s.id)).toEqual([stepId]);
    expect((await free.getStep(theirs.steps[0]!.id))?.state).toBe('sending');
    expect(await store.recoverInFlight(T0 + 2, ADDR2)).toEqual([]);
  });

  it('a takeover waits for a fenced sending in flight; the new owner recovers it as unknown', async () => {
    // Hold the step's row so the old owner's markSending stops after its lease check, inside its
    // transaction (the lease row FOR SHARE), as a slow commit or a GC pause there would.
    const blocker = await admin.connect();
    const taker = await admin.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM steps WHERE id = $1 FOR UPDATE', [stepId]);
      const sending = store.markSending(stepId, request(), T0);
      await waitForLockWait(/UPDATE steps SET state = 'sending'/);
      // The new owner takes the wallet with a raised token, as the lease manager does: it must wait.
      const takeover = taker.query("UPDATE leases SET owner = 'd2', token = token + 1, expires_at = now() + interval '1 minute' WHERE address = $1", [ADDR]);
      await waitForLockWait(/UPDATE leases SET owner = 'd2'/);
      await blocker.query('ROLLBACK');
      expect((await sending).state).toBe('sending');
      await takeover;
      const lease = await admin.query<{ owner: string; token: string }>('SELECT owner, token::text AS token FROM leases WHERE address = $1', [ADDR]);
      expect(lease.rows[0]).toEqual({ owner: 'd2', token: '4' });

      const heir = await open(url, fenceOf('d2', new Map([[ADDR, 4n]])));
      try {
        const recovered = await heir.recoverInFlight(T0 + 5, ADDR);
        expect(recovered.map((s) => [s.id, s.state, s.error])).toEqual([[stepId, 'unknown', IN_FLIGHT_ERROR]]);
        // And the old owner can no longer write for the wallet.
        expect(await code(() => store.markAcknowledged(stepId, { status: 200, responseRaw: '{}' }, T0))).toBe('STATE_LEASE_LOST');
      } finally {
        await heir.close();
      }
    } finally {
      blocker.release();
      taker.release();
    }
  });
});

/** Resolves once some backend waits on a lock while running a query matching `query`. */
async function waitForLockWait(query: RegExp): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const r = await admin.query<{ query: string }>("SELECT query FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
    if (r.rows.some((row) => query.test(row.query))) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no backend waited on a lock for ${query}`);
}
