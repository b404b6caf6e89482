// `run` (the daemon) and `once` (one cycle, then exit).
import { Daemon } from '../../daemon.js';
import { createEvents, type AutoclaimEvents } from '../../events.js';
import { openRuntime, type Runtime } from '../../runtime.js';
import { failpointsFromEnv } from '../../executor/failpoints.js';
import { UsageError, type CommandContext } from '../context.js';
import type { AppConfig } from '../../domain.js';
import { VERSION } from '../version.js';
import { DaemonControl } from '../../service/control-daemon.js';
import type { Notifier } from '../../service/notify.js';
import { pauseReader } from '../../service/control.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import { openNotices } from './notices.js';

// How long a stop waits for the step in flight before closing the database anyway. A step cut off
// here stays `sending` and becomes `unknown` at the next start, which is safe, just not pretty.
const STOP_TIMEOUT_MS = 20_000;
// The whole stop after SIGTERM (the step in flight, the service parts, the leases handed back, the
// database closed): past this, or at a second SIGTERM/SIGINT, `run` returns whatever is still
// waiting (a database that black-holes its connections, say), so the process exits well inside
// systemd's TimeoutStopSec. What was not closed is recovered at the next start, as after a crash.
const STOP_BOUND_MS = STOP_TIMEOUT_MS + 15_000;
// How long systemd is told a start may go on past TimeoutStartSec while the SQLite state migrates.
// One message, sent before the migration: it holds the event loop, so nothing more can be sent
// until it ends. A start killed half-way rolls the step back, and every restart would begin it
// again until the start limit stops them; an hour covers a rebuild of a year's plans of a large
// fleet on a slow disk, and a migration stuck beyond it is still ended.
const MIGRATION_START_BOUND_MS = 60 * 60_000;

/**
 * A dry run on shared state would join the fleet like any daemon (a dry flag is no part of the config
 * the daemons compare): it would take its share of the wallets and claim none of them, unseen, for as
 * long as it ran. So it is refused before it joins.
 */
function refuseDryOnSharedState(config: AppConfig): void {
  if (config.state.url === undefined) return;
  throw new UsageError(
    '--dry-run is refused with shared state (state.url): a dry daemon would take its share of the fleet\'s wallets and claim none of them. Give the dry run a state of its own (state.path, no state.url).',
  );
}

/** `scheduled`: false for `once`, which polls every wallet one time and never reads the schedule. */
async function open(ctx: CommandContext, events: AutoclaimEvents, scheduled: boolean, dry: boolean, notifier?: Notifier): Promise<Runtime> {
  const { io, logger, redactor } = ctx;
  const admit = dry ? refuseDryOnSharedState : undefined;
  const beforeMigration =
    notifier === undefined
      ? undefined
      : async () => {
          notifier.extendTimeout(MIGRATION_START_BOUND_MS, 'migrating the state database');
          await notifier.close();
        };
  return openRuntime({ configPath: ctx.configPath, env: io.env, cwd: io.cwd, clock: io.clock, logger, redactor, lock: true, events, scheduled, configSetsLevel: ctx.configSetsLevel, admit, beforeMigration });
}

/** `signalled`: false for `once`, whose pid `pause` never learns: it reads the pause record at every ask of the gate. */
function makeDaemon(ctx: CommandContext, runtime: Runtime, dry: boolean, events: AutoclaimEvents, signalled: boolean): Daemon {
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
    events,
    ...(signalled ? {} : { pauseRecord: pauseReader(runtime.config.state.path) }),
  });
}

