// Time and restarts review (helper 30): an older copy of the state file put back at its path (a
// backup restored, a file copied back from another host, a fresh file where the old one was) does
// not know of requests sent since. On it every limit forgets the plans that moved money
// (once_per_epoch, cooldown, the day caps), so the rules fire again. The lock file beside it, which
// outlives every run, keeps the newest attempt sent (lock.ts SendMark); a state file below it is
// refused at open (STATE_ROLLED_BACK), before anything is read or written.
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireLock, lockPaths, type Lock, type SyncStore } from '../../src/store/index.js';
import { draft, freshTempDir, open, request, stateError, T0 } from './fixtures.js';

const tmp = freshTempDir();
const held: Array<{ store?: SyncStore; lock: Lock }> = [];
afterEach(() => {
  for (const h of held.splice(0)) {
    h.store?.close();
    h.lock.release();
  }
});

/** One run of a daemon: the lock, then the store under it (as runtime.ts opens them). */
function run(): { store: SyncStore; lock: Lock } {
  const lock = acquireLock(tmp.dbPath);
  const entry: { store?: SyncStore; lock: Lock } = { lock };
  held.push(entry);
  entry.store = open(tmp.dbPath, { lock });
  return { store: entry.store, lock };
}

function stop(r: { store: SyncStore; lock: Lock }): void {
  r.store.close();
  r.lock.release();
  held.splice(held.findIndex((h) => h.lock === r.lock), 1);
}

/** Records one plan's claim as sent: one attempt. */
function send(store: SyncStore, seq: number): void {
  const plan = store.insertPlan(draft({ seq }), { dry: false, now: T0, reason: 'r' });
  store.markSending(plan!.steps[0]!.id, request(), T0);
}

/** What an operator's copy of the state file is: the database file, taken while no daemon runs. */
function backup(): string {
  const copy = `${tmp.dbPath}.bak`;
  fs.copyFileSync(tmp.dbPath, copy);
  return copy;
}

function restore(copy: string): void {
  for (const suffix of ['-wal', '-shm']) fs.rmSync(`${tmp.dbPath}${suffix}`, { force: true });
  fs.copyFileSync(copy, tmp.dbPath);
}

/** Opening under the lock, as `run`, `once` and `send` do: the error it fails with. */
function refusal() {
  const lock = acquireLock(tmp.dbPath);
  held.push({ lock });
  return stateError(() => open(tmp.dbPath, { lock }));
}

/** One send, a backup of the state, a second send, then the backup put back: the state is one request behind. */
function backupThenSendAgain(): void {
  const first = run();
  send(first.store, 0);
  stop(first);
  const copy = backup();
  const second = run();
  send(second.store, 1);
  stop(second);
  restore(copy);
}

describe('a state file older than what was sent from it is refused at open', () => {
  it('a backup taken before the last send, put back: STATE_ROLLED_BACK naming the file and both requests; nothing written to it', () => {
    backupThenSendAgain();
    const before = fs.readFileSync(tmp.dbPath);
    const err = refusal();
    expect(err.code).toBe('STATE_ROLLED_BACK');
    expect(err.message).toContain(tmp.dbPath);
    expect(err.message).toMatch(/its newest request is #1, and request #2 was recorded as sent/);
    expect(err.message).toContain(lockPaths(tmp.dbPath).lock);
    expect(fs.readFileSync(tmp.dbPath).equals(before)).toBe(true);
  });

  it('the state file deleted and a new one made at its path (the wrong "start afresh"): refused', () => {
    const first = run();
    send(first.store, 0);
    stop(first);
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${tmp.dbPath}${suffix}`, { force: true });
    expect(refusal().message).toMatch(/its newest request is #0, and request #1 was recorded as sent/);
  });

  it('the lock file removed as the message says: the older copy opens (the operator chose it)', () => {
    backupThenSendAgain();
    fs.rmSync(lockPaths(tmp.dbPath).lock);
    const again = run();
    expect(again.store.listPlans({})).toHaveLength(1);
  });

  it('the newest state (a backup taken after the last send, a plain restart) opens, and a later send raises the mark', () => {
    const first = run();
    send(first.store, 0);
    stop(first);
    const copy = backup();
    restore(copy);
    const second = run();
    expect(second.lock.sent.high).toBe(1);
    send(second.store, 1);
    stop(second);
    expect(run().lock.sent.high).toBe(2);
  });

  it('a lock file from before the mark (no `sent` table) and a state never sent from: no check', () => {
    const first = run();
    expect(first.lock.sent.high).toBeUndefined();
    first.store.insertPlan(draft({ seq: 0 }), { dry: false, now: T0, reason: 'r' });
    stop(first);
    const lockDb = new Database(lockPaths(tmp.dbPath).lock);
    lockDb.exec('DROP TABLE sent');
    lockDb.close();
    const second = run();
    send(second.store, 1);
    expect(second.lock.sent.high).toBeUndefined(); // read at acquire; the mark is recorded all the same
    stop(second);
    expect(run().lock.sent.high).toBe(1);
  });
});
