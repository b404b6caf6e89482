// The outbox through the store port, the same cases for every adapter: a notice is added once per
// (channel, key), claimed when due, not claimed twice while a claim holds (a second store on the
// same state standing in for another daemon), retried later, gone when delivered, removed when
// expired, kept across a reopen, and stored redacted.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redactor } from '../../src/log/redact.js';
import type { Store } from '../../src/store/port.js';
import { useAdapter } from './contract-adapters.js';
import { T0 } from './fixtures.js';

const HOUR = 3_600_000;
const draft = (key: string, body = `{"text":"${key}"}`) => ({ channel: 'webhook', key, body, expiresAt: T0 + 24 * HOUR });

describe.each(['sqlite', 'postgres'] as const)('outbox (%s)', (name) => {
  const adapter = useAdapter(name);
  let store: Store;
  const others: Store[] = [];

  beforeEach(async () => {
    store = await adapter.open();
  });
  afterEach(async () => {
    for (const s of others.splice(0)) await s.close();
    await store.close();
  });

  it('adds a notice once per (channel, key), claims the due ones oldest first', async () => {
    expect(await store.outboxAdd(draft('a'), T0)).toBe(true);
    expect(await store.outboxAdd(draft('a'), T0)).toBe(false);
    expect(await store.outboxAdd({ ...draft('a'), channel: 'slack' }, T0)).toBe(true);
    expect(await store.outboxAdd(draft('b'), T0 + 1)).toBe(true);
    const rows = await store.outboxClaim('webhook', T0 + 1, 10, T0 + 60_000);
    expect(rows.map((r) => [r.key, r.attempts, r.body])).toEqual([
      ['a', 0, '{"text":"a"}'],
      ['b', 0, '{"text":"b"}'],
    ]);
    expect(rows[0]).toMatchObject({ channel: 'webhook', nextAt: T0, createdAt: T0, expiresAt: T0 + 24 * HOUR, lastError: undefined });
  });

  it('a claimed notice is not claimed again until its claim lapses, here or by another store on the same state', async () => {
    await store.outboxAdd(draft('a'), T0);
    expect(await store.outboxClaim('webhook', T0, 10, T0 + 10_000)).toHaveLength(1);
    expect(await store.outboxClaim('webhook', T0 + 5_000, 10, T0 + 20_000)).toEqual([]);
    const other = await adapter.open();
    others.push(other);
    expect(await other.outboxClaim('webhook', T0 + 5_000, 10, T0 + 20_000)).toEqual([]);
    // The claimer died: at claimed_until the notice is anyone's again.
    expect((await other.outboxClaim('webhook', T0 + 10_000, 10, T0 + 30_000)).map((r) => r.key)).toEqual(['a']);
  });

  it('retried: released, due again at next_at, attempts and the reason kept; delivered: gone', async () => {
    await store.outboxAdd(draft('a'), T0);
    const [row] = await store.outboxClaim('webhook', T0, 10, T0 + 10_000);
    await store.outboxRetry([row!.id], T0 + 30_000, 'answered 500');
    expect(await store.outboxClaim('webhook', T0 + 29_999, 10, T0 + 40_000)).toEqual([]);
    const [again] = await store.outboxClaim('webhook', T0 + 30_000, 10, T0 + 40_000);
    expect(again).toMatchObject({ key: 'a', attempts: 1, lastError: 'answered 500', nextAt: T0 + 30_000 });
    await store.outboxDelivered([again!.id]);
    expect(await store.outboxClaim('webhook', T0 + 10 * HOUR, 10, T0 + 11 * HOUR)).toEqual([]);
    // Delivered and gone: the same key may be added again later.
    expect(await store.outboxAdd(draft('a'), T0 + HOUR)).toBe(true);
  });

  it('expired notices are removed and returned, never claimed', async () => {
    await store.outboxAdd({ ...draft('old'), expiresAt: T0 + HOUR }, T0);
    await store.outboxAdd(draft('new'), T0);
    expect(await store.outboxClaim('webhook', T0 + HOUR, 10, T0 + HOUR + 1)).toHaveLength(1);
    const gone = await store.outboxExpire('webhook', T0 + HOUR);
    expect(gone.map((r) => r.key)).toEqual(['old']);
    expect(await store.outboxExpire('webhook', T0 + HOUR)).toEqual([]);
  });

  it('survives a reopen (a restart), and is stored redacted', async () => {
    await store.close();
    const redactor = new Redactor().add('canary-outbox-secret-42');
    store = await adapter.open({ redactor });
    await store.outboxAdd(draft('a', '{"text":"leaked canary-outbox-secret-42"}'), T0);
    const [row] = await store.outboxClaim('webhook', T0, 10, T0 + 1000);
    await store.outboxRetry([row!.id], T0, 'error quoting canary-outbox-secret-42');
    await store.close();
    store = await adapter.open();
    const [kept] = await store.outboxClaim('webhook', T0 + 1000, 10, T0 + 2000);
    expect(kept?.body).toBe('{"text":"leaked [REDACTED]"}');
    expect(kept?.lastError).toBe('error quoting [REDACTED]');
  });
});
