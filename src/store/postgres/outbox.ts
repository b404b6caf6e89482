// The outbox table on PostgreSQL (migration 3), as SQLite's (sqlite/outbox.ts). Several daemons
// share it: a row is claimed in one statement (FOR UPDATE SKIP LOCKED, then claimed_until), so two
// daemons never post the same notice at once, and whichever daemon looks next delivers the notices
// of one that died once its claim lapses. Not fenced by a wallet lease: a notice is nobody's wallet.
import type { Sql } from './db.js';
import { outboxRowFromRaw, type OutboxDraft, type OutboxRow, type RawOutboxRow } from '../rows.js';

const COLUMNS = 'id, channel, key, body, attempts, next_at, expires_at, last_error, created_at';

export async function outboxAdd(c: Sql, d: OutboxDraft, now: number): Promise<boolean> {
  const r = await c.query(
    `INSERT INTO outbox (channel, key, body, attempts, next_at, expires_at, created_at)
     VALUES ($1, $2, $3, 0, $4, $5, $4) ON CONFLICT (channel, key) DO NOTHING`,
    [d.channel, d.key, d.body, now, d.expiresAt],
  );
  return (r.rowCount ?? 0) > 0;
}

export async function outboxClaim(c: Sql, channel: string, now: number, limit: number, until: number): Promise<OutboxRow[]> {
  const r = await c.query<RawOutboxRow>(
    `UPDATE outbox SET claimed_until = $1 WHERE id IN (
       SELECT id FROM outbox
       WHERE channel = $2 AND next_at <= $3 AND expires_at > $3 AND (claimed_until IS NULL OR claimed_until <= $3)
       ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED)
     RETURNING ${COLUMNS}`,
    [until, channel, now, limit],
  );
  return r.rows.map(outboxRowFromRaw).sort((a, b) => a.id - b.id);
}

export async function outboxDelivered(c: Sql, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await c.query('DELETE FROM outbox WHERE id = ANY($1::bigint[])', [ids]);
}

export async function outboxRetry(c: Sql, ids: readonly number[], nextAt: number, error: string): Promise<void> {
  if (ids.length === 0) return;
  await c.query('UPDATE outbox SET attempts = attempts + 1, next_at = $1, last_error = $2, claimed_until = NULL WHERE id = ANY($3::bigint[])', [nextAt, error, ids]);
}

export async function outboxExpire(c: Sql, channel: string, now: number): Promise<OutboxRow[]> {
  const r = await c.query<RawOutboxRow>(`DELETE FROM outbox WHERE channel = $1 AND expires_at <= $2 RETURNING ${COLUMNS}`, [channel, now]);
  return r.rows.map(outboxRowFromRaw).sort((a, b) => a.id - b.id);
}
