// The operator's view of a cluster through the CLI (issue 15): on shared PostgreSQL state, `status`
// says which daemon holds each wallet (id, host, pid) and until when, and which daemons are live;
// a wallet nobody holds says so; `actions` reads the same database. The state is made by a real
// `once`, the leases by a real LeaseManager on the same database, as another daemon would hold them.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseManager } from '../../src/cluster/leases.js';
import { CANARY_API_KEY, runCli, type TestWallet } from '../e2e/helpers.js';
import { sharedWorld, type SharedWorld } from './shared-world.js';

interface StatusBody {
  wallets: Array<{
    wallet: string;
    address: string;
    lastOkAt: number | null;
    lease?: { owner: string; host: string | null; pid: number | null; expiresAt: string; valid: boolean; token: string } | null;
  }>;
  cluster?: { daemons: Array<{ id: string; host: string; pid: number; expiresAt: string }> };
  note?: string;
}

describe('status and actions on shared PostgreSQL state', () => {
  let dir: string;
  let wallets: TestWallet[];
  let config: string;
  let env: NodeJS.ProcessEnv;
  let pool: pg.Pool;
  let world: SharedWorld;

  beforeEach(async () => {
    world = await sharedWorld(['w0', 'w1', 'w2']);
    ({ dir, wallets, config, env } = world);
    pool = new pg.Pool({ connectionString: world.url, max: 2 });
  });

  afterEach(async () => {
    await pool.end();
    await world.close();
  });

  const status = async (json: boolean) => {
    const r = await runCli(['status', ...(json ? ['--json'] : []), '--config', config], { cwd: dir, env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return r.stdout;
  };

  it('before any daemon ran: every wallet listed, no polls yet, and no schema created', async () => {
    const body = JSON.parse(await status(true)) as StatusBody;
    expect(body.wallets.map((w) => w.wallet)).toEqual(['w0', 'w1', 'w2']);
    expect(body.note).toMatch(/^no polls yet: no autoclaim state in the database/);
    const tables = await pool.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`);
    expect(tables.rows[0]).toEqual({ n: 0 });
    const actions = await runCli(['actions', '--config', config], { cwd: dir, env });
    // An empty journal, as status says "no polls yet" (exit 0, SPEC §3), and still no schema created.
    expect(actions.code).toBe(0);
    expect(actions.stdout).toMatch(/^no actions yet: no autoclaim state in the database at state.url/);
    expect((await pool.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`)).rows[0]).toEqual({ n: 0 });
  });

  it("shows each wallet's owner (id, host, pid) and lease expiry, the live daemons, and a wallet nobody holds", async () => {
    const once = await runCli(['once', '--config', config], { cwd: dir, env });
    expect(once.code).toBe(0);

    // Another daemon holds two of the three wallets.
    const held = [wallets[0]!.address, wallets[1]!.address];
    const manager = new LeaseManager({ db: pool, clock: { monotonic: () => performance.now() }, addresses: () => held, leaseMs: 60_000, id: 'node-b/4242/cafe', host: 'node-b', pid: 4242 });
    await manager.register();
    await manager.tick();
    await manager.settled();
    expect(manager.held()).toEqual([...held].sort());
    const dbNow = Number((await pool.query<{ t: number }>(`SELECT (extract(epoch FROM now()) * 1000)::float8 AS t`)).rows[0]?.t);

    try {
      const body = JSON.parse(await status(true)) as StatusBody;
      expect(body.note).toBeUndefined();
      expect(body.cluster?.daemons.map((d) => [d.id, d.host, d.pid])).toEqual([['node-b/4242/cafe', 'node-b', 4242]]);
      const byName = new Map(body.wallets.map((w) => [w.wallet, w]));
      for (const name of ['w0', 'w1']) {
        const lease = byName.get(name)?.lease;
        expect(lease, name).toMatchObject({ owner: 'node-b/4242/cafe', host: 'node-b', pid: 4242, valid: true });
        // About a lease from the database's now (60 s), not from this machine's clock.
        const until = Date.parse(lease?.expiresAt ?? '');
        expect(until - dbNow).toBeGreaterThan(50_000);
        expect(until - dbNow).toBeLessThanOrEqual(61_000);
      }
      // `once` handed w2 back when it stopped: free, nobody works it.
      expect(byName.get('w2')?.lease).toBeNull();
      // The state is read from PostgreSQL: the polls `once` made are there.
      expect(body.wallets.every((w) => w.lastOkAt !== null)).toBe(true);

      const text = await status(false);
      expect(text).toMatch(/\bowner\b.*\blease until\b/);
      expect(text).toMatch(new RegExp(`^w0\\b.*node-b/4242/cafe\\s+\\d{4}-\\d\\d-\\d\\dT`, 'm'));
      expect(text).toContain('1 live daemon(s): node-b/4242/cafe (host node-b, pid 4242)');

      // actions goes through the same access: the plans `once` recorded.
      const actions = await runCli(['actions', '--json', '--config', config], { cwd: dir, env });
      expect(actions.code).toBe(0);
      const plans = (JSON.parse(actions.stdout) as { plans: Array<{ wallet: string }> }).plans;
      expect(new Set(plans.map((p) => p.wallet))).toEqual(new Set(['w0', 'w1', 'w2']));
    } finally {
      await manager.release();
    }

    // Handed back on a clean stop: no owner, no live daemon.
    const after = JSON.parse(await status(true)) as StatusBody;
    expect(after.wallets.map((w) => w.lease)).toEqual([null, null, null]);
    expect(after.cluster?.daemons).toEqual([]);
  });

  it('keeps its SQLite output: no lease and no cluster without state.url', async () => {
    const r = await runCli(['status', '--json', '--config', config], { cwd: dir, env: { AUTOCLAIM_API_KEY: CANARY_API_KEY } });
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as StatusBody & Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['note', 'signing', 'wallets']);
    expect(body.wallets.every((w) => !('lease' in w))).toBe(true);
  });
});
