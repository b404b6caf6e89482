// Whether what this daemon commits survives a crash of the database, and a failover: `sending` must
// be on disk before the request goes out, or a crash 40 ms later forgets a request that was sent
// (issue 25: claims applied with no recorded attempt, claimed twice, a step stuck `sending`).
// autoclaim's sessions set synchronous_commit = on themselves (db.ts); what they cannot set is the
// replication: a standby that receives the log asynchronously may miss the last commits, and a
// failover to it loses them. And a database in recovery is a read-only standby: nothing can be
// recorded there, so a daemon refuses to start on one. Read at start (cluster/open.ts) and by `doctor`.
import { StateError } from '../../errors.js';
import type { Sql } from './db.js';

export interface Durability {
  /** pg_is_in_recovery(): a standby (or a primary still replaying its log). */
  inRecovery: boolean;
  /** This session's synchronous_commit (db.ts asks for on). */
  synchronousCommit: string;
  /** synchronous_standby_names; empty when no standby is synchronous. */
  synchronousStandbyNames: string;
  /** pg_stat_replication: sync_state is null when this role may not see it (pg_read_all_stats). */
  standbys: Array<{ name: string; syncState: string | null }>;
}

export async function readDurability(c: Sql): Promise<Durability> {
  const r = await c.query<{ recovery: boolean; sync: string; names: string }>(
    "SELECT pg_is_in_recovery() AS recovery, current_setting('synchronous_commit') AS sync, current_setting('synchronous_standby_names') AS names",
  );
  const row = r.rows[0];
  const standbys = row?.recovery === true ? [] : (await c.query<{ name: string | null; sync_state: string | null }>('SELECT application_name AS name, sync_state FROM pg_stat_replication ORDER BY 1')).rows;
  return {
    inRecovery: row?.recovery === true,
    synchronousCommit: row?.sync ?? 'unknown',
    synchronousStandbyNames: row?.names ?? '',
    standbys: standbys.map((s) => ({ name: s.name ?? '(unnamed)', syncState: s.sync_state })),
  };
}

export interface DurabilityFindings {
  /** Why a daemon must not start here (it could record nothing); undefined when it may. */
  refuse: string | undefined;
  /** What may lose commits: each a sentence for the operator. */
  warnings: string[];
}

export function judgeDurability(d: Durability): DurabilityFindings {
  if (d.inRecovery) {
    return {
      refuse: 'the state database is in recovery: it is a read-only standby (point state.url at the primary); nothing could be recorded, so nothing would be sent',
      warnings: [],
    };
  }
  const warnings: string[] = [];
  if (d.synchronousCommit !== 'on' && d.synchronousCommit !== 'remote_apply') {
    warnings.push(
      `synchronous_commit is ${d.synchronousCommit} in autoclaim's session (it asks for on): a commit may be lost in a crash (is a connection pooler dropping startup options?)`,
    );
  }
  const unseen = d.standbys.filter((s) => s.syncState === null);
  const loose = d.standbys.filter((s) => s.syncState === 'async' || s.syncState === 'potential');
  if (loose.length > 0) {
    const names = loose.map((s) => `${s.name} (${s.syncState})`).join(', ');
    const why = d.synchronousStandbyNames.trim() === '' ? 'synchronous_standby_names is empty' : `synchronous_standby_names (${d.synchronousStandbyNames}) does not cover them`;
    warnings.push(
      `asynchronous standby: ${names}; ${why}. A failover to it may lose the last commits, a recorded \`sending\` among them, and a request could then be sent twice: make it synchronous, or never fail over to it`,
    );
  }
  if (unseen.length > 0) {
    warnings.push(
      `${unseen.length} standby(s) whose replication mode this role may not see (grant pg_read_all_stats): make sure each one a failover may promote is synchronous`,
    );
  }
  return { refuse: undefined, warnings };
}

/** At start: throws STATE_READONLY on a standby; returns the warnings to log. */
export async function checkDurability(c: Sql): Promise<string[]> {
  const found = judgeDurability(await readDurability(c));
  if (found.refuse !== undefined) throw new StateError('STATE_READONLY', found.refuse);
  return found.warnings;
}
