// Issue 11, item 9: a state file swapped, or its `-wal` deleted, under an open store. Every later
// commit would go to a file nobody reads again, so markSending refuses (STATE_REPLACED), for good;
// and the record of each send is in the database file itself, not only in the `-wal`.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { StateFiles } from '../../src/store/sqlite/identity.js';
import { acquireLock, type Lock, type SyncStore } from '../../src/store/index.js';
import { captureLog, type LogLine } from '../support/log.js';
import { draft, freshTempDir, open, request, stateError, T0 } from './fixtures.js';

const tmp = freshTempDir();
const stores: SyncStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

interface Opened {
  store: SyncStore;
  /** The lines logged with this `event`. */
  events: (name: string) => LogLine[];
  /** The ids of planned steps, one per plan inserted (the plan's claim). */
  steps: number[];
}

/** A store with `plans` open plans, its log captured. */
function openWithPlans(file: string, plans = 3): Opened {
  const { logger, events } = captureLog('info');
  const store = open(file, { logger });
  stores.push(store);
  const steps: number[] = [];
  for (let seq = 0; seq < plans; seq++) steps.push(store.insertPlan(draft({ seq }), { dry: false, now: T0, reason: 'r' })!.steps[0]!.id);
  return { store, events, steps };
}

let copies = 0;

/** What a reader of the database file alone (no `-wal`) finds: what survives losing the WAL. */
function mainFileOnly(file: string): { steps: Array<{ id: number; state: string }>; plans: number } {
  const copy = `${file}.copy-${copies++}`;
  fs.copyFileSync(file, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return {
      steps: db.prepare<[], { id: number; state: string }>('SELECT id, state FROM steps ORDER BY id').all(),
      plans: (db.prepare('SELECT count(*) AS n FROM plans').get() as { n: number }).n,
    };
  } finally {
    db.close();
    fs.rmSync(copy);
  }
}

describe('markSending refuses once the state files are not the ones opened', () => {
  it('the -wal deleted: STATE_REPLACED naming it, logged once, and every later markSending the same', () => {
    const { store, events, steps } = openWithPlans(tmp.dbPath);
    store.markSending(steps[0]!, request(), T0); // all well so far
    fs.rmSync(`${tmp.dbPath}-wal`);

    const err = stateError(() => store.markSending(steps[1]!, request(), T0));
    expect(err.code).toBe('STATE_REPLACED');
    expect(err.message).toContain(`${tmp.dbPath}-wal`);
    expect(err.message).toMatch(/was deleted/);
    expect(store.getStep(steps[1]!)).toMatchObject({ state: 'planned', attempts: 0 });

    // The latch: the WAL coming back (any new file by that name) changes nothing.
    fs.writeFileSync(`${tmp.dbPath}-wal`, '');
    expect(stateError(() => store.markSending(steps[2]!, request(), T0))).toBe(err);
    expect(store.getStep(steps[2]!)?.state).toBe('planned');
    const replaced = events('state.replaced');
    expect(replaced).toEqual([expect.objectContaining({ level: 'error', role: 'WAL', how: 'deleted', file: `${tmp.dbPath}-wal` })]);
  });

  it('the database swapped for a copy of itself: STATE_REPLACED naming it', () => {
    const { store, events, steps } = openWithPlans(tmp.dbPath);
    fs.copyFileSync(tmp.dbPath, `${tmp.dbPath}.restored`);
    fs.renameSync(`${tmp.dbPath}.restored`, tmp.dbPath);

    const err = stateError(() => store.markSending(steps[0]!, request(), T0));
    expect(err.code).toBe('STATE_REPLACED');
    expect(err.message).toContain(`state database ${tmp.dbPath} was replaced by another file`);
    expect(stateError(() => store.markSending(steps[1]!, request(), T0))).toBe(err);
    expect(events('state.replaced')).toEqual([expect.objectContaining({ role: 'database', how: 'replaced' })]);
  });

  it('the database deleted: STATE_REPLACED', () => {
    const { store, steps } = openWithPlans(tmp.dbPath);
    fs.rmSync(tmp.dbPath);
    expect(stateError(() => store.markSending(steps[0]!, request(), T0)).message).toMatch(/state database .* was deleted/);
  });

  it('a swap between the look and the commit is caught by the look after it', () => {
    fs.mkdirSync(path.dirname(tmp.dbPath), { recursive: true });
    const raw = new Database(tmp.dbPath);
    raw.pragma('journal_mode = WAL');
    const files = new StateFiles(raw, tmp.dbPath, { logger: silentLogger(), readonly: false });
    let committed = false;
    const err = stateError(() =>
      files.sending(() => {
        committed = true;
        fs.rmSync(`${tmp.dbPath}-wal`);
      }),
    );
    expect(committed).toBe(true);
    expect(err.code).toBe('STATE_REPLACED');
    expect(stateError(() => files.sending(() => (committed = false))).code).toBe('STATE_REPLACED');
    expect(committed).toBe(true); // the second commit never ran
    raw.close();
  });
});

