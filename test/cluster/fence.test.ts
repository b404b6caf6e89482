// The lease manager as the PostgreSQL store's fence: after another daemon takes a wallet over, the
// old owner cannot record anything for it — not `sending`, not an outcome, not a new plan — even
// while it still believes in its lease (its local deadline not yet passed); the new owner's
// `acquired` handler turns the step the old owner left `sending` into `unknown`.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseManager } from '../../src/cluster/leases.js';
import { StateError } from '../../src/errors.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Store } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { createDatabase } from '../support/postgres.js';
import { ADDR, draft, request, T0 } from '../store/fixtures.js';
import { expire } from './db.js';

let url: string;
const closers: Array<() => Promise<unknown>> = [];
beforeEach(async () => {
  url = await createDatabase();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A daemon: its lease manager and its store fenced by it (the store's migration makes the tables). */
async function daemon(id: string): Promise<{ leases: LeaseManager; store: Store }> {
  const leases = new LeaseManager({ db: pool(), clock: { monotonic: () => performance.now() }, addresses: () => [ADDR], leaseMs: 10_000, id });
  const store = await openPostgresStore(url, { logger: silentLogger(), fence: leases.fence });
  closers.push(async () => store.close());
  return { leases, store };
}

function pool(): pg.Pool {
  const p = new pg.Pool({ connectionString: url, max: 2 });
  closers.push(() => p.end());
  return p;
}

async function leaseLost(p: unknown): Promise<void> {
  const err = await Promise.resolve(p).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StateError);
  expect((err as StateError).code).toBe('STATE_LEASE_LOST');
}

describe('the store fenced by the lease manager', () => {
  it('refuses every write of the old owner after a takeover, and the new owner turns its `sending` into unknown', async () => {
    const a = await daemon('a');
    await a.leases.register();
    await a.leases.tick();
    await a.leases.settled();
    expect(a.leases.held()).toEqual([ADDR]);
    const plan = await a.store.insertPlan(draft(), { dry: false, reason: 'test', now: T0 });
    const [claim, deposit] = plan?.steps ?? [];
    if (claim === undefined || deposit === undefined) throw new Error('no steps');
    await a.store.markSending(claim.id, request(), T0);

    // a is cut off for a lease; b takes the wallet over, recovering it before working it.
    await expire(pool(), 'a');
    const b = await daemon('b');
    const recovered: number[] = [];
    b.leases.on('acquired', async (e) => {
      for (const s of await b.store.recoverInFlight(T0 + 1, e.address)) recovered.push(s.id);
    });
    await b.leases.register();
    await b.leases.tick();
    await b.leases.settled();
    expect(b.leases.held()).toEqual([ADDR]);
    expect(b.leases.tokenFor(ADDR)).toBe(2n);
    expect(recovered).toEqual([claim.id]);

    // a still believes (its local deadline is seconds away), but the database refuses it.
    expect(a.leases.tokenFor(ADDR)).toBe(1n);
    await leaseLost(a.store.markAcknowledged(claim.id, { status: 200 }, T0 + 2));
    await leaseLost(a.store.markSending(deposit.id, request(), T0 + 2));
    await leaseLost(a.store.recordClaimed(claim.id, 1n, T0 + 2));
    await leaseLost(a.store.insertPlan(draft({ epoch: '2025-06-02' }), { dry: false, reason: 'test', now: T0 + 2 }));
    expect((await b.store.getStep(claim.id))?.state).toBe('unknown');
    expect((await b.store.getStep(deposit.id))?.state).toBe('planned');

    // b, the owner now, may write.
    await b.store.reconcile(claim.id, false, { note: 'not applied' }, T0 + 3);
    await a.leases.tick();
    expect(a.leases.tokenFor(ADDR)).toBeUndefined();
    await leaseLost(a.store.markSending(deposit.id, request(), T0 + 4)); // refused before touching the database
  });
});
