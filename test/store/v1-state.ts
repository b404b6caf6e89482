// A state file exactly as the previous release (schema version 1) wrote it: migration 1 run on a
// fresh file, WAL mode, and rows as that release's store inserted them, keyed by wallet NAME.
// It holds what version 1 let happen and version 2 must carry over without losing a row:
//   - `old` renamed to `new` (same address A): the rename let A plan compound/E2/seq 0 a second
//     time (plan 2) and topup/E2 seqs 0 and 1 again (plans 5, 6), dry runs included (plan 8);
//     `old`'s compound deposit is unknown (plan 1), signed while the clock ran a day ahead, so
//     the newest x-svc-ts of A is under the name A is no longer called;
//   - `spare` pointed first at C (which has an unknown deposit, plan 10), then at D;
//   - `ops` (address B), untouched.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { ADDR, ADDR2, T0 } from './fixtures.js';

export const A = ADDR;
export const B = ADDR2;
export const C = 'Addr3333333333333333333333333333333333333333';
export const D = 'Addr4444444444444444444444444444444444444444';
export const E1 = '2025-05-31';
export const E2 = '2025-06-01';

const MIN = 60_000;
const HOUR = 60 * MIN;
/** x-svc-ts (Unix seconds) at T0. */
export const S = Math.floor(T0 / 1000);
/** The newest x-svc-ts A ever signed: under `old`, with the clock a day ahead. */
export const A_LAST_TS = S - 6 * 3600 + 86_400;

type Row = Record<string, string | number | null>;

interface StepIn {
  id: number;
  kind: 'claim' | 'deposit' | 'mint';
  symbol?: string;
  spec?: string;
  lamports?: string;
  state: 'planned' | 'sending' | 'acknowledged' | 'rejected' | 'unknown' | 'skipped';
  resolution?: string;
  /** Each send of the step: its x-svc-ts and how it ended. */
  sends?: { id: number; ts: number; outcome: 'acknowledged' | 'rejected' | 'unknown' | 'not_sent'; status?: number; error?: string }[];
}

interface PlanIn {
  id: number;
  wallet: string;
  address: string;
  rule: string;
  epoch: string;
  seq: number;
  dry?: boolean;
  status: 'open' | 'done' | 'failed' | 'blocked' | 'dry';
  claimed?: string;
  at: number;
  steps: StepIn[];
}

const HALF = JSON.stringify({ kind: 'percent', ppm: 500_000 });
const FIXED = JSON.stringify({ kind: 'fixed', lamports: '100000000' });

type Sends = NonNullable<StepIn['sends']>;

/** A claim then a 50% deposit; `deposit` is where the deposit ended (`skipped` for a dry run). */
function compound(
  id: number,
  wallet: string,
  address: string,
  epoch: string,
  at: number,
  deposit: 'acknowledged' | 'unknown' | 'skipped',
  ts: number,
  dry = false,
): PlanIn {
  const claimSends: Sends | undefined = dry ? undefined : [{ id: id * 100 + 1, ts, outcome: 'acknowledged', status: 200 }];
  const depositSends: Sends | undefined = dry
    ? undefined
    : deposit === 'unknown'
      ? [{ id: id * 100 + 2, ts: ts + 1, outcome: 'unknown', error: 'socket hang up' }]
      : [{ id: id * 100 + 2, ts: ts + 1, outcome: 'acknowledged', status: 200 }];
  return {
    id,
    wallet,
    address,
    rule: 'compound',
    epoch,
    seq: 0,
    dry,
    status: dry ? 'dry' : deposit === 'unknown' ? 'blocked' : 'done',
    ...(dry ? {} : { claimed: '1500000000' }),
    at,
    steps: [
      {
        id: id * 10 + 1,
        kind: 'claim',
        state: dry ? 'skipped' : 'acknowledged',
        ...(dry ? { resolution: 'dry run' } : {}),
        ...(claimSends ? { sends: claimSends } : {}),
      },
      {
        id: id * 10 + 2,
        kind: 'deposit',
        symbol: 'SOL2X',
        spec: HALF,
        ...(dry ? { resolution: 'dry run' } : { lamports: '750000000' }),
        state: dry ? 'skipped' : deposit,
        ...(depositSends ? { sends: depositSends } : {}),
      },
    ],
  };
}

