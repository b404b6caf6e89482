// wallet_state and epochs_seen in PostgreSQL: each poll's record is one transaction of its own
// (the store's), committed before the poll's answer is decided on. Under a fence, a record of a
// wallet this daemon does not lease is dropped, not an error: a poll record is what `status` shows,
// and the wallet's owner writes its own.
import { okPollRow, walletStateFromRaw } from '../codecs.js';
import type { PollResult } from '../port.js';
import type { RawWalletState, WalletStateRow } from '../rows.js';
import type { Sql } from './db.js';
import { holdsLease, type Fence } from './fence.js';

type Scrub = (text: string) => string;

export class WalletTable {
  constructor(private readonly scrub: Scrub) {}

  /** One poll's record, in the caller's transaction; a record the table cannot hold throws before any query. */
  async record(c: Sql, fence: Fence | undefined, wallet: string, address: string, at: number, result: PollResult): Promise<{ newEpoch: boolean }> {
    const ok = result.ok ? okPollRow(wallet, address, at, result.summary, this.scrub) : undefined;
    const error = result.ok ? undefined : this.scrub(result.error);
    if (fence !== undefined && !(await holdsLease(c, fence, address))) return { newEpoch: false };
    if (ok === undefined) {
      await c.query(
        `INSERT INTO wallet_state (address, wallet, last_poll_at, last_error, updated_at) VALUES ($1, $2, $3, $4, $3)
         ON CONFLICT (address) DO UPDATE SET
           wallet = excluded.wallet, last_poll_at = excluded.last_poll_at, last_error = excluded.last_error,
           updated_at = excluded.updated_at`,
        [address, wallet, at, error],
      );
      return { newEpoch: false };
    }
    // The epoch is new exactly when this is the row that records it.
    const epoch = await c.query('INSERT INTO epochs_seen (address, epoch, first_seen_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [address, ok.epoch, at]);
    await c.query(
      `INSERT INTO wallet_state (address, wallet, last_poll_at, last_ok_at, last_error, epoch, pending_lamports,
                                 lifetime_lamports, rank, tier, summary_raw, updated_at)
       VALUES ($1, $2, $3, $3, NULL, $4, $5::numeric, $6::numeric, $7, $8, $9, $3)
       ON CONFLICT (address) DO UPDATE SET
         wallet = excluded.wallet, last_poll_at = excluded.last_poll_at, last_ok_at = excluded.last_ok_at,
         last_error = NULL, epoch = excluded.epoch, pending_lamports = excluded.pending_lamports,
         lifetime_lamports = excluded.lifetime_lamports, rank = excluded.rank, tier = excluded.tier,
         summary_raw = excluded.summary_raw, updated_at = excluded.updated_at`,
      [address, wallet, at, ok.epoch, ok.pending, ok.lifetime, ok.rank, ok.tier, ok.raw],
    );
    return { newEpoch: epoch.rowCount === 1 };
  }

  async all(c: Sql): Promise<WalletStateRow[]> {
    const r = await c.query<RawWalletState>('SELECT * FROM wallet_state ORDER BY wallet COLLATE "C"');
    return r.rows.map(walletStateFromRaw);
  }

  async get(c: Sql, address: string): Promise<WalletStateRow | undefined> {
    const r = await c.query<RawWalletState>('SELECT * FROM wallet_state WHERE address = $1', [address]);
    const row = r.rows[0];
    return row === undefined ? undefined : walletStateFromRaw(row);
  }
}
