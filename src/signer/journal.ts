// The signer's journal: a record of every signature, committed (synchronous=FULL) before the
// signature leaves the process (SPEC §7). The checks the journal decides — one claim per wallet per
// epoch, the rolling day cap — run in the same IMMEDIATE transaction as the insert, so two signer
// processes on one file, or a crash between commit and answer, can never yield more than the policy.
//
// The day cap's running total: a table of per-wallet per-hour sums (day_totals), kept by triggers
// on the signatures table — so every writer keeps it, a signer of an older version on the same file
// included, and a record removed by forget() leaves it too. The check reads the buckets of the
// window's hours (at most 25 rows whatever the wallet's history, plus any hours ahead of a clock
// that stepped back); only when that sum, which counts the window's oldest hour whole, is over the
// cap does it count that hour's rows exactly: the verdict is the one a sum over the window's rows
// gives, near the boundary included.
import { chmodSync, closeSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Lamports } from '../amount.js';
import type { SignedOp } from '../domain.js';
import { StateError } from '../errors.js';
import { WAL_SIZE_LIMIT_BYTES } from '../store/sqlite/db.js';
import { ensureFile, realStatePath } from '../store/sqlite/files.js';
import { sendMarkIn, type SendMark } from '../store/sqlite/lock.js';
import { inBatches } from '../store/sqlite/prune.js';
import { assertOwnDirectory } from './own-directory.js';

export interface JournalRecord {
  key: string;
  wallet: string;
  op: SignedOp;
  symbol: string | undefined;
  amountLamports: Lamports | undefined;
  ts: number;
  epoch: string | undefined;
  /** sha256 of the exact message, hex. */
  messageSha256: string;
  /** The signer's clock, Unix ms. */
  signedAtMs: number;
  plan: string | undefined;
  step: string | undefined;
}

/**
 * - recorded: a new signature may be returned.
 * - repeat: this exact message was signed before (a retry after a lost answer): Ed25519 is
 *   deterministic, so answering it again hands out the same signature, not a second one.
 * - already_signed_epoch / day_cap: refused; nothing written.
 */
export type JournalVerdict = 'recorded' | 'repeat' | 'already_signed_epoch' | 'day_cap';

/** The day cap's window: any 24 hours by the signer's clock. */
export const DAY_MS = 86_400_000;
/** The running total's bucket: an hour of the signer's clock (signed_at_ms / HOUR_MS, rounded down). */
export const HOUR_MS = 3_600_000;

/**
 * The day cap's window for a signature at `atMs` (signed_at_ms > atMs - DAY_MS) in buckets: the
 * hour the window starts in (`first`, only partly inside it) and where its part inside ends.
 */
