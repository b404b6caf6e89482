// wallet_state and epochs_seen in PostgreSQL: the table side of the poll records written behind
// (poll-writes.ts beside this file). A batch is three statements whatever its size (unnest of
// arrays), in one transaction. Under a fence, a record of a wallet this daemon does not lease is
// dropped, not an error: a poll record is what `status` shows, and the wallet's owner writes its own.
import type { WalletSummary } from '../../domain.js';
import { okPollRow, walletStateFromRaw } from '../codecs.js';
import type { FailedPollRow, OkPollRow, PollBatch } from '../poll-writes.js';
import type { RawWalletState, WalletStateRow } from '../rows.js';
import type { Sql } from './db.js';
import type { Fence } from './fence.js';

type Scrub = (text: string) => string;

/** The lease condition on an unnest alias `r` with columns address and token; $1 is the owner. */
const LEASED = `($1::text IS NULL OR EXISTS (
  SELECT 1 FROM leases l WHERE l.address = r.address AND l.owner = $1 AND l.token = r.token AND l.expires_at > now()))`;

export class WalletTable {
  constructor(private readonly scrub: Scrub) {}

  okRow(wallet: string, address: string, at: number, s: WalletSummary): OkPollRow {
    return okPollRow(wallet, address, at, s, this.scrub);
  }

  failedRow(wallet: string, address: string, at: number, error: string): FailedPollRow {
    return { wallet, address, at, error: this.scrub(error) };
  }

  async epochSeen(c: Sql, address: string, epoch: string): Promise<boolean> {
    const r = await c.query('SELECT 1 FROM epochs_seen WHERE address = $1 AND epoch = $2', [address, epoch]);
    return r.rows.length > 0;
  }

  /** The batch, in the caller's transaction; rows of unleased wallets dropped under a fence. */
  async write(c: Sql, input: PollBatch, fence: Fence | undefined): Promise<void> {
    const tokenFor = (address: string): string | null => (fence === undefined ? null : (fence.tokenFor(address)?.toString() ?? null));
    const held = <T extends { address: string }>(rows: T[]): T[] => (fence === undefined ? rows : rows.filter((r) => tokenFor(r.address) !== null));
    const batch: PollBatch = { epochs: held(input.epochs), ok: held(input.ok), failed: held(input.failed) };
    const owner = fence?.owner ?? null;
    if (batch.epochs.length > 0) {
      await c.query(
        `INSERT INTO epochs_seen (address, epoch, first_seen_at)
         SELECT r.address, r.epoch, r.at FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS r(address, epoch, at, token)
         WHERE ${LEASED}
         ON CONFLICT DO NOTHING`,
        [owner, batch.epochs.map((e) => e.address), batch.epochs.map((e) => e.epoch), batch.epochs.map((e) => e.at), batch.epochs.map((e) => tokenFor(e.address))],
      );
    }
    if (batch.ok.length > 0) {
      const o = batch.ok;
      await c.query(
        `INSERT INTO wallet_state (address, wallet, last_poll_at, last_ok_at, last_error, epoch, pending_lamports,
                                   lifetime_lamports, rank, tier, summary_raw, updated_at)
         SELECT r.address, r.wallet, r.at, r.at, NULL, r.epoch, r.pending::numeric, r.lifetime::numeric, r.rank, r.tier, r.raw, r.at
         FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[], $11::bigint[])
              AS r(address, wallet, at, epoch, pending, lifetime, rank, tier, raw, token)
         WHERE ${LEASED}
         ON CONFLICT (address) DO UPDATE SET
           wallet = excluded.wallet, last_poll_at = excluded.last_poll_at, last_ok_at = excluded.last_ok_at,
           last_error = NULL, epoch = excluded.epoch, pending_lamports = excluded.pending_lamports,
           lifetime_lamports = excluded.lifetime_lamports, rank = excluded.rank, tier = excluded.tier,
           summary_raw = excluded.summary_raw, updated_at = excluded.updated_at`,
        [
          owner,
          o.map((r) => r.address),
          o.map((r) => r.wallet),
          o.map((r) => r.at),
          o.map((r) => r.epoch),
          o.map((r) => r.pending),
          o.map((r) => r.lifetime),
          o.map((r) => r.rank),
          o.map((r) => r.tier),
          o.map((r) => r.raw),
          o.map((r) => tokenFor(r.address)),
        ],
      );
    }
    if (batch.failed.length > 0) {
      const f = batch.failed;
      await c.query(
        `INSERT INTO wallet_state (address, wallet, last_poll_at, last_error, updated_at)
         SELECT r.address, r.wallet, r.at, r.error, r.at
         FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[]) AS r(address, wallet, at, error, token)
         WHERE ${LEASED}
         ON CONFLICT (address) DO UPDATE SET
           wallet = excluded.wallet, last_poll_at = excluded.last_poll_at, last_error = excluded.last_error,
           updated_at = excluded.updated_at`,
        [owner, f.map((r) => r.address), f.map((r) => r.wallet), f.map((r) => r.at), f.map((r) => r.error), f.map((r) => tokenFor(r.address))],
      );
    }
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
