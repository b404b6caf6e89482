// status and actions read the state file while a daemon may be running: no lock, WAL readers.
import { existsSync } from 'node:fs';
import { StateError } from '../../errors.js';
import { loadValidConfig } from '../../runtime.js';
import { openStore, type Store } from '../../store/index.js';
import type { AppConfig } from '../../domain.js';
import type { CommandContext } from '../context.js';

export function openStateForCli(ctx: CommandContext, opts: { write: boolean }): { config: AppConfig; store: Store } {
  const config = loadValidConfig(ctx.configPath, ctx.io.env, ctx.io.cwd);
  if (!existsSync(config.state.path)) {
    throw new StateError('STATE_MISSING', `no state file at ${config.state.path} yet: the daemon has not run with this config`);
  }
  const store = openStore(config.state.path, { logger: ctx.logger, clock: ctx.io.clock, readonly: !opts.write });
  return { config, store };
}