export function dayWindow(atMs: number): { sinceMs: number; first: number; firstEndMs: number } {
  const sinceMs = atMs - DAY_MS;
  const first = Math.floor(sinceMs / HOUR_MS);
  return { sinceMs, first, firstEndMs: (first + 1) * HOUR_MS };
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS signatures (
  id INTEGER PRIMARY KEY,
  key_name TEXT NOT NULL,
  wallet TEXT NOT NULL,
  op TEXT NOT NULL,
  symbol TEXT,
  amount_lamports INTEGER,
  ts INTEGER NOT NULL,
  epoch TEXT,
  message_sha256 TEXT NOT NULL,
  signed_at_ms INTEGER NOT NULL,
  plan TEXT,
  step TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS signatures_one_claim_per_epoch ON signatures (wallet, epoch) WHERE op = 'claim';
CREATE UNIQUE INDEX IF NOT EXISTS signatures_message ON signatures (wallet, message_sha256);
CREATE INDEX IF NOT EXISTS signatures_wallet_time ON signatures (wallet, signed_at_ms);
`;

/**
 * Version 1: the day cap's running total. A journal made before it (user_version 0) gets the table
 * filled from its signatures in the same transaction that creates it, so its caps hold across the
 * upgrade. The triggers are the only writers of day_totals.
 */
const DAY_TOTALS = `
CREATE TABLE IF NOT EXISTS day_totals (
  wallet TEXT NOT NULL,
  hour INTEGER NOT NULL,
  lamports INTEGER NOT NULL,
  PRIMARY KEY (wallet, hour)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS signatures_day_total_add AFTER INSERT ON signatures WHEN NEW.amount_lamports IS NOT NULL BEGIN
  INSERT INTO day_totals (wallet, hour, lamports) VALUES (NEW.wallet, NEW.signed_at_ms / ${HOUR_MS}, NEW.amount_lamports)
    ON CONFLICT (wallet, hour) DO UPDATE SET lamports = lamports + excluded.lamports;
END;
CREATE TRIGGER IF NOT EXISTS signatures_day_total_remove AFTER DELETE ON signatures WHEN OLD.amount_lamports IS NOT NULL BEGIN
  UPDATE day_totals SET lamports = lamports - OLD.amount_lamports WHERE wallet = OLD.wallet AND hour = OLD.signed_at_ms / ${HOUR_MS};
END;
DELETE FROM day_totals;
INSERT INTO day_totals (wallet, hour, lamports)
  SELECT wallet, signed_at_ms / ${HOUR_MS}, SUM(amount_lamports) FROM signatures WHERE amount_lamports IS NOT NULL GROUP BY 1, 2;
PRAGMA user_version = 1;
`;
const SCHEMA_VERSION = 1;

/** A record as read back (tests, audits), whichever journal. */
export interface JournalRow {
  key: string;
  wallet: string;
  op: string;
  symbol: string | null;
  amountLamports: Lamports | null;
  ts: number;
  epoch: string | null;
  messageSha256: string;
  signedAtMs: number;
  plan: string | null;
  step: string | null;
}

/** What a batch may do inside its transaction. */
export interface JournalTx {
  /**
   * The journal's checks and, when they pass, the insert. Throws when the journal fails: the
   * caller lets it end the batch (rolled back, nothing signed).
   */
  record(rec: JournalRecord, dayCap: Lamports): Promise<JournalVerdict>;
  /**
   * Removes a record this transaction inserted ('recorded') whose signature could not be made: a
   * signature that never existed must not count against the caps (see docs/reliability.md).
   */
  forget(rec: JournalRecord): Promise<void>;
}

/** What the service needs of a journal: SQLite (one machine) or PostgreSQL (a cluster's signers share caps). */
export interface SignerJournal {
  /**
   * One transaction, one commit, for every request a client had in flight (group commit). The
   * wallets `fn` will record for are locked first, in one order, so no other signer process can
   * check against a total this batch is about to change. Resolves after the commit is durable;
   * rejects when it is not known to be (failed, or its answer lost): nothing `fn` produced may
   * then leave the process.
   */
  batch<T>(wallets: readonly string[], fn: (tx: JournalTx) => Promise<T>): Promise<T>;
  /** Every record, oldest first (tests and audits). */
  records(): Promise<JournalRow[]>;
  close(): void | Promise<void>;
}

export class SqliteJournal implements SignerJournal {
  readonly #db: Database.Database;
  readonly #sameMessage: Database.Statement;
  readonly #claimInEpoch: Database.Statement;
  readonly #dayBuckets: Database.Statement;
  readonly #dayRows: Database.Statement;
  readonly #insert: Database.Statement;
  readonly #forget: Database.Statement;
  readonly #tx: JournalTx;
  readonly #newest: Database.Statement;
  readonly #mark: { db: Database.Database; sent: SendMark };
  /** The newest signature this process put in the mark (only a batch that recorded one raises it). */
  #marked: number;
  /** The batch running on this connection (one transaction at a time): the next waits for it. */
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(db: Database.Database, mark: { db: Database.Database; sent: SendMark }) {
    this.#db = db;
    this.#mark = mark;
    this.#newest = db.prepare('SELECT COALESCE(MAX(id), 0) FROM signatures').pluck();
    this.#marked = mark.sent.high ?? 0;
    this.#sameMessage = db.prepare('SELECT 1 FROM signatures WHERE wallet = ? AND message_sha256 = ?').pluck();
    this.#claimInEpoch = db.prepare("SELECT 1 FROM signatures WHERE wallet = ? AND op = 'claim' AND epoch = ?").pluck();
    this.#dayBuckets = db.prepare('SELECT COALESCE(SUM(lamports), 0) FROM day_totals WHERE wallet = ? AND hour >= ?').pluck().safeIntegers(true);
    this.#dayRows = db.prepare('SELECT COALESCE(SUM(amount_lamports), 0) FROM signatures WHERE wallet = ? AND signed_at_ms > ? AND signed_at_ms < ?').pluck().safeIntegers(true);
    this.#insert = db.prepare(
      `INSERT INTO signatures (key_name, wallet, op, symbol, amount_lamports, ts, epoch, message_sha256, signed_at_ms, plan, step)
       VALUES (@key, @wallet, @op, @symbol, @amount, @ts, @epoch, @hash, @at, @plan, @step)`,
    );
    this.#forget = db.prepare('DELETE FROM signatures WHERE wallet = ? AND message_sha256 = ?');
    this.#tx = {
      record: (rec, dayCap) => Promise.resolve().then(() => this.#record(rec, dayCap)),
      forget: (rec) => Promise.resolve().then(() => void this.#forget.run(rec.wallet, rec.messageSha256)),
    };
  }

  #record(rec: JournalRecord, dayCap: Lamports): JournalVerdict {
    if (this.#sameMessage.get(rec.wallet, rec.messageSha256) !== undefined) return 'repeat';
    if (rec.op === 'claim' && this.#claimInEpoch.get(rec.wallet, rec.epoch ?? null) !== undefined) return 'already_signed_epoch';
    if (rec.amountLamports !== undefined && this.#daySpent(rec.wallet, rec.signedAtMs, dayCap - rec.amountLamports) + rec.amountLamports > dayCap) return 'day_cap';
    this.#insert.run({
      key: rec.key,
      wallet: rec.wallet,
      op: rec.op,
      symbol: rec.symbol ?? null,
      amount: rec.amountLamports ?? null,
      ts: rec.ts,
      epoch: rec.epoch ?? null,
      hash: rec.messageSha256,
      at: rec.signedAtMs,
      plan: rec.plan ?? null,
      step: rec.step ?? null,
    });
    return 'recorded';
  }

  /**
   * What `wallet` has signed in the day before `atMs`, exactly whenever it is over `within`: the
   * buckets from the window's first hour on count that hour whole (at least the exact sum); only
   * when they are over `within` is the first hour replaced by its rows inside the window.
   */
  #daySpent(wallet: string, atMs: number, within: bigint): bigint {
    const w = dayWindow(atMs);
    const upper = this.#dayBuckets.get(wallet, w.first) as bigint;
    if (upper <= within) return upper;
    return (this.#dayBuckets.get(wallet, w.first + 1) as bigint) + (this.#dayRows.get(wallet, w.sinceMs, w.firstEndMs) as bigint);
  }

  static open(path: string): SqliteJournal {
    assertOwnDirectory(path, `the signer journal ${path}`);
    let db: Database.Database;
    let mark: { db: Database.Database; sent: SendMark } | undefined;
    try {
      // Created 0600 before SQLite opens it: the journal names wallets and amounts, for this user only.
      closeSync(openSync(path, 'a', 0o600));
      chmodSync(path, 0o600);
      db = new Database(path, { timeout: 5_000 });
      // The state database's limit: a long reader (a backup, an operator's sqlite3) grows the WAL,
      // and without it the file kept that size for the journal's life (store/sqlite/db.ts).
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      db.pragma('journal_mode = WAL');
      // FULL: a commit is on disk (WAL fsynced) before the signature it records is returned.
      db.pragma('synchronous = FULL');
      db.exec(SCHEMA);
      // IMMEDIATE: two signers opening one old journal together migrate it once.
      db.transaction(() => {
        if ((db.pragma('user_version', { simple: true }) as number) < SCHEMA_VERSION) db.exec(DAY_TOTALS);
      }).immediate();
      mark = openMark(markPath(path));
    } catch (err) {
      mark?.db.close();
      const code = (err as { code?: unknown }).code;
      throw new StateError('STATE_IO', `the signer journal ${path} cannot be opened (${typeof code === 'string' ? code : 'error'})`, { cause: err });
    }
    // A journal without the signatures its mark counts is an older copy (a backup put back, a file
    // deleted and made anew, a -wal lost): on it every cap and every epoch's claim is spent again.
    const newest = db.prepare('SELECT COALESCE(MAX(id), 0) FROM signatures').pluck().get() as number;
    const behind = rolledBack(`the signer journal ${path}`, newest, mark.sent.high, markPath(path));
    if (behind !== undefined) {
      db.close();
      mark.db.close();
      throw behind;
    }
    return new SqliteJournal(db, mark);
  }

  batch<T>(_wallets: readonly string[], fn: (tx: JournalTx) => Promise<T>): Promise<T> {
    // IMMEDIATE: the write lock is taken before the checks read, so a second signer process on the
    // same file waits for this one's commit instead of checking against a stale total. The
    // transaction stays open while the batch's signatures are made (a remote backend answers
    // asynchronously), so batches on this connection run one after another.
    const run = this.#queue.then(async () => {
      this.#db.exec('BEGIN IMMEDIATE');
      try {
        const out = await fn(this.#tx);
        this.#db.exec('COMMIT');
        this.#raiseMark();
        return out;
      } catch (err) {
        // A failed COMMIT in SQLite leaves the transaction open and uncommitted: roll it back.
        if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
        throw err;
      }
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * After a commit, the mark file learns the newest signature (ids only grow: a record is removed
   * only inside the transaction that made it). A failure throws, so the batch's signatures do not
   * leave: they are committed and count, the safe side.
   */
  #raiseMark(): void {
    const newest = this.#newest.get() as number;
    if (newest <= this.#marked) return;
    this.#mark.sent.record(newest);
    this.#marked = newest;
  }

  records(): Promise<JournalRow[]> {
    return Promise.resolve(
      this.all().map((r) => ({
        key: r.key_name as string,
        wallet: r.wallet as string,
        op: r.op as string,
        symbol: r.symbol as string | null,
        amountLamports: r.amount_lamports as bigint | null,
        ts: Number(r.ts),
        epoch: r.epoch as string | null,
        messageSha256: r.message_sha256 as string,
        signedAtMs: Number(r.signed_at_ms),
        plan: r.plan as string | null,
        step: r.step as string | null,
      })),
    );
  }

  /**
   * `autoclaim signer prune`: the signatures made before `cutoffMs`, and the day buckets of the hours
   * before it, deleted a batch an IMMEDIATE transaction, beside running signers as their batches
   * are (a dry run rolls each back). Never the newest signature: the mark compares with MAX(id), and
   * SQLite hands a deleted highest id out again. The caller keeps the cutoff out of every check's
   * reach (cli/commands/signer-prune.ts).
   */
  prune(cutoffMs: number, dryRun: boolean, limit = 1000): { signatures: number; buckets: number } {
    const db = this.#db;
    const next = db.prepare('SELECT id FROM signatures WHERE id > ? AND signed_at_ms < ? AND id < (SELECT MAX(id) FROM signatures) ORDER BY id LIMIT ?').pluck();
    const del = db.prepare('DELETE FROM signatures WHERE id IN (SELECT value FROM json_each(?))');
    const nextBuckets = db.prepare<[string, number, number, number], { wallet: string; hour: number }>(
      'SELECT wallet, hour FROM day_totals WHERE (wallet, hour) > (?, ?) AND hour < ? ORDER BY wallet, hour LIMIT ?',
    );
    const delBuckets = db.prepare("DELETE FROM day_totals WHERE (wallet, hour) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))");
    const counts = { signatures: 0, buckets: 0 };
    inBatches(db, dryRun, limit, 0, (after) => {
      const ids = next.all(after, cutoffMs, limit) as number[];
      counts.signatures += del.run(JSON.stringify(ids)).changes;
      return ids;
    });
    // Each hour's bucket before the cutoff's hour holds only signatures just deleted; no window reads it.
    inBatches(db, dryRun, limit, { wallet: '', hour: -1 }, (after) => {
      const keys = nextBuckets.all(after.wallet, after.hour, Math.floor(cutoffMs / HOUR_MS), limit);
      counts.buckets += delBuckets.run(JSON.stringify(keys.map((k) => [k.wallet, k.hour]))).changes;
      return keys;
    });
    return counts;
  }

  /** When the newest signature was made (the signer's clock then); undefined for an empty journal. */
  newestSignedAtMs(): number | undefined {
    const r = this.#db.prepare('SELECT signed_at_ms FROM signatures ORDER BY id DESC LIMIT 1').pluck().get() as number | bigint | undefined;
    return r === undefined ? undefined : Number(r);
  }

  /** Every record, oldest first (tests and audits). */
  all(): Array<Record<string, unknown>> {
    return this.#db.prepare('SELECT * FROM signatures ORDER BY id').safeIntegers(true).all() as Array<Record<string, unknown>>;
  }

  close(): void {
    this.#db.close();
    this.#mark.db.close();
  }
}

/** The journal's mark file, beside its real path (a symlink or another spelling meets the same mark). */
export function markPath(journalPath: string): string {
  return `${realStatePath(journalPath)}.mark`;
}

/**
 * The send mark of the daemon's lock file (store/sqlite/lock.ts), in a file of its own: not
 * locked, since two signers may share one journal (its IMMEDIATE transactions keep their caps).
 * Also a PostgreSQL journal's, on the signer's own disk (state.mark_file).
 */
export function openMark(file: string): { db: Database.Database; sent: SendMark } {
  ensureFile(file);
  const db = new Database(file, { timeout: 5_000 });
  try {
    // WAL without an fsync a commit: the mark is a lower bound, raised after every commit that
    // signed, and an fsync of its own would double each signature's (the journal's already makes
    // the record durable). A kill -9 loses none of it; a power loss at most its last raises.
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    return { db, sent: sendMarkIn(db) };
  } catch (err) {
    db.close();
    throw err;
  }
}

/** STATE_ROLLED_BACK when a journal's newest signature is below its mark; else undefined. */
export function rolledBack(journal: string, newest: number, high: number | undefined, markFile: string): StateError | undefined {
  if (high === undefined || newest >= high) return undefined;
  return new StateError(
    'STATE_ROLLED_BACK',
    `${journal} is older than what this signer signed from it: its newest signature is #${newest}, and #${high} was recorded ` +
      `(in ${markFile}). It is a restored backup, a journal deleted and made anew, or one that lost its -wal; on it the day caps and ` +
      "each epoch's claim would be signed again. Put the newest journal back; to start on this one anyway (knowing that what was signed " +
      'since it was copied may be signed again), remove the mark file (and its -wal, if any) while no signer runs',
  );
}