describe('what is not a replacement', () => {
  it('another connection opening, checkpointing (TRUNCATE) and closing beside the store', () => {
    const { store, steps } = openWithPlans(tmp.dbPath);
    const other = open(tmp.dbPath);
    other.insertPlan(draft({ seq: 9 }), { dry: false, now: T0, reason: 'r' });
    other.close();
    const raw = new Database(tmp.dbPath);
    raw.pragma('wal_checkpoint(TRUNCATE)');
    raw.close();
    const reader = open(tmp.dbPath, { readonly: true });
    reader.listPlans();
    reader.close();
    for (const id of steps) expect(store.markSending(id, request(), T0).state).toBe('sending');
  });

  it('a state path spelled through a symlink and `..`: the WAL is found beside the real file, and watched there', () => {
    const real = path.dirname(tmp.dbPath);
    fs.mkdirSync(real, { recursive: true });
    fs.symlinkSync(real, path.join(tmp.dir, 'via'));
    const spelled = `${tmp.dir}/via/../via/autoclaim.db`;
    const { store, steps } = openWithPlans(spelled);
    expect(store.markSending(steps[0]!, request(), T0).state).toBe('sending');
    expect(fs.existsSync(`${tmp.dbPath}-wal`)).toBe(true);
    fs.rmSync(`${tmp.dbPath}-wal`);
    expect(stateError(() => store.markSending(steps[1]!, request(), T0)).code).toBe('STATE_REPLACED');
  });
});

describe('the record of a send never lives only in the -wal', () => {
  it('right after markSending the database file alone holds the plan and its `sending` step', () => {
    const { store, steps } = openWithPlans(tmp.dbPath);
    store.markSending(steps[1]!, request(), T0);
    const seen = mainFileOnly(tmp.dbPath);
    expect(seen.plans).toBe(3);
    expect(seen.steps.find((s) => s.id === steps[1])?.state).toBe('sending');
  });

  it('so losing the -wal afterwards (then a crash) leaves the step `sending`, which a restart holds as unknown', () => {
    const { store, steps } = openWithPlans(tmp.dbPath, 1);
    store.markSending(steps[0]!, request(), T0);
    store.markAcknowledged(steps[0]!, { status: 200, responseRaw: '{"status":"success"}' }, T0);
    // A kill -9 after the -wal was deleted leaves exactly the database file: restart on a copy of it.
    const survivor = path.join(tmp.dir, 'after-crash.db');
    fs.copyFileSync(tmp.dbPath, survivor);
    const restarted = open(survivor);
    stores.push(restarted);
    expect(restarted.recoverInFlight(T0).map((s) => s.id)).toEqual([steps[0]]);
    expect(restarted.getStep(steps[0]!)?.state).toBe('unknown');
    // The plan is there: the same (wallet, rule, epoch) cannot plan, and send, a second time.
    expect(restarted.insertPlan(draft({ seq: 0 }), { dry: false, now: T0, reason: 'r' })).toBeUndefined();
  });
});

describe('markSending refuses once the state lock is not the one this process holds (issue 24, finding 7)', () => {
  /** A store opened as `run` opens it: under the state lock, which it watches. */
  function lockedStore(): Opened & { lock: Lock } {
    const lock = acquireLock(tmp.dbPath);
    const { logger, events } = captureLog('info');
    const store = open(tmp.dbPath, { logger, lock });
    stores.push(store);
    const steps = [0, 1].map((seq) => store.insertPlan(draft({ seq }), { dry: false, now: T0, reason: 'r' })!.steps[0]!.id);
    return { store, events, steps, lock };
  }

  it.each([
    ['deleted', (p: string) => fs.rmSync(p)],
    ['replaced', (p: string) => {
      fs.rmSync(p);
      fs.writeFileSync(p, '');
    }],
  ] as const)('the lock file %s: STATE_REPLACED naming it, logged once, nothing more recorded as sending', (how, change) => {
    const { store, events, steps, lock } = lockedStore();
    try {
      store.markSending(steps[0]!, request(), T0); // all well so far
      change(lock.path);
      const err = stateError(() => store.markSending(steps[1]!, request(), T0));
      expect(err.code).toBe('STATE_REPLACED');
      expect(err.message).toContain(`the lock file ${lock.path} of state database ${tmp.dbPath} ${how === 'deleted' ? 'was deleted' : 'was replaced by another file'}`);
      expect(err.message).toMatch(/another autoclaim may now be running on this state/);
      expect(stateError(() => store.markSending(steps[1]!, request(), T0)).code).toBe('STATE_REPLACED');
      expect(events('state.replaced')).toMatchObject([{ level: 'error', role: 'lock', how }]);
      expect(store.getStep(steps[1]!)!.state).toBe('planned');
    } finally {
      lock.release();
    }
  });

  it('a store opened without the lock (status, actions) does not watch it', () => {
    const lock = acquireLock(tmp.dbPath);
    try {
      const store = open(tmp.dbPath);
      stores.push(store);
      const step = store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' })!.steps[0]!.id;
      fs.rmSync(lock.path);
      expect(store.markSending(step, request(), T0).state).toBe('sending');
    } finally {
      lock.release();
    }
  });
});