function topup(id: number, wallet: string, seq: number, at: number, done: boolean, ts: number): PlanIn {
  return {
    id,
    wallet,
    address: A,
    rule: 'topup',
    epoch: E2,
    seq,
    status: done ? 'done' : 'open',
    at,
    steps: [
      {
        id: id * 10 + 1,
        kind: 'mint',
        symbol: 'SOL3X',
        spec: FIXED,
        lamports: '100000000',
        state: done ? 'acknowledged' : 'planned',
        ...(done ? { sends: [{ id: id * 100 + 1, ts, outcome: 'acknowledged' as const, status: 200 }] } : {}),
      },
    ],
  };
}

/** Every plan of the v1 file, in id order. */
export const V1_PLANS: readonly PlanIn[] = [
  compound(1, 'old', A, E2, T0 - 6 * HOUR, 'unknown', A_LAST_TS - 1),
  compound(2, 'new', A, E2, T0 - HOUR, 'acknowledged', S - 3600),
  topup(3, 'old', 0, T0 - 5 * HOUR, true, S - 5 * 3600),
  topup(4, 'old', 1, T0 - 4 * HOUR, true, S - 4 * 3600),
  topup(5, 'new', 0, T0 - 50 * MIN, true, S - 50 * 60),
  topup(6, 'new', 1, T0 - 40 * MIN, false, 0),
  compound(7, 'old', A, E2, T0 - 6 * HOUR, 'skipped', 0, true),
  compound(8, 'new', A, E2, T0 - HOUR, 'skipped', 0, true),
  compound(9, 'ops', B, E2, T0 - 5 * HOUR, 'acknowledged', S - 5 * 3600 + 50),
  compound(10, 'spare', C, E1, T0 - 30 * HOUR, 'unknown', S - 30 * 3600),
  compound(11, 'old', A, E1, T0 - 30 * HOUR, 'acknowledged', S - 30 * 3600 + 10),
];

/** Where migration 2 must move the plans version 1 let collide under (address, rule, epoch, seq, dry). */
export const MOVED_SEQ: Readonly<Record<number, number>> = { 2: 1, 5: 2, 6: 3, 8: 1 };

function summaryRaw(address: string, pending: string): string {
  return JSON.stringify({ address, epoch: E2, pending_sol: pending });
}

/** A wallet_state row as version 1 upserted it after a poll. */
function polled(wallet: string, address: string, at: number, okAt: number, over: Row = {}): Row {
  return {
    wallet,
    address,
    last_poll_at: at,
    last_ok_at: okAt,
    last_error: null,
    epoch: E2,
    pending_lamports: '0',
    lifetime_lamports: '0',
    rank: null,
    tier: null,
    summary_raw: summaryRaw(address, '0'),
    updated_at: at,
    ...over,
  };
}

const WALLET_STATE: Row[] = [
  polled('old', A, T0 - 2 * HOUR, T0 - 2 * HOUR, {
    pending_lamports: '1500000000',
    lifetime_lamports: '9000000000',
    rank: 7,
    tier: 'gold',
    summary_raw: summaryRaw(A, '1.5'),
  }),
  polled('new', A, T0 - 10 * MIN, T0 - 10 * MIN, { lifetime_lamports: '10500000000', rank: 6, tier: 'gold' }),
  polled('ops', B, T0 - 5 * MIN, T0 - HOUR, {
    last_error: 'HTTP 503',
    pending_lamports: '200000000',
    lifetime_lamports: null,
    summary_raw: summaryRaw(B, '0.2'),
  }),
  polled('spare', D, T0 - MIN, T0 - MIN),
];

const EPOCHS_SEEN: Row[] = [
  { wallet: 'old', epoch: E1, first_seen_at: T0 - 30 * HOUR },
  { wallet: 'old', epoch: E2, first_seen_at: T0 - 6 * HOUR },
  { wallet: 'new', epoch: E2, first_seen_at: T0 - HOUR },
  { wallet: 'ops', epoch: E2, first_seen_at: T0 - 5 * HOUR },
  { wallet: 'spare', epoch: E1, first_seen_at: T0 - 30 * HOUR },
  { wallet: 'spare', epoch: E2, first_seen_at: T0 - 3 * HOUR },
];

