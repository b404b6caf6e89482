// wallet_state and epochs_seen: what each poll saw, keyed by wallet address (the name is a label). A failed poll records its error but keeps the
// last good summary, so `status` can show both what went wrong and what was last known. The rows
// are written in batches, behind the polls (poll-writes.ts); this is the table side.
import type { WalletSummary } from '../../domain.js';
import { okPollRow } from '../codecs.js';
import { AddressIndex } from './address-index.js';
import type { Db } from './db.js';
import { walletStateFromRaw } from '../codecs.js';
import type { FailedPollRow, OkPollRow, PollBatch, PollTable } from '../poll-writes.js';
import type { RawWalletState, WalletStateRow } from '../rows.js';

type Scrub = (text: string) => string;

export class WalletRepo implements PollTable {
  private readonly upsertOk;
  private readonly upsertFailed;
  private readonly insertEpoch;
  private readonly selectAll;
  private readonly selectOne;
  private readonly selectEpoch;
  private readonly writeTx;
  private readonly syncNormal: () => unknown;
  private readonly syncFull: () => unknown;
  /** The addresses with any epoch seen: the first poll of a new wallet asks nothing of the table. */
  private readonly epochAddresses: AddressIndex;

  constructor(
    db: Db,
    private readonly scrub: Scrub,
  ) {
    this.upsertOk = db.prepare<OkPollRow>(`
      INSERT INTO wallet_state (wallet, address, last_poll_at, last_ok_at, last_error, epoch, pending_lamports,
                                lifetime_lamports, rank, tier, summary_raw, updated_at)
      VALUES (@wallet, @address, @at, @at, NULL, @epoch, @pending, @lifetime, @rank, @tier, @raw, @at)
      ON CONFLICT (address) DO UPDATE SET
        wallet = excluded.wallet, last_poll_at = excluded.last_poll_at, last_ok_at = excluded.last_ok_at,
        last_error = NULL, epoch = excluded.epoch, pending_lamports = excluded.pending_lamports,
        lifetime_lamports = excluded.lifetime_lamports, rank = excluded.rank, tier = excluded.tier,
        summary_raw = excluded.summary_raw, updated_at = excluded.updated_at`);
    this.upsertFailed = db.prepare<FailedPollRow>(`
      INSERT INTO wallet_state (wallet, address, last_poll_at, last_error, updated_at)
      VALUES (@wallet, @address, @at, @error, @at)
      ON CONFLICT (address) DO UPDATE SET
        wallet = excluded.wallet, last_poll_at = excluded.last_poll_at, last_error = excluded.last_error,
        updated_at = excluded.updated_at`);
    this.insertEpoch = db.prepare<[string, string, number]>(
      'INSERT INTO epochs_seen (address, epoch, first_seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.selectEpoch = db.prepare<[string, string], { one: number }>('SELECT 1 AS one FROM epochs_seen WHERE address = ? AND epoch = ?');
    this.epochAddresses = new AddressIndex(db, 'epochs_seen');
    this.selectAll = db.prepare<[], RawWalletState>('SELECT * FROM wallet_state ORDER BY wallet');
    this.selectOne = db.prepare<[string], RawWalletState>('SELECT * FROM wallet_state WHERE address = ?');
    // Not prepared statements: SQLite applies `PRAGMA synchronous = X` when it compiles it, so a
    // prepared one does not reliably apply again when run.
    // The level cannot change inside a transaction; a caller's outer one keeps its own.
    this.syncNormal = () => !db.inTransaction && db.pragma('synchronous = NORMAL');
    this.syncFull = () => !db.inTransaction && db.pragma('synchronous = FULL');
    this.writeTx = db.transaction((batch: PollBatch) => {
      for (const e of batch.epochs) {
        this.insertEpoch.run(e.address, e.epoch, e.at);
        this.epochAddresses.add(e.address);
      }
      for (const row of batch.ok) this.upsertOk.run(row);
      for (const row of batch.failed) this.upsertFailed.run(row);
    });
  }

  /**
   * A poll record is what `status` shows, nothing that exactly-once rests on (plans and steps carry
   * their own baselines), so a batch is committed without the fsync that synchronous=FULL costs
   * each commit. WAL keeps commits in order, so the next FULL commit (a plan, a step) makes it
   * durable too; a power cut loses at most the last few poll records, never a step.
   */
  write(batch: PollBatch): void {
    this.syncNormal();
    try {
      this.writeTx.immediate(batch);
    } finally {
      this.syncFull();
    }
  }

  okRow(wallet: string, address: string, at: number, s: WalletSummary): OkPollRow {
    return okPollRow(wallet, address, at, s, this.scrub);
  }

  failedRow(wallet: string, address: string, at: number, error: string): FailedPollRow {
    return { wallet, address, at, error: this.scrub(error) };
  }

  epochSeen(address: string, epoch: string): boolean {
    return this.epochAddresses.mayHave(address) && this.selectEpoch.get(address, epoch) !== undefined;
  }

  all(): WalletStateRow[] {
    return this.selectAll.all().map(walletStateFromRaw);
  }

  get(address: string): WalletStateRow | undefined {
    const r = this.selectOne.get(address);
    return r === undefined ? undefined : walletStateFromRaw(r);
  }
}
