// The signer journal's contract, the same for SQLite (state.path) and PostgreSQL (state.url, a
// throwaway database): the verdicts (recorded, repeat, one claim per wallet per epoch, the rolling
// day cap), group commit (one batch, one transaction: each record sees those before it; a batch that
// throws leaves nothing), forget, and batches racing for one wallet — on PostgreSQL from two
// journals (two signers' pools) — never exceeding the caps.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Lamports } from '../../src/amount.js';
import { PostgresJournal } from '../../src/signer/journal-postgres.js';
import { SqliteJournal, type JournalRecord, type SignerJournal } from '../../src/signer/journal.js';
import { tempDir } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';

const SOL = 1_000_000_000n;
const DAY = 86_400_000;
const T0 = 1_764_000_000_000;
const A = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
const B = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

let n = 0;
function rec(over: Partial<JournalRecord> = {}): JournalRecord {
  n++;
  return { key: 'treasury', wallet: A, op: 'deposit', symbol: 'SOL2X', amountLamports: SOL, ts: 1_764_000_000 + n, epoch: '2026-11-25', messageSha256: `${n}`.padStart(64, '0'), signedAtMs: T0, plan: undefined, step: undefined, ...over };
}
const claim = (over: Partial<JournalRecord> = {}): JournalRecord => rec({ op: 'claim', symbol: undefined, amountLamports: undefined, ...over });

