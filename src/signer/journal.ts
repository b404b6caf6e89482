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

/** The day cap's window: any 24 hours by the signer's clock. */
export const DAY_MS = 86_400_000;

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
  readonly #dayTotal: Database.Statement;
  readonly #insert: Database.Statement;
  readonly #forget: Database.Statement;
  readonly #tx: JournalTx;
  /** The batch running on this connection (one transaction at a time): the next waits for it. */
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(db: Database.Database) {
    this.#db = db;
    this.#sameMessage = db.prepare('SELECT 1 FROM signatures WHERE wallet = ? AND message_sha256 = ?').pluck();
    this.#claimInEpoch = db.prepare("SELECT 1 FROM signatures WHERE wallet = ? AND op = 'claim' AND epoch = ?").pluck();
    this.#dayTotal = db.prepare('SELECT COALESCE(SUM(amount_lamports), 0) FROM signatures WHERE wallet = ? AND signed_at_ms > ?').pluck().safeIntegers(true);
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

  /** Every record, oldest first (tests and audits). */
  all(): Array<Record<string, unknown>> {
    return this.#db.prepare('SELECT * FROM signatures ORDER BY id').safeIntegers(true).all() as Array<Record<string, unknown>>;
  }

  close(): void {
    this.#db.close();
  }
}
