// Which addresses a table holds any row for, kept in memory so that a poll of a wallet the table
// has never seen asks nothing of SQLite. Most polls are of such wallets — a wallet without a plan
// yet, an address in its first epoch — and each question was a prepared statement on a path that
// runs for every wallet of a fleet.
//
// The index only ever answers "certainly none": an address it holds is asked of the table as
// before, so what exactly-once rests on (the guards read before a decision) is still read fresh
// for every wallet that has anything to guard. It stays true because rows are only ever added for
// an address by this connection's own writes (noted with `add`) — or by another process, which
// SQLite's `PRAGMA data_version` reveals: it changes when any other connection commits, and then
// the index is read again from the table before it answers. The version is read once per turn of
// the event loop for the connection, whichever index asks first (not once per question:
// each response arrives in a turn of its own, and a wallet's turn asks five questions of two
// indexes): the answers of one turn are as of its first question, as if the reads had all been
// made then — nothing else of this process runs in between, and our own writes are noted as they
// are made.
import type { Db } from './db.js';

/** A connection's PRAGMA data_version, read at most once per turn of the event loop. */
class TurnVersion {
  private value = 0;
  private fresh = false;
  private readonly read;

  constructor(db: Db) {
    this.read = db.prepare<[], number>('PRAGMA data_version').pluck();
  }

  get(): number {
    if (!this.fresh) {
      this.value = this.read.get() ?? 0;
      this.fresh = true;
      setImmediate(() => (this.fresh = false));
    }
    return this.value;
  }
}

/** One per connection: the plans and epochs indexes of a store share their turn's read. */
const versions = new WeakMap<Db, TurnVersion>();

function versionOf(db: Db): TurnVersion {
  let v = versions.get(db);
  if (v === undefined) versions.set(db, (v = new TurnVersion(db)));
  return v;
}

export class AddressIndex {
  private addresses: Set<string> | undefined;
  private version: number | undefined;
  private readonly selectAddresses;
  private readonly dataVersion: TurnVersion;

  /** `table` is a table of ours with an indexed `address` column (a constant, not input). */
  constructor(db: Db, table: 'plans' | 'epochs_seen') {
    this.selectAddresses = db.prepare<[], string>(`SELECT DISTINCT address FROM ${table}`).pluck();
    this.dataVersion = versionOf(db);
  }

  /** False only when the table holds no row for the address. */
  mayHave(address: string): boolean {
    const version = this.dataVersion.get();
    if (this.addresses === undefined || version !== this.version) {
      this.addresses = new Set(this.selectAddresses.all());
      this.version = version;
    }
    return this.addresses.has(address);
  }

  /**
   * This connection wrote a row for the address. Safe to call inside a transaction that later
   * rolls back: an address held without rows only costs the question the table answers anyway.
   */
  add(address: string): void {
    this.addresses?.add(address);
  }
}