export async function onceCommand(ctx: CommandContext, opts: { dryRun?: boolean }): Promise<ExitCode> {
  // The process's one event channel: the client, the daemon and whoever listens share it.
  const events = createEvents({ logger: ctx.logger });
  const runtime = await open(ctx, events, false, opts.dryRun === true);
  // Its step outcomes are told as the daemon's are, and delivered before it exits (bounded).
  const notices = await openNotices(ctx, runtime, events);
  let control: DaemonControl | undefined;
  try {
    const daemon = makeDaemon(ctx, runtime, opts.dryRun === true, events, false);
    // The kill switch holds `once` as it holds `run`: `autoclaim pause` recorded beside the state
    // (or safety.paused) means polled, decided dry and reported, nothing signed. Read as `run`
    // reads it at start, logged as `run` logs it; `once` publishes no daemon file.
    control = new DaemonControl({ daemon, events, logger: ctx.logger, clock: ctx.io.clock, dry: opts.dryRun === true });
    control.start();
    const report = await daemon.once();
    // "All fine" means every wallet was read and every plan finished; a step merely deferred to a
    // retry (429, not sent) is not a failure, but the cycle did not finish its work either.
    const ok = report.polled === report.wallets && report.failed === 0 && report.unknown === 0 && report.pending === 0 && report.crashed === 0;
    const held = daemon.killSwitch(undefined)?.reason;
    ctx.logger.info(
      { event: 'once.done', ...report, dry_run: opts.dryRun === true, ...(held === undefined ? {} : { kill_switch: held }) },
      `cycle done: ${report.polled}/${report.wallets} polled, ${report.plans} plan(s), ${report.failed} failed, ${report.unknown} unknown, ${report.pending} waiting to retry${held === undefined ? '' : `; nothing signed: ${held}`}`,
    );
    return ok ? EXIT.OK : EXIT.FAILURE;
  } finally {
    control?.stop();
    try {
      await notices?.close();
    } finally {
      await runtime.close();
    }
  }
}

