// The signer journal's WAL is cut back to the state database's limit (helper 38), as the state's is
// (test/store/wal-size.test.ts): behind a long reader (a backup, an operator's sqlite3 left in a
// transaction) every commit extends the WAL's file, and without journal_size_limit the file kept
// that size for the journal's life. Real SQLite files and real second connections; sizes, not times.
// The WAL is grown by a side connection's large rows (a journal row is small: growing it by
// signatures alone takes ~100,000 fsyncs); what is judged is the journal's own connection, whose
// commits start the WAL over once the reader is gone.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { SqliteJournal, type JournalRecord } from '../../src/signer/journal.js';
import { WAL_SIZE_LIMIT_BYTES } from '../../src/store/sqlite/db.js';
import { tempDir } from '../e2e/helpers.js';

const SOL = 1_000_000_000n;
const A = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
let n = 0;
const rec = (): JournalRecord => {
  n++;
  return { key: 'treasury', wallet: A, op: 'deposit', symbol: 'SOL2X', amountLamports: SOL, ts: 1_764_000_000 + n, epoch: '2026-11-25', messageSha256: `${n}`.padStart(64, '0'), signedAtMs: 1_764_000_000_000 + n, plan: undefined, step: undefined };
};

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

it("a journal WAL grown past the limit behind a long reader is cut back by the journal's next commits once the reader is gone", async () => {
  const { dir, cleanup } = tempDir('autoclaim-journal-wal-');
  cleanups.push(cleanup);
  const path = join(dir, 'journal.db');
  const journal = SqliteJournal.open(path);
  cleanups.push(() => journal.close());
  const sign = () => journal.batch([A], (tx) => tx.record(rec(), 1_000n * SOL));
  expect(await sign()).toBe('recorded');

  const reader = new Database(path, { readonly: true });
  cleanups.push(() => reader.close());
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM signatures').get();
  const side = new Database(path);
  cleanups.push(() => side.close());
  side.exec('CREATE TABLE pad (x BLOB)');
  const pad = side.prepare('INSERT INTO pad (x) VALUES (?)');
  const walSize = () => statSync(`${path}-wal`).size;
  while (walSize() <= 2 * WAL_SIZE_LIMIT_BYTES) pad.run(Buffer.alloc(1024 * 1024, 1));
  reader.exec('COMMIT');

  // The automatic checkpoint catches up at the next commit; the one after starts the WAL over.
  for (let k = 0; k < 3; k++) expect(await sign()).toBe('recorded');
  expect(walSize()).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
});
