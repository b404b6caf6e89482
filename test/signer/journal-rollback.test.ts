// The SQLite signer journal across operator mistakes: deleted and made anew, or an older backup put
// back. Either forgets signatures that were handed out, so every day cap and every epoch's claim
// could be signed again. The journal's mark file (`<journal>.mark`, the send mark of the daemon's
// lock file, store/sqlite/lock.ts) keeps the newest signature; a journal below it is refused.
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresJournal } from '../../src/signer/journal-postgres.js';
import { SqliteJournal, markPath, type JournalRecord, type SignerJournal } from '../../src/signer/journal.js';
import { tempDir } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';

const SOL = 1_000_000_000n;
const CAP = 10n * SOL;
const T0 = 1_764_000_000_000;
const A = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';

let n = 0;
function rec(over: Partial<JournalRecord> = {}): JournalRecord {
  n++;
  return { key: 'treasury', wallet: A, op: 'deposit', symbol: 'SOL2X', amountLamports: CAP, ts: 1_764_000_000 + n, epoch: undefined, messageSha256: `${n}`.padStart(64, '0'), signedAtMs: T0 + n, plan: undefined, step: undefined, ...over };
}
const claim = (epoch: string): JournalRecord => rec({ op: 'claim', symbol: undefined, amountLamports: undefined, epoch });

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function journalPath(): string {
  const { dir, cleanup } = tempDir('autoclaim-journal-rollback-');
  cleanups.push(cleanup);
  return join(dir, 'journal.db');
}

function open(path: string): SqliteJournal {
  const j = SqliteJournal.open(path);
  cleanups.push(() => j.close());
  return j;
}

async function one(j: SignerJournal, r: JournalRecord): Promise<string> {
  return j.batch([r.wallet], (tx) => tx.record(r, CAP));
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

async function codeOfAsync(fn: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await fn();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

/** The journal's files (its -wal and -shm too), as an operator's `rm journal.db*` or a backup would take them. */
const FILES = ['', '-wal', '-shm'];

describe('the SQLite signer journal against an older copy of itself', () => {
  it('refuses a journal deleted and made anew: the day cap already spent is not spent again', async () => {
    const path = journalPath();
    const j = open(path);
    expect(await one(j, rec())).toBe('recorded');
    expect(await one(j, rec({ amountLamports: 1n }))).toBe('day_cap');
    j.close();
    for (const f of FILES) rmSync(path + f, { force: true });
    expect(codeOf(() => open(path))).toBe('STATE_ROLLED_BACK');
  });

  it('refuses a backup from before a claim: that epoch’s claim is not signed twice', async () => {
    const path = journalPath();
    const backup = `${path}.bak`;
    const j = open(path);
    expect(await one(j, claim('2026-11-24'))).toBe('recorded');
    j.close();
    for (const f of FILES) if (existsSync(path + f)) copyFileSync(path + f, backup + f);
    const again = open(path);
    expect(await one(again, claim('2026-11-25'))).toBe('recorded');
    again.close();
    for (const f of FILES) {
      rmSync(path + f, { force: true });
      if (existsSync(backup + f)) copyFileSync(backup + f, path + f);
    }
    expect(codeOf(() => open(path))).toBe('STATE_ROLLED_BACK');
    // The same spelled another way (a symlink to it) meets the same mark.
    const link = `${path}.link`;
    symlinkSync(path, link);
    expect(codeOf(() => open(link))).toBe('STATE_ROLLED_BACK');
  });

  it('opens the newest journal, shared by two signers, and an older one once the mark is removed knowingly', async () => {
    const path = journalPath();
    const one1 = open(path);
    const two = open(path);
    expect(await one(one1, rec({ amountLamports: SOL }))).toBe('recorded');
    expect(await one(two, rec({ amountLamports: SOL }))).toBe('recorded');
    expect(await one(one1, claim('2026-11-25'))).toBe('recorded');
    one1.close();
    two.close();
    // Reopened as it is: nothing lost, nothing refused.
    const same = open(path);
    expect(await one(same, claim('2026-11-25'))).toBe('already_signed_epoch');
    same.close();
    for (const f of FILES) rmSync(path + f, { force: true });
    expect(codeOf(() => open(path))).toBe('STATE_ROLLED_BACK');
    rmSync(markPath(path));
    const fresh = open(path);
    expect(await one(fresh, claim('2026-11-25'))).toBe('recorded');
  });
});

describe('the signer journal in a directory someone besides the signer can write', () => {
  // The mark sits beside the journal: whoever can write their directory (the daemon, when it is the
  // daemon's group's) deletes both while the signer is down, and the caps start over unnoticed.
  it('is refused, the SQLite journal and a PostgreSQL journal’s mark file alike (STATE_UNSAFE)', async () => {
    const dir = join(journalPath(), '..', 'shared');
    mkdirSync(dir);
    chmodSync(dir, 0o770);
    const path = join(dir, 'journal.db');
    expect(codeOf(() => open(path))).toBe('STATE_UNSAFE');
    // The same journal spelled through a symlink from a directory of the signer's own: its real directory counts.
    const link = join(dir, '..', 'journal-link.db');
    symlinkSync(path, link);
    expect(codeOf(() => open(link))).toBe('STATE_UNSAFE');
    // Refused before any connection is tried.
    expect(await codeOfAsync(() => PostgresJournal.open('postgres://nobody@127.0.0.1:1/none', { markFile: join(dir, 'pg.mark') }))).toBe('STATE_UNSAFE');
    chmodSync(dir, 0o750);
    expect(await one(open(path), rec())).toBe('recorded');
  });
});

describe('the PostgreSQL signer journal with state.mark_file', () => {
  it('refuses a journal whose tables were dropped or restored from before its signatures, not one a signature was forgotten from', async () => {
    const url = await createDatabase();
    const markFile = join(journalPath(), '..', 'pg.mark');
    const open = async (): Promise<PostgresJournal> => {
      const j = await PostgresJournal.open(url, { markFile });
      cleanups.push(() => j.close());
      return j;
    };
    const j = await open();
    expect(await one(j, rec())).toBe('recorded');
    // A record forgotten in its own batch (its backend failed) is no signature the mark may count.
    expect(await j.batch([A], async (tx) => { const r = claim('2026-11-25'); await tx.record(r, CAP); await tx.forget(r); return 'forgot'; })).toBe('forgot');
    await j.close();
    const same = await open();
    expect(await one(same, rec({ amountLamports: 1n }))).toBe('day_cap');
    await same.close();
    // The tables dropped (or the database put back from a backup): they are made anew, empty.
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    await admin.query('DROP TABLE signer_signatures, signer_day_totals CASCADE');
    await admin.end();
    expect(await codeOfAsync(open)).toBe('STATE_ROLLED_BACK');
    // Without the mark it opens, and the day cap is spent again: what state.mark_file is for.
    const unguarded = await PostgresJournal.open(url, {});
    cleanups.push(() => unguarded.close());
    expect(await one(unguarded, rec())).toBe('recorded');
  });
});
