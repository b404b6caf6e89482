// The in-memory index of addresses with plans (and with epochs seen) lets a poll of a wallet the
// state has never planned for skip the exactly-once guard reads. It may only ever answer "none"
// when the table holds none: a plan or an epoch another connection commits — a second process on
// the same file, `autoclaim send` between two runs — must be seen at the next question asked in a
// later turn of the event loop (the answers of one turn are as of its first question).
import { afterEach, describe, expect, it } from 'vitest';
import type { SyncStore } from '../../src/store/index.js';
import { ADDR, ADDR2, draft, freshTempDir, open, request, summary, T0 } from './fixtures.js';

const tmp = freshTempDir();
const opened: SyncStore[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

/** The next turn of the event loop. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function both(): [SyncStore, SyncStore] {
  const a = open(tmp.dbPath);
  const b = open(tmp.dbPath);
  opened.push(a, b);
  return [a, b];
}

describe('a wallet without plans is answered without a query, and never wrongly', () => {
  it('sees a plan another connection recorded after it answered "none" for that address', async () => {
    const [a, b] = both();
    // a has answered for ADDR (and so read its index) before b records anything.
    expect(a.activePlans(ADDR)).toEqual([]);
    expect(a.planHistory(ADDR, 0)).toEqual([]);
    const plan = b.insertPlan(draft(), { dry: false, reason: 'test' });
    expect(plan).toBeDefined();
    await nextTurn();
    expect(a.activePlans(ADDR).map((p) => p.id)).toEqual([plan?.id]);
    expect(a.planHistory(ADDR, 0).map((h) => h.id)).toEqual([plan?.id]);
    // A step in doubt under that plan is seen too.
    const claim = plan?.steps[0];
    if (claim === undefined) throw new Error('plan without steps');
    b.markSending(claim.id, request(), T0);
    b.markUnknown(claim.id, { error: 'timed out' }, T0);
    await nextTurn();
    expect(a.claimInDoubt(ADDR)).toBe(true);
    expect(a.claimInDoubt(ADDR2)).toBe(false);
  });

  it('sees its own plans at once, and other addresses stay empty', () => {
    const [a] = both();
    expect(a.activePlans(ADDR)).toEqual([]);
    const plan = a.insertPlan(draft(), { dry: false, reason: 'test' });
    expect(a.activePlans(ADDR).map((p) => p.id)).toEqual([plan?.id]);
    expect(a.activePlans(ADDR2)).toEqual([]);
  });

  it('an epoch another connection recorded is not new to this one', async () => {
    const [a, b] = both();
    expect(a.recordPoll('w', ADDR2, T0, { ok: true, summary: summary({ address: ADDR2, epoch: '2025-06-01' }) })).toEqual({ newEpoch: true });
    a.flushPolls();
    // b records ADDR's epoch first; a, whose index was read before, must find it in the table.
    expect(b.recordPoll('w', ADDR, T0, { ok: true, summary: summary({ epoch: '2025-06-02' }) })).toEqual({ newEpoch: true });
    b.flushPolls();
    await nextTurn();
    expect(a.recordPoll('w', ADDR, T0, { ok: true, summary: summary({ epoch: '2025-06-02' }) })).toEqual({ newEpoch: false });
    expect(a.recordPoll('w', ADDR, T0, { ok: true, summary: summary({ epoch: '2025-06-03' }) })).toEqual({ newEpoch: true });
  });
});
