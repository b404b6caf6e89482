// Poll records written behind: a poll's record is kept in memory and written with others in one
// transaction — when a batch is full, a moment after the first of them (1 s by default), and
// always before anything the records could be read back by or ordered after: every plan and step
// write, every read of wallet_state, and close. One transaction per poll was most of a poll's CPU.
//
// What it changes: a crash (or a power cut) loses the poll records not yet written — at most the
// last second's — and never a plan or a step, which are still written, at synchronous=FULL, by the
// call that makes them. A poll record is nothing exactly-once rests on (plans and steps carry their
// own baselines, see wallets.ts), and a plan is never committed before the poll records buffered
// when it was decided. Another process (`autoclaim status`) sees a poll up to a second late.
//
// Memory stays bounded by the fleet: a newer record of an address replaces the older one, as its
// write would have (a failed poll after a good one keeps the good summary, as in the table).
import type { Logger } from '../log/logger.js';
import type { PollResult } from './port.js';

export interface OkPollRow {
  wallet: string;
  address: string;
  at: number;
  epoch: string;
  pending: string;
  lifetime: string | null;
  rank: number | null;
  tier: string | null;
  raw: string | null;
}

export interface FailedPollRow {
  wallet: string;
  address: string;
  at: number;
  error: string;
}

export interface EpochRow {
  address: string;
  epoch: string;
  at: number;
}

/** What one transaction writes: epochs first, then each address's good poll, then its failed one. */
export interface PollBatch {
  epochs: EpochRow[];
  ok: OkPollRow[];
  failed: FailedPollRow[];
}

/** The table side (wallets.ts). */
export interface PollTable {
  /** The record's columns, checked (out-of-range lamports throw here, at the poll, not later). */
  okRow(wallet: string, address: string, at: number, summary: Extract<PollResult, { ok: true }>['summary']): OkPollRow;
  failedRow(wallet: string, address: string, at: number, error: string): FailedPollRow;
  /** Whether epochs_seen already has this address's epoch. */
  epochSeen(address: string, epoch: string): boolean;
  /** The whole batch in one transaction; throws (a StateError or SQLite's) and writes nothing on failure. */
  write(batch: PollBatch): void;
}

/** Runs `fn` once after `ms` unless cancelled; must not keep the process alive. */
export type PollTimer = (fn: () => void, ms: number) => () => void;

export interface PollWriteOptions {
  /** Buffered addresses that make the record call write the batch at once; default 1000. */
  maxBatch?: number;
  /** How long the first buffered record waits at most; default 1000 ms. */
  afterMs?: number;
  timer?: PollTimer;
  /** A write the timer started failed; the records stay buffered for the next write. */
  onTimerError?: (err: unknown, buffered: number) => void;
}

/**
 * The options an adapter's store gives its writer: a read-only store tries (and is refused) each
 * record at once, and a write its timer started that fails is logged, the records kept. `describe`
 * is the adapter's own error mapping (its StateError's message).
 */
export function storePollWriteOptions(
  opts: { pollWrites?: Omit<PollWriteOptions, 'onTimerError'> | undefined; readonly?: boolean | undefined },
  logger: Logger,
  describe: (err: unknown) => string,
): PollWriteOptions {
  return {
    ...opts.pollWrites,
    ...(opts.readonly === true ? { maxBatch: 1 } : {}),
    onTimerError: (err, buffered) =>
      logger.error({ event: 'state.poll_write_failed', err: describe(err), buffered }, 'poll records could not be written; they are kept for the next try'),
  };
}

export const DEFAULT_MAX_BATCH = 1000;
export const DEFAULT_FLUSH_AFTER_MS = 1000;

/** The default timer: one that does not keep the process alive. */
export const unrefTimer: PollTimer = (fn, ms) => {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
};

/** An address's buffered records: its latest good poll, and a failed one since. */
export interface PendingPoll {
  ok?: OkPollRow;
  failed?: FailedPollRow;
}

