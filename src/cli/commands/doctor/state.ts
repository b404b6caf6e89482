// With state.url, `doctor` also asks the PostgreSQL state whether what a daemon records there would
// survive a crash and a failover (store/postgres/durability.ts): a standby in recovery is a problem
// (a daemon refuses to start on it), and so is an asynchronous standby a failover could promote
// (it may have missed the last commits, a recorded `sending` among them). Reads only, on a
// read-only session with the daemon's own connection settings; nothing is created or migrated.
import type { Finding } from './report.js';

export async function stateFindings(url: string, opts: { password: string | undefined; queryTimeoutMs: number }): Promise<Finding[]> {
  const [{ endPool, openPool, redactUrl }, { judgeDurability, readDurability }] = await Promise.all([
    import('../../../store/postgres/db.js'),
    import('../../../store/postgres/durability.js'),
  ]);
  const where = redactUrl(url);
  let pool;
  try {
    pool = await openPool(url, { password: opts.password, readonly: true, application: 'autoclaim-doctor', queryTimeoutMs: opts.queryTimeoutMs });
    const found = judgeDurability(await readDurability(pool));
    if (found.refuse !== undefined) return [{ area: 'state', level: 'problem', text: `${where}: ${found.refuse}` }];
    if (found.warnings.length === 0) {
      return [{ area: 'state', level: 'ok', text: `${where}: a primary; commits are durable (synchronous_commit on) and no asynchronous standby is attached` }];
    }
    return found.warnings.map((w) => ({ area: 'state', level: 'problem', text: `${where}: ${w}` }));
  } catch (err) {
    return [{ area: 'state', level: 'problem', text: `cannot read the state database ${where}: ${err instanceof Error ? err.message : String(err)}` }];
  } finally {
    if (pool !== undefined) await endPool(pool);
  }
}
