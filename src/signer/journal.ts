// The signer's journal: a record of every signature, committed (synchronous=FULL) before the
// signature leaves the process (SPEC §7). The checks the journal decides — one claim per wallet per
// epoch, the rolling day cap — run in the same IMMEDIATE transaction as the insert, so two signer
// processes on one file, or a crash between commit and answer, can never yield more than the policy.
import { chmodSync, closeSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Lamports } from '../amount.js';
import type { SignedOp } from '../domain.js';
import { StateError } from '../errors.js';

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

const DAY_MS = 86_400_000;

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

/** What the service needs of a journal: a PostgreSQL one (shared caps across signers) would stand here too. */
export interface SignerJournal {
  record(rec: JournalRecord, dayCap: Lamports): JournalVerdict;
  /**
   * Runs `fn` (which records) in one transaction: one commit, one fsync, for every request a
   * client had in flight (group commit). Nothing `fn` returns may leave before this returns.
   */
  batch<T>(fn: () => T): T;
  close(): void;
}

export class SqliteJournal implements SignerJournal {
  readonly #db: Database.Database;
  readonly #sameMessage: Database.Statement;
  readonly #claimInEpoch: Database.Statement;
  readonly #dayTotal: Database.Statement;
  readonly #insert: Database.Statement;
  readonly #record: (rec: JournalRecord, dayCap: Lamports) => JournalVerdict;

  private constructor(db: Database.Database) {
    this.#db = db;
    this.#sameMessage = db.prepare('SELECT 1 FROM signatures WHERE wallet = ? AND message_sha256 = ?').pluck();
    this.#claimInEpoch = db.prepare("SELECT 1 FROM signatures WHERE wallet = ? AND op = 'claim' AND epoch = ?").pluck();
    this.#dayTotal = db.prepare('SELECT COALESCE(SUM(amount_lamports), 0) FROM signatures WHERE wallet = ? AND signed_at_ms > ?').pluck().safeIntegers(true);
    this.#insert = db.prepare(
      `INSERT INTO signatures (key_name, wallet, op, symbol, amount_lamports, ts, epoch, message_sha256, signed_at_ms, plan, step)
       VALUES (@key, @wallet, @op, @symbol, @amount, @ts, @epoch, @hash, @at, @plan, @step)`,
    );
    const tx = db.transaction((rec: JournalRecord, dayCap: Lamports): JournalVerdict => {
      if (this.#sameMessage.get(rec.wallet, rec.messageSha256) !== undefined) return 'repeat';
      if (rec.op === 'claim' && this.#claimInEpoch.get(rec.wallet, rec.epoch ?? null) !== undefined) return 'already_signed_epoch';
      if (rec.amountLamports !== undefined) {
        const spent = this.#dayTotal.get(rec.wallet, rec.signedAtMs - DAY_MS) as bigint;
        if (spent + rec.amountLamports > dayCap) return 'day_cap';
      }
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
    });
    // IMMEDIATE: the write lock is taken before the checks read, so a second signer process on
    // the same file waits for this one's commit instead of checking against a stale total.
    this.#record = (rec, dayCap) => tx.immediate(rec, dayCap);
  }

  static open(path: string): SqliteJournal {
    let db: Database.Database;
    try {
      // Created 0600 before SQLite opens it: the journal names wallets and amounts, for this user only.
      closeSync(openSync(path, 'a', 0o600));
      chmodSync(path, 0o600);
      db = new Database(path, { timeout: 5_000 });
      db.pragma('journal_mode = WAL');
      // FULL: a commit is on disk (WAL fsynced) before the signature it records is returned.
      db.pragma('synchronous = FULL');
      db.exec(SCHEMA);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      throw new StateError('STATE_IO', `the signer journal ${path} cannot be opened (${typeof code === 'string' ? code : 'error'})`, { cause: err });
    }
    return new SqliteJournal(db);
  }

  record(rec: JournalRecord, dayCap: Lamports): JournalVerdict {
    // Inside batch() the record's transaction is a savepoint of the batch's: its checks see the
    // records before it in the batch, and a failure undoes it alone.
    return this.#record(rec, dayCap);
  }

  batch<T>(fn: () => T): T {
    return this.#db.transaction(fn).immediate();
  }

  /** Every record, oldest first (tests and audits). */
  all(): Array<Record<string, unknown>> {
    return this.#db.prepare('SELECT * FROM signatures ORDER BY id').safeIntegers(true).all() as Array<Record<string, unknown>>;
  }

  close(): void {
    this.#db.close();
  }
}