/** What the previous release signed and stored for a step: never the Authorization header. */
function storedRequest(address: string, kind: StepIn['kind'], ts: number): string {
  const url = `http://127.0.0.1:8787/v1/${kind === 'claim' ? 'rewards/claim' : `actions/${kind}`}`;
  const req: Record<string, unknown> = {
    method: 'POST',
    url,
    ts,
    message: `${address}|${ts}`,
    body: JSON.stringify({ wallet: address, signature: '5sig' }),
    headers: { 'x-svc-ts': String(ts), 'x-svc-wallet': address },
  };
  if (kind === 'claim') req.before = { epoch: E2, pendingLamports: '1500000000', lifetimeLamports: '9000000000' };
  return JSON.stringify(req);
}

function insert(db: Database.Database, table: string, row: Row): void {
  const cols = Object.keys(row);
  db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`).run(row);
}

function fill(db: Database.Database): void {
  for (const w of WALLET_STATE) insert(db, 'wallet_state', w);
  for (const e of EPOCHS_SEEN) insert(db, 'epochs_seen', e);
  for (const p of V1_PLANS) {
    const last = p.at + MIN;
    insert(db, 'plans', {
      id: p.id, wallet: p.wallet, address: p.address, rule: p.rule, epoch: p.epoch, seq: p.seq, dry: p.dry === true ? 1 : 0,
      status: p.status, estimate_lamports: '1500000000', claimed_lamports: p.claimed ?? null, reason: `pending_sol 1.5 >= 0.5`,
      created_at: p.at, updated_at: last,
    });
    p.steps.forEach((s, idx) => {
      const sends = s.sends ?? [];
      const lastSend = sends.at(-1);
      insert(db, 'steps', {
        id: s.id, plan_id: p.id, idx, kind: s.kind, symbol: s.symbol ?? null, amount_spec: s.spec ?? null,
        amount_lamports: s.lamports ?? null, state: s.state, attempts: sends.length,
        request: lastSend === undefined ? null : storedRequest(p.address, s.kind, lastSend.ts),
        response_status: lastSend?.status ?? null,
        response_raw: lastSend?.status === undefined ? null : '{"status":"ok"}',
        error: lastSend?.error ?? null, resolution: s.resolution ?? null, created_at: p.at, updated_at: last,
      });
      sends.forEach((a, i) => {
        insert(db, 'attempts', {
          id: a.id, step_id: s.id, n: i + 1, request: storedRequest(p.address, s.kind, a.ts), started_at: p.at,
          finished_at: p.at + 1000, outcome: a.outcome, status: a.status ?? null, error: a.error ?? null,
        });
      });
    });
  }
}

export interface V1Options {
  /**
   * Leave the rows only in the WAL, as a daemon killed -9 leaves them: the file and its `-wal` are
   * copied while the writer is still open, so nothing was checkpointed.
   */
  killed?: boolean;
  /** Runs on the v1 connection after the rows are in (foreign keys off), to plant a defect. */
  tamper?: (db: Database.Database) => void;
}

/** Writes a version-1 state file at `file` (its directory is created 0700, the file 0600). */
export function writeV1State(file: string, opts: V1Options = {}): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const at = opts.killed === true ? `${file}.writer` : file;
  fs.writeFileSync(at, '', { mode: 0o600 });
  const db = new Database(at);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma('wal_autocheckpoint = 0');
    db.transaction(() => {
      db.exec(MIGRATIONS[0]!);
      db.pragma('user_version = 1');
    })();
    db.transaction(() => fill(db))();
    if (opts.tamper !== undefined) {
      db.pragma('foreign_keys = OFF');
      opts.tamper(db);
    }
    if (opts.killed === true) {
      fs.copyFileSync(at, file);
      fs.copyFileSync(`${at}-wal`, `${file}-wal`);
      fs.chmodSync(file, 0o600);
      fs.chmodSync(`${file}-wal`, 0o600);
    }
  } finally {
    db.close();
  }
  if (opts.killed === true) fs.rmSync(at, { force: true });
}

/** Every row of a table, in rowid (or key) order, read without migrating. */
export function rawRows(file: string, table: string): Row[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare<[], Row>(`SELECT * FROM ${table} ORDER BY 1, 2`).all();
  } finally {
    db.close();
  }
}
