// The signer service's SQLite journal checkpoints its WAL from a worker thread (signer/checkpointer.ts),
// not inside a signing commit: records reach the database file itself while the signing connection's
// own automatic checkpoint is thousands of pages away, and closing the journal stops the worker and
// leaves no WAL behind.
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { startCheckpointer } from '../../src/signer/checkpointer.js';
import { loadSignerConfig } from '../../src/signer/config.js';
import { openSignerJournal } from '../../src/signer/journal-open.js';
import { SqliteJournal, type JournalRecord } from '../../src/signer/journal.js';
import { tempDir } from '../e2e/helpers.js';
import { captureLog } from '../support/log.js';
import { signerSetup } from './support.js';

const A = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
const rec = (n: number): JournalRecord => ({ key: 'treasury', wallet: A, op: 'deposit', symbol: 'SOL2X', amountLamports: 1n, ts: 1_764_000_000, epoch: undefined, messageSha256: `${n}`.padStart(64, '0'), signedAtMs: 1_764_000_000_000 + n, plan: undefined, step: undefined });

/** The signatures in the database file alone, as a copy without its WAL reads them: what was checkpointed. */
function checkpointedRows(path: string, dir: string): number {
  const copy = join(dir, `copy-${Math.random().toString(36).slice(2)}.db`);
  copyFileSync(path, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return (db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'signatures'").pluck().get() as number) === 0 ? 0 : (db.prepare('SELECT count(*) FROM signatures').pluck().get() as number);
  } finally {
    db.close();
  }
}

describe('the signer journal’s background checkpoints', () => {
  const cleanups: Array<() => void | Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('bring the records into the database file from the worker, and closing leaves no WAL', async () => {
    const { dir, cleanup } = tempDir('autoclaim-journal-ckpt-');
    cleanups.push(cleanup);
    const path = join(dir, 'journal.db');
    // As the service opens it (signer/journal-open.ts).
    const journal = SqliteJournal.open(path, { backgroundCheckpoints: true });
    const checkpointer = startCheckpointer(path, silentLogger(), 10);
    let closed = false;
    cleanups.push(async () => {
      if (closed) return;
      await checkpointer.stop();
      journal.close();
    });
    for (let i = 0; i < 20; i++) expect(await journal.batch([A], (tx) => tx.record(rec(i), 10n ** 18n))).toBe('recorded');
    // 20 small commits are far below the signing connection's own checkpoint (thousands of pages):
    // only the worker brings them into the file.
    await expect.poll(() => checkpointedRows(path, dir), { timeout: 10_000, interval: 20 }).toBe(20);
    await checkpointer.stop();
    journal.close();
    closed = true;
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('are what the service’s journal (state.path) runs', async () => {
    const setup = signerSetup();
    cleanups.push(() => setup.cleanup());
    const log = captureLog('debug');
    const loaded = loadSignerConfig(setup.configFile, { env: {}, cwd: setup.dir });
    expect(loaded.errors).toEqual([]);
    const journal = await openSignerJournal(loaded.config!, { env: {}, redactor: log.redactor, logger: log.logger });
    let closed = false;
    cleanups.push(() => (closed ? undefined : journal.close()));
    for (let i = 0; i < 20; i++) await journal.batch([A], (tx) => tx.record(rec(i), 10n ** 18n));
    await expect.poll(() => checkpointedRows(setup.journal, setup.dir), { timeout: 10_000, interval: 50 }).toBe(20);
    await journal.close();
    closed = true;
    expect(existsSync(`${setup.journal}-wal`)).toBe(false);
  });

  it('without them (a journal opened to read), nothing is checkpointed before the automatic checkpoint', async () => {
    const { dir, cleanup } = tempDir('autoclaim-journal-ckpt-');
    cleanups.push(cleanup);
    const path = join(dir, 'journal.db');
    const journal = SqliteJournal.open(path);
    cleanups.push(() => journal.close());
    for (let i = 0; i < 20; i++) await journal.batch([A], (tx) => tx.record(rec(i), 10n ** 18n));
    expect(checkpointedRows(path, dir)).toBe(0);
  });
});
