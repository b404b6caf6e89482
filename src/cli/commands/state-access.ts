// status and actions read the state while a daemon may be running: the SQLite file with no lock
// (WAL readers), or (state.url) the PostgreSQL database shared by a cluster, opened read-only
// unless the command writes (`actions resolve`). The driver is loaded only on the PostgreSQL path.
import { existsSync } from 'node:fs';
import type { ClusterView } from '../../cluster/sql.js';
import { resolveStatePassword } from '../../config/secrets.js';
import { StateError } from '../../errors.js';
import { loadValidConfig } from '../../runtime.js';
import { openStateStore, type Store } from '../../store/index.js';
import type { AppConfig } from '../../domain.js';
import type { CommandContext } from '../context.js';

/**
 * What `status` and `actions` may do with the state file: read it, resolve an unknown step, and
 * (`send --cancel`) cancel a queued one-off plan.
 */
type CliStore = Pick<Store, 'walletStates' | 'listPlans' | 'stepAttempts' | 'getStep' | 'clockNow' | 'resolve' | 'planByManualId' | 'cancelPlan' | 'close'>;

export async function openStateForCli(ctx: CommandContext, opts: { write: boolean }): Promise<{ config: AppConfig; store: CliStore }> {
  const { config, store } = await openStateIfAny(ctx, opts);
  if (store === undefined) {
    const where = config.state.url === undefined ? `no state file at ${config.state.path}` : 'no autoclaim state in the database at state.url';
    throw new StateError('STATE_MISSING', `${where} yet: the daemon has not run with this config`);
  }
  return { config, store };
}

/**
 * For commands to which a state file not there yet is an answer, not an error (`status` on a fresh
 * install): the config, and the store only if the daemon has created one. Nothing is created here.
 */
export async function openStateIfAny(ctx: CommandContext, opts: { write: boolean }): Promise<{ config: AppConfig; store: CliStore | undefined }> {
  const config = loadValidConfig(ctx.configPath, ctx.io.env, ctx.io.cwd);
  if (config.state.url !== undefined) return { config, store: await openPostgresIfAny(ctx, config, opts) };
  if (!existsSync(config.state.path)) return { config, store: undefined };
  return { config, store: await openSqlite(ctx, config, opts) };
}

/**
 * The state file, opened read-only first as the shared database is (below): that open refuses an
 * older or newer schema instead of migrating it. A command that writes takes no lock, and the
 * daemon running beside it may be an older release after an upgrade: opened writable at once, the
 * file was migrated under it (a version-1 file re-keyed by address while it went on writing by
 * name). The daemon's own start migrates, under the state lock.
 */
async function openSqlite(ctx: CommandContext, config: AppConfig, opts: { write: boolean }): Promise<CliStore> {
  const open = (readonly: boolean) => openStateStore(config.state, { logger: ctx.logger, clock: ctx.io.clock, redactor: ctx.redactor, readonly });
  const store = await open(true);
  if (!opts.write) return store;
  await store.close();
  return open(false);
}

/**
 * The shared database, undefined while no daemon has created autoclaim's tables in it. Always
 * opened read-only first: that open refuses a missing, older or newer schema instead of migrating
 * it, so even `actions resolve` never creates or migrates the schema under running daemons; a
 * command that writes then opens it again writable. The writes are not fenced by a lease: they are
 * an operator's resolution of an unknown step, which no daemon makes, and a cancel, which locks
 * the plan's row as the daemon's `sending` commit does, so one of the two wins.
 */
async function openPostgresIfAny(ctx: CommandContext, config: AppConfig, opts: { write: boolean }): Promise<CliStore | undefined> {
  const password = statePassword(ctx, config);
  const open = (readonly: boolean) => openStateStore(config.state, { logger: ctx.logger, clock: ctx.io.clock, password, readonly, redactor: ctx.redactor });
  let store: CliStore;
  try {
    store = await open(true);
  } catch (err) {
    if (err instanceof StateError && err.code === 'STATE_MISSING') return undefined;
    throw err;
  }
  if (!opts.write) return store;
  await store.close();
  return open(false);
}

function statePassword(ctx: CommandContext, config: AppConfig): string | undefined {
  const password = resolveStatePassword(config, ctx.io.env, { credentialsDir: ctx.io.env.CREDENTIALS_DIRECTORY });
  ctx.redactor.add(password);
  return password;
}

/**
 * Who holds each wallet and which daemons are live, as the database sees it now (the view the
 * lease manager splits by), read in one read-only statement over a connection of its own that is
 * closed before this returns. Only for state.url; undefined while the schema is not there.
 */
export async function readClusterView(ctx: CommandContext, config: AppConfig): Promise<ClusterView | undefined> {
  const url = config.state.url;
  if (url === undefined) return undefined;
  const [{ openPool, redactUrl, toStateError }, { readCluster }] = await Promise.all([import('../../store/postgres/db.js'), import('../../cluster/sql.js')]);
  const pool = await openPool(url, { password: statePassword(ctx, config), readonly: true, application: 'autoclaim-status', queryTimeoutMs: config.state.queryTimeoutMs });
  try {
    return await readCluster(pool);
  } catch (err) {
    throw toStateError(err, 'reading the cluster', redactUrl(url));
  } finally {
    await pool.end().catch(() => undefined);
  }
}
