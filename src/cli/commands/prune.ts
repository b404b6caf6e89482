// `prune --older-than DURATION [--dry-run]`: deletes the state file's settled history older than the
// cutoff, never what the exactly-once guards read (store/sqlite/prune.ts says which rows and why).
// It takes the daemon's own lock, so it never runs beside a daemon on the same file (exit 75 while
// one runs): the send mark, the newest attempt and the rules' history are then what they are for
// the daemon that starts next. Shared state (state.url) is refused: there the daemons of a fleet
// write under leases beside each other, and nothing here takes them all; operations.md says how.
import { existsSync } from 'node:fs';
import { parseDuration } from '../../config/durations.js';
import { formatDuration } from '../../rules/format.js';
import { historyLookbackMs } from '../../rules/limits.js';
import { loadValidConfig } from '../../runtime.js';
import { acquireLock, openStore } from '../../store/index.js';
import { UsageError, type CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';

export interface PruneCliOptions {
  olderThan: string;
  dryRun?: boolean;
}

export function pruneCommand(ctx: CommandContext, opts: PruneCliOptions): ExitCode {
  const olderThanMs = parseDuration(opts.olderThan);
  if (olderThanMs === undefined) throw new UsageError(`--older-than ${opts.olderThan} is not a duration (e.g. 180d, at most 366d)`);
  const config = loadValidConfig(ctx.configPath, ctx.io.env, ctx.io.cwd, ctx.logger);
  const out = (line: string) => writeLine(ctx.io.stdout, line);
  if (config.state.url !== undefined) {
    throw new UsageError(
      'prune works on a state file (state.path); this config shares state.url with a fleet, whose daemons write beside each other under leases and which one command cannot stop: nothing was deleted (docs/operations.md, "Pruning the state")',
    );
  }
  // The rules judge a wallet's plans over this window (the rolling day, or the longest cooldown):
  // a prune inside it would let a rule fire again before its cooldown or day cap allows.
  const lookbackMs = historyLookbackMs(config.rules);
  if (olderThanMs < lookbackMs) {
    throw new UsageError(`--older-than ${opts.olderThan} is inside the rules' history (${formatDuration(lookbackMs)}: the day caps, or the longest cooldown); give at least that`);
  }
  if (!existsSync(config.state.path)) {
    out(`no state file at ${config.state.path}: nothing to prune`);
    return EXIT.OK;
  }
  // The daemon's lock (exit 75 while a daemon runs on the file), and the store opened under it as
  // the daemon opens it: a state file older than its send mark is refused here too.
  const lock = acquireLock(config.state.path);
  try {
    const store = openStore(config.state.path, { logger: ctx.logger, clock: ctx.io.clock, redactor: ctx.redactor, lock });
    try {
      const cutoffMs = ctx.io.clock.now() - olderThanMs;
      const c = store.prune({ cutoffMs, dryRun: opts.dryRun === true });
      const verb = opts.dryRun === true ? 'would delete' : 'deleted';
      out(`${verb} ${c.plans} plans (${c.steps} steps, ${c.attempts} attempts) and ${c.epochsSeen} epochs seen, recorded before ${new Date(cutoffMs).toISOString()}`);
      out('kept: open, blocked and unknown plans, the current and previous epoch of each wallet, each wallet\'s newest plan of each rule, every one-off send, the newest attempt');
      if (opts.dryRun !== true && c.plans + c.epochsSeen > 0) out('the file keeps its size: later writes reuse the freed pages (VACUUM, with autoclaim stopped, returns them to the disk)');
      return EXIT.OK;
    } finally {
      store.close();
    }
  } finally {
    lock.release();
  }
}