export async function runCommand(ctx: CommandContext, opts: { dryRun?: boolean }): Promise<ExitCode> {
  const { io, logger } = ctx;
  // The service parts (metrics, health server, sd_notify, webhook) are for `run` alone: `once` and
  // the other commands do not load them.
  const { Supervisor } = await import('../../service/supervisor.js');
  const { createNotifier } = await import('../../service/notify.js');
  // Before the runtime opens: a migration of the state extends the start with it.
  const notifier = createNotifier({ env: io.env, logger });
  const events = createEvents({ logger });
  // The handlers go in before anything starts: a signal's default action ends the process, and a
  // SIGHUP or SIGTERM sent while it starts (the runtime opening: config, keys, state, the sandbox;
  // then the first turn) must neither end it nor be lost. One asked for before the start finished
  // is acted on when it has: a reload or a poll once started, a stop before the first turn.
  let daemon: Daemon | undefined;
  let control: DaemonControl | undefined;
  let started = false;
  let reloadAsked = false;
  let pollAsked = false;
  let stopAskedEarly = false;
  let requestStop = (): void => {};
  const stopAsked = new Promise<void>((resolve) => (requestStop = resolve));
  const reload = () => (started ? void daemon?.reload() : (reloadAsked = true));
  // The pid is named before the start (below): a poll asked for meanwhile is done once started.
  const pollNow = () => (started ? control?.onPollSignal() : (pollAsked = true));
  // Before the control channel exists there is nothing to re-read: it reads the pause record as it starts.
  const pauseRecord = () => control?.onPauseSignal();
  const stop = () => {
    io.signals.off('SIGTERM', stop);
    io.signals.off('SIGINT', stop);
    io.signals.off('SIGHUP', reload);
    io.signals.off('SIGUSR1', pollNow);
    io.signals.off('SIGUSR2', pauseRecord);
    stopAskedEarly = !started;
    requestStop();
  };
  io.signals.on('SIGTERM', stop);
  io.signals.on('SIGINT', stop);
  io.signals.on('SIGHUP', reload);
  io.signals.on('SIGUSR1', pollNow);
  io.signals.on('SIGUSR2', pauseRecord);
  // The log lost (stdout's reader gone: a pipe's, journald's, a container runtime's): stop as at
  // SIGTERM, exit 1, rather than poll, claim and deposit with no line said (pino drops them all
  // after an EPIPE). A supervisor restarts on exit 1, and the next start has a stream of its own.
  let logLost = false;
  void ctx.logLost?.then((err) => {
    logLost = true;
    writeLine(io.stderr, `autoclaim: the log can no longer be written to stdout (${err.code ?? err.message}): stopping, exit 1, rather than act with no record said`);
    stop();
  });
  const stopCode = (): ExitCode => (logLost ? EXIT.FAILURE : EXIT.OK);
  let runtime: Runtime;
  try {
    runtime = await open(ctx, events, true, opts.dryRun === true, notifier);
  } catch (err) {
    stop(); // the handlers off: the start failed
    throw err;
  }
  // Once SIGTERM came, the stop below closes everything itself, under a bound.
  let stopping = false;
  try {
    const d = (daemon = makeDaemon(ctx, runtime, opts.dryRun === true, events, true));
    // Subscribed before the daemon starts, so the metrics hear the first poll; the reload's
    // sd_notify, metrics and webhook follow from the daemon's config:reloading / config:reloaded.
    const supervisor = new Supervisor({ env: io.env, clock: io.clock, logger, redactor: ctx.redactor, version: VERSION, events, runtime, daemon: d, notifier });
    // The CLI's channel to this daemon (pause, resume, poll; status's view of signing): before the
    // first turn, so a pause recorded before a restart holds from the first poll.
    const c = (control = new DaemonControl({ daemon: d, events, logger, clock: io.clock, dry: opts.dryRun === true }));
    c.start();
    try {
      if (stopAskedEarly) {
        // Stopped while the runtime opened: nothing was started, so nothing is drained.
        logger.info({ event: 'daemon.stop_requested' }, 'stopping before the first turn');
        return stopCode();
      }
      // The pid is named to the CLI now, with the handlers in place and before the first turn: named
      // only once started, an `autoclaim pause` during the start (its first turns signing) found no
      // daemon to tell, and this one, having read the record before it, signed on. publish() reads
      // the record again, for a pause written between that read and the file.
      c.publish();
      await d.start();
      await supervisor.start();
      started = true;
      if (reloadAsked) void d.reload();
      if (pollAsked) c.onPollSignal();
      await stopAsked;
      logger.info({ event: 'daemon.stop_requested' }, 'stopping: no new work; finishing the step in flight');
      c.stop();
      stopping = true;
      const stopped = (async () => {
        try {
          await d.stop(STOP_TIMEOUT_MS);
        } finally {
          try {
            await supervisor.stop();
          } finally {
            await runtime.close();
          }
        }
      })();
      if (await bounded(stopped, STOP_BOUND_MS, io.signals)) {
        await stopped;
      } else {
        logger.error(
          { event: 'daemon.stopping', drained: false, bound_ms: STOP_BOUND_MS },
          'the stop did not finish in time (the state database or a webhook not answering); exiting anyway: a step left in flight is recovered at the next start',
        );
      }
      return stopCode();
    } finally {
      if (!stopping) {
        stop(); // the handlers off: the start failed, or it was stopped before the first turn
        c.stop();
        await supervisor.stop();
      }
    }
  } finally {
    if (!stopping) await runtime.close();
  }
}

/** Whether `p` settled before `ms` passed and before a second SIGTERM or SIGINT; a rejection counts as settled. */
async function bounded(p: Promise<void>, ms: number, signals: CommandContext['io']['signals']): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let again: (() => void) | undefined;
  const cut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    again = () => resolve(false);
    signals.on('SIGTERM', again);
    signals.on('SIGINT', again);
  });
  try {
    return await Promise.race([p.then(() => true as const, () => true as const), cut]);
  } finally {
    clearTimeout(timer);
    if (again !== undefined) {
      signals.off('SIGTERM', again);
      signals.off('SIGINT', again);
    }
  }
}
