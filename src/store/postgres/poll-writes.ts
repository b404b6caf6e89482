// Poll records written behind, for an asynchronous table: the same contract as ../poll-writes.ts
// (records buffered, a newer record of an address replacing the older, written in one transaction
// when a batch fills, a moment after the first, and always before any plan or step write, any read
// of wallet_state, and close), with the epoch check and the write awaited. A sibling rather than a
// generalisation of that class: making it answer "now or later" would put a promise, or a branch
// on every call, into SQLite's hot path, which issue 14 measured to the microsecond.
//
// Writes are serialised: a flush that starts while another is in flight waits for it, so a caller
// that awaits flush() knows every record buffered before its call is written (or the flush threw).
// Records arriving during a write go to a new buffer; a failed write puts its records back, under
// any newer ones of the same address.
import {
  DEFAULT_FLUSH_AFTER_MS,
  DEFAULT_MAX_BATCH,
  toBatch,
  unrefTimer,
  type EpochRow,
  type PendingPoll,
  type PollBatch,
  type PollTable,
  type PollWriteOptions,
} from '../poll-writes.js';
import type { PollResult } from '../port.js';

/** PollTable with the epoch check and the write answered later. */
export interface AsyncPollTable extends Pick<PollTable, 'okRow' | 'failedRow'> {
  epochSeen(address: string, epoch: string): Promise<boolean>;
  write(batch: PollBatch): Promise<void>;
}

export class AsyncPollWrites {
  private pending = new Map<string, PendingPoll>();
  private epochs = new Map<string, EpochRow>();
  private readonly knownEpoch = new Map<string, string>();
  /** The epoch of each address's latest good poll recorded by this process (buffered, in flight or written). */
  private readonly lastOk = new Map<string, string>();
  private cancelTimer: (() => void) | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly maxBatch: number;
  private readonly afterMs: number;

  constructor(
    private readonly table: AsyncPollTable,
    private readonly opts: PollWriteOptions = {},
  ) {
    this.maxBatch = Math.max(1, opts.maxBatch ?? DEFAULT_MAX_BATCH);
    this.afterMs = opts.afterMs ?? DEFAULT_FLUSH_AFTER_MS;
  }

  get buffered(): number {
    return this.pending.size;
  }

  async record(wallet: string, address: string, at: number, result: PollResult): Promise<{ newEpoch: boolean }> {
    let newEpoch = false;
    if (result.ok) {
      const row = this.table.okRow(wallet, address, at, result.summary);
      newEpoch = await this.isNewEpoch(address, row.epoch, at);
      this.pending.set(address, { ok: row });
      this.lastOk.set(address, row.epoch);
    } else {
      const entry = this.pending.get(address) ?? {};
      entry.failed = this.table.failedRow(wallet, address, at, result.error);
      this.pending.set(address, entry);
    }
    if (this.pending.size >= this.maxBatch) await this.flush();
    else this.cancelTimer ??= (this.opts.timer ?? unrefTimer)(() => this.onTimer(), this.afterMs);
    return { newEpoch };
  }

  /** The epoch of this address's latest good poll recorded by this process, written or not. */
  lastEpoch(address: string): string | undefined {
    return this.lastOk.get(address);
  }

  /** Writes every record buffered so far, after any write in flight. */
  flush(): Promise<void> {
    const run = this.chain.then(() => this.writeNow());
    this.chain = run.catch(() => undefined);
    return run;
  }

  discard(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.pending = new Map();
    this.epochs = new Map();
    this.knownEpoch.clear();
    this.lastOk.clear();
  }

  private async writeNow(): Promise<void> {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (this.pending.size === 0 && this.epochs.size === 0) return;
    const pending = this.pending;
    const epochs = this.epochs;
    this.pending = new Map();
    this.epochs = new Map();
    try {
      await this.table.write(toBatch(pending, epochs));
    } catch (err) {
      this.putBack(pending, epochs);
      throw err;
    }
  }

  private putBack(pending: Map<string, PendingPoll>, epochs: Map<string, EpochRow>): void {
    for (const [address, old] of pending) {
      const newer = this.pending.get(address);
      if (newer === undefined) this.pending.set(address, old);
      // A newer good poll supersedes everything older; a newer failure keeps the older good summary.
      else if (newer.ok === undefined && old.ok !== undefined) newer.ok = old.ok;
    }
    for (const [key, e] of epochs) if (!this.epochs.has(key)) this.epochs.set(key, e);
    if (this.pending.size > 0) this.cancelTimer ??= (this.opts.timer ?? unrefTimer)(() => this.onTimer(), this.afterMs);
  }

  private onTimer(): void {
    this.cancelTimer = undefined;
    this.flush().catch((err: unknown) => this.opts.onTimerError?.(err, this.pending.size));
  }

  private async isNewEpoch(address: string, epoch: string, at: number): Promise<boolean> {
    if (this.knownEpoch.get(address) === epoch) return false;
    const key = `${address}\n${epoch}`;
    const seen = this.epochs.has(key) || (await this.table.epochSeen(address, epoch));
    this.knownEpoch.set(address, epoch);
    if (seen || this.epochs.has(key)) return false;
    this.epochs.set(key, { address, epoch, at });
    return true;
  }
}

