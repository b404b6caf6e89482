// wallet_state and epochs_seen: what each poll saw, keyed by wallet address (the name is a label). A failed poll records its error but keeps the
// last good summary, so `status` can show both what went wrong and what was last known. Each poll's
// record is one transaction of its own, committed before the poll's answer is decided on, so a plan
// is never stored before the polls it was decided from.
import { okPollRow, walletStateFromRaw } from '../codecs.js';
import type { Db } from './db.js';
import type { PollResult } from '../port.js';
import type { OkPollRow, RawWalletState, WalletStateRow } from '../rows.js';

type Scrub = (text: string) => string;

export class WalletRepo {
  private readonly upsertOk;
  private readonly upsertFailed;
  private readonly insertEpoch;
  private readonly selectAll;
  private readonly selectOne;
  private readonly selectEpoch;
  private readonly recordTx;
  private readonly syncNormal;
  private readonly syncFull;

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
    this.upsertFailed = db.prepare<{ wallet: string; address: string; at: number; error: string }>(`
      INSERT INTO wallet_state (wallet, address, last_poll_at, last_error, updated_at)
      VALUES (@wallet, @address, @at, @error, @at)
      ON CONFLICT (address) DO UPDATE SET
        wallet = excluded.wallet, last_poll_at = excluded.last_poll_at, last_error = excluded.last_error,
        updated_at = excluded.updated_at`);
    this.insertEpoch = db.prepare<[string, string, number]>(
      'INSERT INTO epochs_seen (address, epoch, first_seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.selectAll = db.prepare<[], RawWalletState>('SELECT * FROM wallet_state ORDER BY wallet');
    this.selectOne = db.prepare<[string], RawWalletState>('SELECT * FROM wallet_state WHERE address = ?');
    // Read at every poll (the epoch check): the one column, not the row with its stored summary.
    this.selectEpoch = db.prepare<[string], { epoch: string | null }>('SELECT epoch FROM wallet_state WHERE address = ?');
    this.syncNormal = db.prepare('PRAGMA synchronous = NORMAL');
    this.syncFull = db.prepare('PRAGMA synchronous = FULL');
    this.recordTx = db.transaction((row: OkPollRow | { wallet: string; address: string; at: number; error: string }): boolean => {
      if ('error' in row) {
        this.upsertFailed.run(row);
        return false;
      }
      // The epoch is new exactly when this is the row that records it.
      const newEpoch = this.insertEpoch.run(row.address, row.epoch, row.at).changes === 1;
      this.upsertOk.run(row);
      return newEpoch;
    });
  }

  /**
   * One poll's record, in a transaction of its own; a record the table cannot hold throws before it.
   *
   * Committed without an fsync of its own (synchronous = NORMAL for this one commit; every other
   * write of the connection stays FULL). A poll record lost in an OS crash or a power cut costs a
   * poll, nothing more: no plan decided from it can outlive it. The WAL is one file that commits
   * append to in order, and a FULL commit (a plan, a step) fsyncs the whole file, so every poll
   * record committed before it is on disk when it is; recovery replays the WAL frame by frame
   * while their cumulative checksums hold, so it recovers those records with it. A checkpoint
   * that lets the WAL start over syncs the WAL before copying it and the database file after
   * (NORMAL does too), so records moved into the database file are as safe. What an OS crash can
   * take are only the records after the last FULL commit: the last summary and epoch seen of some
   * wallets, which nothing durable was decided from; the next poll writes them again. A process
   * crash loses nothing: the commit is in the OS's page cache.
   */
  record(wallet: string, address: string, at: number, result: PollResult): { newEpoch: boolean } {
    const row = result.ok ? okPollRow(wallet, address, at, result.summary, this.scrub) : { wallet, address, at, error: this.scrub(result.error) };
    this.syncNormal.run();
    try {
      return { newEpoch: this.recordTx.immediate(row) };
    } finally {
      this.syncFull.run();
    }
  }

  all(): WalletStateRow[] {
    return this.selectAll.all().map(walletStateFromRaw);
  }

  /** The epoch of the address's last good poll. */
  epoch(address: string): string | undefined {
    return this.selectEpoch.get(address)?.epoch ?? undefined;
  }

  get(address: string): WalletStateRow | undefined {
    const r = this.selectOne.get(address);
    return r === undefined ? undefined : walletStateFromRaw(r);
  }
}