/** What one transaction writes for these buffered records and epochs. */
export function toBatch(pending: ReadonlyMap<string, PendingPoll>, epochs: ReadonlyMap<string, EpochRow>): PollBatch {
  const batch: PollBatch = { epochs: [...epochs.values()], ok: [], failed: [] };
  for (const p of pending.values()) {
    if (p.ok !== undefined) batch.ok.push(p.ok);
    if (p.failed !== undefined) batch.failed.push(p.failed);
  }
  return batch;
}

export class PollWrites {
  private pending = new Map<string, PendingPoll>();
  private epochs = new Map<string, EpochRow>();
  /** The last epoch of each address known to be in epochs_seen or buffered for it. */
  private readonly knownEpoch = new Map<string, string>();
  /** The epoch of each address's latest good poll recorded by this process (buffered or written). */
  private readonly lastOk = new Map<string, string>();
  private cancelTimer: (() => void) | undefined;
  private readonly maxBatch: number;
  private readonly afterMs: number;
  private readonly timer: PollTimer;

  constructor(
    private readonly table: PollTable,
    private readonly opts: PollWriteOptions = {},
  ) {
    this.maxBatch = Math.max(1, opts.maxBatch ?? DEFAULT_MAX_BATCH);
    this.afterMs = opts.afterMs ?? DEFAULT_FLUSH_AFTER_MS;
    this.timer = opts.timer ?? unrefTimer;
  }

  /** Addresses with a record not yet written. */
  get buffered(): number {
    return this.pending.size;
  }

  /** Buffers one poll's record; `newEpoch` as the table would have said had it been written now. */
  record(wallet: string, address: string, at: number, result: PollResult): { newEpoch: boolean } {
    let newEpoch = false;
    const entry = this.pending.get(address) ?? {};
    if (result.ok) {
      const row = this.table.okRow(wallet, address, at, result.summary);
      newEpoch = this.isNewEpoch(address, row.epoch, at);
      entry.ok = row;
      entry.failed = undefined;
      this.lastOk.set(address, row.epoch);
    } else {
      entry.failed = this.table.failedRow(wallet, address, at, result.error);
    }
    this.pending.set(address, entry);
    if (this.pending.size >= this.maxBatch) this.flush();
    else this.cancelTimer ??= this.timer(() => this.onTimer(), this.afterMs);
    return { newEpoch };
  }

  /** The epoch of this address's latest good poll recorded by this process, written or not. */
  lastEpoch(address: string): string | undefined {
    return this.lastOk.get(address);
  }

  /** Writes every buffered record in one transaction. On failure they stay buffered and it throws. */
  flush(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (this.pending.size === 0 && this.epochs.size === 0) return;
    this.table.write(toBatch(this.pending, this.epochs));
    this.pending = new Map();
    this.epochs = new Map();
  }

  /** Drops what is buffered without writing it (a store closing after a failed final write). */
  discard(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.pending = new Map();
    this.epochs = new Map();
    this.knownEpoch.clear();
    this.lastOk.clear();
  }

  private onTimer(): void {
    this.cancelTimer = undefined;
    try {
      this.flush();
    } catch (err) {
      this.opts.onTimerError?.(err, this.pending.size);
    }
  }

  private isNewEpoch(address: string, epoch: string, at: number): boolean {
    if (this.knownEpoch.get(address) === epoch) return false;
    const key = `${address}\n${epoch}`;
    const seen = this.epochs.has(key) || this.table.epochSeen(address, epoch);
    // Only once the table has answered: a read that throws leaves nothing believed.
    this.knownEpoch.set(address, epoch);
    if (seen) return false;
    this.epochs.set(key, { address, epoch, at });
    return true;
  }
}

/** The later of two epochs ("YYYY-MM-DD" sorts as text); undefined when neither is known. */
export function laterEpoch(a: string | null | undefined, b: string | null | undefined): string | undefined {
  if (a == null) return b ?? undefined;
  if (b == null) return a;
  return a > b ? a : b;
}
