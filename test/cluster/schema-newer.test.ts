// Upgrades review (helper 31): a rolling upgrade on one PostgreSQL. The newer autoclaim migrates the
// shared schema at its start while older daemons keep running. Before, an older daemon checked the
// schema's version only at its own start: it went on holding and signing for its wallets on a
// schema whose meaning it did not know, and the newer daemon (another config digest) left them to
// it. Now the older one reads the version at each heartbeat, and on a newer one steps aside for
// good: its leases dropped and handed back, its row gone, signing refused; the newer daemon takes
// every wallet at its next rounds.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseManager, type LeaseEventMap } from '../../src/cluster/leases.js';
import { readCluster } from '../../src/cluster/sql.js';
import { clusterConditions } from '../../src/service/cluster-signals.js';
import { PG_SCHEMA_VERSION } from '../../src/store/postgres/migrations.js';
import { captureLog } from '../support/log.js';
import { clusterDb, owners, type ClusterDb } from './db.js';

const addresses = ['w1', 'w2', 'w3', 'w4'];
const realClock = { monotonic: () => performance.now() };

let db: ClusterDb;
beforeEach(async () => {
  db = await clusterDb();
});
afterEach(async () => {
  await db.close();
});

describe('a shared schema migrated by a newer autoclaim while this one runs', () => {
  it('the older daemon steps aside at its next round and the newer one takes every wallet', async () => {
    const log = captureLog();
    const older = new LeaseManager({ db: db.pool(), clock: realClock, addresses: () => addresses, config: () => 'v-old', knownSchema: PG_SCHEMA_VERSION, leaseMs: 5_000, id: 'older', logger: log.logger });
    const lost: Array<LeaseEventMap['lost']> = [];
    older.on('lost', (e) => void lost.push(e));
    await older.register();
    await older.tick();
    await older.settled();
    expect(older.held()).toEqual(addresses);
    expect(older.schemaRefusal()).toBeUndefined();

    // The newer release's start: its migration, then its daemon (its own config digest, as the
    // schema version is folded into it).
    await db.sql.query('INSERT INTO autoclaim_schema (version) VALUES ($1)', [PG_SCHEMA_VERSION + 1]);
    const newer = new LeaseManager({ db: db.pool(), clock: realClock, addresses: () => addresses, config: () => 'v-new', knownSchema: PG_SCHEMA_VERSION + 1, leaseMs: 5_000, id: 'newer' });
    await newer.register();

    await older.tick();
    expect(older.held()).toEqual([]);
    for (const a of addresses) expect(older.tokenFor(a)).toBeUndefined();
    expect(lost.map((e) => e.why)).toEqual(addresses.map(() => 'schema_newer'));
    expect(older.schemaRefusal()).toMatchObject({ found: PG_SCHEMA_VERSION + 1, known: PG_SCHEMA_VERSION });
    expect(clusterConditions(older).find((c) => c.kind === 'schema_newer')?.bad).toBe(true);
    expect(log.events('cluster.schema_newer')).toHaveLength(1);
    const view = await readCluster(db.sql);
    expect(view.daemons.map((d) => d.id)).toEqual(['newer']);
    expect((await owners(db.sql)).size).toBe(0);

    // The newer daemon sees no other config and takes the wallets (a lease of grace for wallets
    // not in every live list does not apply: it is alone).
    for (let i = 0; i < 3 && newer.held().length < addresses.length; i++) {
      await newer.tick();
      await newer.settled();
      await older.tick();
    }
    expect(newer.held()).toEqual(addresses);
    expect(newer.configConflict()).toBeUndefined();
    // The older one stays out: no row, no lease, however many rounds it runs.
    await older.tick();
    expect(older.held()).toEqual([]);
    expect((await readCluster(db.sql)).daemons.map((d) => d.id)).toEqual(['newer']);
    expect([...(await owners(db.sql)).values()]).toEqual(addresses.map(() => 'newer'));
    expect(log.events('cluster.schema_newer')).toHaveLength(1);
    await newer.release();
  });

  it('a schema this daemon knows changes nothing', async () => {
    const m = new LeaseManager({ db: db.pool(), clock: realClock, addresses: () => addresses, knownSchema: PG_SCHEMA_VERSION, leaseMs: 5_000, id: 'a' });
    await m.register();
    await m.tick();
    await m.settled();
    expect(m.held()).toEqual(addresses);
    expect(m.schemaRefusal()).toBeUndefined();
    await m.release();
  });
});
