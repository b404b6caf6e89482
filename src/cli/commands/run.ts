// `run` (the daemon) and `once` (one cycle, then exit).
import { Daemon } from '../../daemon.js';
import { openRuntime, type Runtime } from '../../runtime.js';
import { failpointsFromEnv } from '../../worker/failpoints.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';

// How long a stop waits for the step in flight before closing the database anyway. A step cut off
// here stays `sending` and becomes `unknown` at the next start, which is safe, just not pretty.
const STOP_TIMEOUT_MS = 20_000;

async function open(ctx: CommandContext): Promise<Runtime> {
  const { io, logger, redactor } = ctx;
  return openRuntime({ configPath: ctx.configPath, env: io.env, cwd: io.cwd, clock: io.clock, logger, redactor, lock: true });
}

function makeDaemon(ctx: CommandContext, runtime: Runtime, dry: boolean): Daemon {
  const { io, logger, redactor } = ctx;
  return new Daemon({
    runtime,
    configPath: ctx.configPath,
    env: io.env,
    cwd: io.cwd,
    clock: io.clock,
    logger,
    redactor,
    dry,
    failpoint: failpointsFromEnv(io.env),
  });
}

export async function onceCommand(ctx: CommandContext, opts: { dryRun?: boolean }): Promise<ExitCode> {
  const runtime = await open(ctx);
  try {
    const daemon = makeDaemon(ctx, runtime, opts.dryRun === true);
    const report = await daemon.once();
    const ok = report.polled === report.wallets && report.failed === 0 && report.unknown === 0;
    ctx.logger.info({ event: 'once.done', ...report, dry_run: opts.dryRun === true }, `cycle done: ${report.polled}/${report.wallets} polled, ${report.plans} plan(s), ${report.failed} failed, ${report.unknown} unknown`);
    return ok ? EXIT.OK : EXIT.FAILURE;
  } finally {
    await runtime.close();
  }
}

export async function runCommand(ctx: CommandContext, opts: { dryRun?: boolean }): Promise<ExitCode> {
  const { io, logger } = ctx;
  const runtime = await open(ctx);
  const daemon = makeDaemon(ctx, runtime, opts.dryRun === true);
  try {
    daemon.start();
    await new Promise<void>((resolve) => {
      const stop = () => {
        io.signals.off('SIGTERM', stop);
        io.signals.off('SIGINT', stop);
        io.signals.off('SIGHUP', reload);
        resolve();
      };
      const reload = () => {
        daemon.reload();
      };
      io.signals.on('SIGTERM', stop);
      io.signals.on('SIGINT', stop);
      io.signals.on('SIGHUP', reload);
    });
    logger.info({ event: 'daemon.stop_requested' }, 'stopping: no new work; finishing the step in flight');
    await daemon.stop(STOP_TIMEOUT_MS);
    return EXIT.OK;
  } finally {
    await runtime.close();
  }
}
