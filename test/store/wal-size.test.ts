// The WAL's file does not keep the size a long reader made it grow to (months of running review).
// While a reader holds a snapshot, no checkpoint can let the WAL start over, so every commit
// extends its file; after the reader leaves, SQLite reuses the file from its start but never made
// it smaller: the disk spent for one long `sqlite3` session or backup stayed spent for the state
// file's life. Real SQLite file, a real second connection; sizes, not times.
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import { WAL_SIZE_LIMIT_BYTES } from '../../src/store/sqlite/db.js';
import { freshTempDir, open, summary } from './fixtures.js';

const tmp = freshTempDir();
let store: SqliteStore | undefined;
let reader: Database.Database | undefined;
afterEach(() => {
  reader?.close();
  store?.close();
});

it('a WAL grown past the limit behind a long reader is cut back once the reader is gone', () => {
  store = open(tmp.dbPath);
  const s = store;
  // Summaries of ~100 KB, each one new text, so each poll's record adds its own frames.
  const poll = (i: number) =>
    s.recordPoll(`w${i % 20}`, `Addr${String(i % 20).padStart(40, '1')}`, 1_800_000_000_000 + i, {
      ok: true,
      summary: summary({ address: `Addr${String(i % 20).padStart(40, '1')}`, raw: { pad: String(i).repeat(100_000 / String(i).length) } }),
    });
  const walSize = () => statSync(`${tmp.dbPath}-wal`).size;
  poll(0);
  reader = new Database(tmp.dbPath, { readonly: true });
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM wallet_state').get();

  let i = 1;
  while (walSize() <= 2 * WAL_SIZE_LIMIT_BYTES) poll(i++);
  reader.exec('COMMIT');
  reader.close();
  reader = undefined;
  // The automatic checkpoint catches up at the next commit; the one after starts the WAL over.
  for (let k = 0; k < 3; k++) poll(i++);
  expect(walSize()).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
});
