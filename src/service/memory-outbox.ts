// The memory outbox: the store port's outbox methods over an array, bounded, for acknowledgements
// (and for failures when there is no store), so the notifier's one delivery loop (outbox.ts)
// serves both. Synchronous, like the SQLite adapter.
import type { OutboxDraft, OutboxRow } from '../store/rows.js';
import type { OutboxStore } from './outbox.js';

export interface MemoryOutbox extends OutboxStore {
  readonly size: number;
}

export function memoryOutbox(bound: number): MemoryOutbox {
  const rows: Array<OutboxRow & { claimedUntil: number | undefined }> = [];
  let nextId = 1;
  const box = {
    get size() {
      return rows.length;
    },
    outboxAdd(d: OutboxDraft, now = 0): boolean {
      if (rows.some((r) => r.channel === d.channel && r.key === d.key)) return false;
      if (rows.length >= bound) return false;
      rows.push({ ...d, id: nextId++, attempts: 0, nextAt: now, lastError: undefined, createdAt: now, claimedUntil: undefined });
      return true;
    },
    outboxClaim(channel: string, now: number, limit: number, until: number): OutboxRow[] {
      const due = rows.filter((r) => r.channel === channel && r.nextAt <= now && r.expiresAt > now && (r.claimedUntil === undefined || r.claimedUntil <= now)).slice(0, limit);
      for (const r of due) r.claimedUntil = until;
      return due.map(({ claimedUntil: _c, ...r }) => ({ ...r }));
    },
    outboxDelivered(ids: readonly number[]): void {
      for (let i = rows.length - 1; i >= 0; i--) if (ids.includes(rows[i]?.id ?? -1)) rows.splice(i, 1);
    },
    outboxRetry(ids: readonly number[], nextAt: number, error: string): void {
      for (const r of rows) {
        if (!ids.includes(r.id)) continue;
        r.attempts++;
        r.nextAt = nextAt;
        r.lastError = error;
        r.claimedUntil = undefined;
      }
    },
    outboxExpire(channel: string, now: number): OutboxRow[] {
      const gone = rows.filter((r) => r.channel === channel && r.expiresAt <= now);
      for (const g of gone) rows.splice(rows.indexOf(g), 1);
      return gone;
    },
  };
  return box;
}
