// status and actions read the state file while a daemon may be running: no lock, WAL readers.
import { existsSync } from 'node:fs';
import { StateError } from '../../errors.js';
import { loadValidConfig } from '../../runtime.js';
import { openStore, type Store } from '../../store/index.js';
import type { AppConfig } from '../../domain.js';
import type { CommandContext } from '../context.js';

/** What `status` and `actions` may do with the state file: read it, and resolve an unknown step. */
type CliStore = Pick<Store, 'walletStates' | 'listPlans' | 'stepAttempts' | 'resolve' | 'close'>;

export async function openStateForCli(ctx: CommandContext, opts: { write: boolean }): Promise<{ config: AppConfig; store: CliStore }> {
  const { config, store } = await openStateIfAny(ctx, opts);
  if (store === undefined) {
    throw new StateError('STATE_MISSING', `no state file at ${config.state.path} yet: the daemon has not run with this config`);
  }
  return { config, store };
}

/**
 * For commands to which a state file not there yet is an answer, not an error (`status` on a fresh
 * install): the config, and the store only if the daemon has created one. Nothing is created here.
 */
// eslint-disable-next-line @typescript-eslint/require-await -- async for the PostgreSQL adapter, which opens with a round trip
export async function openStateIfAny(ctx: CommandContext, opts: { write: boolean }): Promise<{ config: AppConfig; store: CliStore | undefined }> {
  const config = loadValidConfig(ctx.configPath, ctx.io.env, ctx.io.cwd);
  if (!existsSync(config.state.path)) return { config, store: undefined };
  return { config, store: openStore(config.state.path, { logger: ctx.logger, clock: ctx.io.clock, readonly: !opts.write }) };
}
