// The PostgreSQL journal's per-wallet advisory lock makes its checks see every batch committed
// before it only under READ COMMITTED, where each statement after the lock takes a fresh snapshot.
// A database (or role) whose default isolation is REPEATABLE READ or SERIALIZABLE (ALTER DATABASE …
// SET default_transaction_isolation) takes a transaction's one snapshot at its first statement —
// the lock it waits on — so a signer waiting for another's batch would check its day cap against
// the total from before that batch, and sign past the cap (SERIALIZABLE: fail instead). The pool
// sets READ COMMITTED itself, as it sets synchronous_commit, whatever the server's defaults.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresJournal } from '../../src/signer/journal-postgres.js';
import { HOUR_MS, type JournalRecord, type SignerJournal } from '../../src/signer/journal.js';
import { until } from '../cluster/journal.js';
import { createDatabase } from '../support/postgres.js';

const SOL = 1_000_000_000n;
const CAP = 25n * SOL;
const T0 = 1_764_000_000_000;
const A = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';

const deposit = (n: number, signedAtMs: number): JournalRecord => ({
  key: 'treasury',
  wallet: A,
  op: 'deposit',
  symbol: 'SOL2X',
  amountLamports: 20n * SOL,
  ts: 1_764_000_000 + n,
  epoch: undefined,
  messageSha256: String(n).padStart(64, '0'),
  signedAtMs,
  plan: undefined,
  step: undefined,
});

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.each(['repeatable read', 'serializable'])('the PostgreSQL signer journal on a database whose default isolation is %s', (level) => {
  it('holds the day cap for a signer that waited on another’s batch for the same wallet', async () => {
    const url = await createDatabase();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    cleanups.push(() => admin.end());
    await admin.query(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET default_transaction_isolation = '${level}'`);
    const open = async (): Promise<SignerJournal> => {
      const j = await PostgresJournal.open(url, {});
      cleanups.push(() => Promise.resolve(j.close()));
      return j;
    };
    const [one, two] = [await open(), await open()];

    // The first signer records 20 of the wallet's 25 SOL and holds its transaction open (as while a
    // remote backend signs).
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = one.batch([A], async (tx) => {
      const v = await tx.record(deposit(1, T0), CAP);
      entered();
      await gate;
      return v;
    });
    await inside;
    // The second asks for 20 more an hour later (another hour's bucket: no row both write), and
    // waits on the wallet's lock until the first commits.
    const second = two.batch([A], (tx) => tx.record(deposit(2, T0 + HOUR_MS), CAP)).catch((err: unknown) => `failed: ${String(err)}`);
    await until(
      'the second batch waits on the wallet lock',
      async () => (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0]?.n,
      (n) => n === 1,
    );
    release();
    expect(await first).toBe('recorded');
    expect(await second).toBe('day_cap');
    expect((await one.records()).map((r) => r.amountLamports)).toEqual([20n * SOL]);
  });
});