interface Kind {
  name: string;
  /** A fresh, empty journal; `again` opens a second journal on the same store (another signer). */
  open(): Promise<{ journal: SignerJournal; again: () => Promise<SignerJournal> }>;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const KINDS: Kind[] = [
  {
    name: 'SQLite',
    open: () => {
      const { dir, cleanup } = tempDir('autoclaim-journal-');
      cleanups.push(cleanup);
      const path = join(dir, 'journal.db');
      const journal = SqliteJournal.open(path);
      cleanups.push(() => journal.close());
      // Another signer on the same file is another process (its BEGIN IMMEDIATE waits in SQLite,
      // synchronously): in one process the race is between batches of one journal.
      return Promise.resolve({ journal, again: () => Promise.resolve(journal) });
    },
  },
  {
    name: 'PostgreSQL',
    open: async () => {
      const url = await createDatabase();
      const opened = async (): Promise<SignerJournal> => {
        const j = await PostgresJournal.open(url, {});
        cleanups.push(() => j.close());
        return j;
      };
      return { journal: await opened(), again: opened };
    },
  },
];

/** One record in a batch of its own: its verdict. */
async function one(j: SignerJournal, r: JournalRecord, cap: Lamports = 25n * SOL): Promise<string> {
  return j.batch([r.wallet], (tx) => tx.record(r, cap));
}

describe.each(KINDS)('the signer journal on $name', (kind) => {
  let journal: SignerJournal;
  let again: () => Promise<SignerJournal>;

  async function fresh(): Promise<void> {
    ({ journal, again } = await kind.open());
  }

  it('records a signature and reads it back exactly', async () => {
    await fresh();
    // Lamports far beyond 2^53 (SQLite's INTEGER is 64-bit signed; PostgreSQL's numeric(20,0) wider).
    const r = rec({ amountLamports: 9_000_000_000_000_000_000n, plan: '7', step: '2' });
    expect(await one(journal, r, 9_000_000_000_000_000_000n)).toBe('recorded');
    const c = claim({ key: 'ops', wallet: B });
    expect(await one(journal, c)).toBe('recorded');
    expect(await journal.records()).toEqual([
      { key: 'treasury', wallet: A, op: 'deposit', symbol: 'SOL2X', amountLamports: 9_000_000_000_000_000_000n, ts: r.ts, epoch: '2026-11-25', messageSha256: r.messageSha256, signedAtMs: T0, plan: '7', step: '2' },
      { key: 'ops', wallet: B, op: 'claim', symbol: null, amountLamports: null, ts: c.ts, epoch: '2026-11-25', messageSha256: c.messageSha256, signedAtMs: T0, plan: null, step: null },
    ]);
  });

  it('answers repeat for the same message of the same wallet, recording it once', async () => {
    await fresh();
    const r = rec();
    expect(await one(journal, r)).toBe('recorded');
    expect(await one(journal, { ...r, signedAtMs: T0 + 5 })).toBe('repeat');
    // The same hash for another wallet is another message.
    expect(await one(journal, { ...r, wallet: B })).toBe('recorded');
    expect(await journal.records()).toHaveLength(2);
  });

  it('records one claim per wallet per epoch', async () => {
    await fresh();
    expect(await one(journal, claim())).toBe('recorded');
    expect(await one(journal, claim())).toBe('already_signed_epoch');
    expect(await one(journal, claim({ wallet: B }))).toBe('recorded');
    expect(await one(journal, claim({ epoch: '2026-11-26' }))).toBe('recorded');
    expect(await journal.records()).toHaveLength(3);
  });

  it('holds the day cap over any 24 hours of the signer’s clock, per wallet', async () => {
    await fresh();
    expect(await one(journal, rec({ amountLamports: 10n * SOL }))).toBe('recorded');
    expect(await one(journal, rec({ amountLamports: 15n * SOL, signedAtMs: T0 + 1000 }))).toBe('recorded');
    expect(await one(journal, rec({ amountLamports: 1n, signedAtMs: T0 + 2000 }))).toBe('day_cap');
    expect(await one(journal, rec({ wallet: B, amountLamports: 25n * SOL }))).toBe('recorded');
    // A day after the first, its 10 SOL are out of the window; the second's 15 are not.
    expect(await one(journal, rec({ amountLamports: 10n * SOL, signedAtMs: T0 + DAY }))).toBe('recorded');
    expect(await one(journal, rec({ amountLamports: 1n, signedAtMs: T0 + DAY + 1 }))).toBe('day_cap');
    expect((await journal.records()).map((r) => r.amountLamports)).toEqual([10n * SOL, 15n * SOL, 25n * SOL, 10n * SOL]);
  });

  it('commits a batch as one: each record sees those before it; forget removes one; a batch that throws leaves nothing', async () => {
    await fresh();
    const verdicts = await journal.batch([A, B], async (tx) => {
      const out = [await tx.record(claim(), 25n * SOL), await tx.record(claim(), 25n * SOL), await tx.record(rec({ amountLamports: 20n * SOL }), 25n * SOL), await tx.record(rec({ amountLamports: 6n * SOL }), 25n * SOL)];
      const gone = rec({ wallet: B });
      out.push(await tx.record(gone, 25n * SOL));
      await tx.forget(gone);
      return out;
    });
    expect(verdicts).toEqual(['recorded', 'already_signed_epoch', 'recorded', 'day_cap', 'recorded']);
    expect((await journal.records()).map((r) => [r.wallet, r.op])).toEqual([
      [A, 'claim'],
      [A, 'deposit'],
    ]);
    await expect(
      journal.batch([B], async (tx) => {
        await tx.record(claim({ wallet: B }), 25n * SOL);
        throw new Error('the backend failed after the record');
      }),
    ).rejects.toThrow();
    expect(await journal.records()).toHaveLength(2);
    // Still usable after a failed batch.
    expect(await one(journal, claim({ wallet: B }))).toBe('recorded');
  });

  it('never exceeds the caps when batches race for one wallet, from two journals on one store', async () => {
    await fresh();
    const other = await again();
    // Each batch holds its transaction across an await, as one waiting for a remote backend does.
    const racer = (j: SignerJournal, r: JournalRecord) =>
      j.batch([r.wallet], async (tx) => {
        const v = await tx.record(r, 25n * SOL);
        await new Promise((res) => setTimeout(res, 5));
        return v;
      });
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => racer(i % 2 === 0 ? journal : other, claim())));
    expect(claims.filter((v) => v === 'recorded')).toHaveLength(1);
    const deposits = await Promise.all(Array.from({ length: 12 }, (_, i) => racer(i % 2 === 0 ? journal : other, rec({ amountLamports: 3n * SOL }))));
    expect(deposits.filter((v) => v === 'recorded')).toHaveLength(8);
    const total = (await other.records()).reduce((s, r) => s + (r.amountLamports ?? 0n), 0n);
    expect(total).toBe(24n * SOL);
  });
});
