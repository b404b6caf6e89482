// One schema for the cluster: a daemon works shared state only while it knows the schema's version.
// The version is checked at start (store/postgres/migrations.ts refuses a newer one, STATE_TOO_NEW),
// but a rolling upgrade starts a newer autoclaim beside running older ones, and the newer one
// migrates at its start: an older daemon that went on signing would read and write shared state
// whose meaning it does not know (a guard it does not honour), on wallets the newer one may work
// next. So every heartbeat reads the schema's version in its own round trip (sql.ts), and a daemon
// that finds one newer than it knows *steps aside*, for the process's life: every lease is dropped
// at once and handed back, its row leaves the cluster (so the newer daemons count it neither as a
// peer nor as a foreign config), and it signs nothing (the signing gate, readiness, the
// `schema_newer` alert, `cluster.schema_newer` at error once). The newer daemons take its wallets
// at their next rounds. Restarting it on the newer release is the way back.
//
// The version is also folded into the config digest (agreement.ts), so that a release from before
// this check, which never steps aside, shares no wallet with a newer one: both see the other's
// config as different, and the wallets both list are worked by neither until the older is upgraded.
// Whenever what daemons write to or read from shared state changes meaning, a migration is appended
// (an empty one, `SELECT 1`, when no table changes) so the version says so.
import type { Logger } from '../log/logger.js';

export interface SchemaRefusal {
  /** The version found in the database, and the newest this code knows. */
  found: number;
  known: number;
  /** Our wall clock when it was first seen. */
  since: number;
  reason: string;
}

export class SchemaWatch {
  private newer: SchemaRefusal | undefined;

  constructor(
    private readonly known: number | undefined,
    private readonly logger: Logger | undefined,
    private readonly daemon: string,
  ) {}

  /** The version a heartbeat read; latches (and logs once) when it is newer than this code knows. */
  observe(found: number | undefined, now: number): void {
    if (this.newer !== undefined || this.known === undefined || found === undefined || found <= this.known) return;
    const reason =
      `the shared state database has schema version ${found}, newer than this autoclaim knows (${this.known}): ` +
      'a newer autoclaim migrated it; this daemon has handed its wallets back and signs nothing. Restart it on the newer release';
    this.newer = { found, known: this.known, since: now, reason };
    this.logger?.error({ event: 'cluster.schema_newer', daemon: this.daemon, found, known: this.known }, reason);
  }

  /** Why this daemon must not work shared state any more; undefined while the schema is one it knows. */
  refusal(): SchemaRefusal | undefined {
    return this.newer;
  }
}
