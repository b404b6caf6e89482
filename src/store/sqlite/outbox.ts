// The outbox table (migration 3): notices kept until delivered or expired (service/outbox.ts).
// One process owns a SQLite state file, so a claim here only keeps a row from being taken twice by
// this process's own delivery loop; claimed_until still lapses by itself after a crash.
import type { Db } from './db.js';
import { outboxRowFromRaw, type OutboxDraft, type OutboxRow, type RawOutboxRow } from '../rows.js';

type Scrub = (text: string) => string;

export class OutboxRepo {
  private readonly insert;
  private readonly claimTx;
  private readonly delivered;
  private readonly retry;
  private readonly expire;

  constructor(db: Db, scrub: Scrub) {
    const insert = db.prepare<[string, string, string, number, number, number]>(
      `INSERT INTO outbox (channel, key, body, attempts, next_at, expires_at, created_at)
       VALUES (?, ?, ?, 0, ?, ?, ?) ON CONFLICT (channel, key) DO NOTHING`,
    );
    this.insert = (d: OutboxDraft, now: number): boolean => insert.run(d.channel, d.key, scrub(d.body), now, d.expiresAt, now).changes > 0;
    const claim = db.prepare<[number, string, number, number, number, number], RawOutboxRow>(
      `UPDATE outbox SET claimed_until = ? WHERE id IN (
         SELECT id FROM outbox
         WHERE channel = ? AND next_at <= ? AND expires_at > ? AND (claimed_until IS NULL OR claimed_until <= ?)
         ORDER BY id LIMIT ?)
       RETURNING id, channel, key, body, attempts, next_at, expires_at, last_error, created_at`,
    );
    this.claimTx = db.transaction((channel: string, now: number, limit: number, until: number) =>
      claim.all(until, channel, now, now, now, limit).map(outboxRowFromRaw).sort((a, b) => a.id - b.id),
    );
    const del = db.prepare<[number]>('DELETE FROM outbox WHERE id = ?');
    this.delivered = db.transaction((ids: readonly number[]) => {
      for (const id of ids) del.run(id);
    });
    const upd = db.prepare<[number, string, number]>('UPDATE outbox SET attempts = attempts + 1, next_at = ?, last_error = ?, claimed_until = NULL WHERE id = ?');
    this.retry = db.transaction((ids: readonly number[], nextAt: number, error: string) => {
      const e = scrub(error);
      for (const id of ids) upd.run(nextAt, e, id);
    });
    const gone = db.prepare<[string, number], RawOutboxRow>(
      `DELETE FROM outbox WHERE channel = ? AND expires_at <= ?
       RETURNING id, channel, key, body, attempts, next_at, expires_at, last_error, created_at`,
    );
    this.expire = (channel: string, now: number): OutboxRow[] => gone.all(channel, now).map(outboxRowFromRaw);
  }

  add(d: OutboxDraft, now: number): boolean {
    return this.insert(d, now);
  }
  claim(channel: string, now: number, limit: number, until: number): OutboxRow[] {
    return this.claimTx(channel, now, limit, until);
  }
  markDelivered(ids: readonly number[]): void {
    this.delivered(ids);
  }
  markRetry(ids: readonly number[], nextAt: number, error: string): void {
    this.retry(ids, nextAt, error);
  }
  expired(channel: string, now: number): OutboxRow[] {
    return this.expire(channel, now);
  }
}
