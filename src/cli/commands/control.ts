// `pause`, `resume` and `poll`: requests to a running daemon through the files beside its state
// (service/control.ts) and a signal to the pid it wrote. The pause record is written whether a
// daemon runs or not: a daemon started later starts paused. Which wins: either the config's
// `safety.paused: true` or this command's pause holds signing; `resume` lifts only the command's,
// and says so when the config's still holds.
import { existsSync } from 'node:fs';
import os from 'node:os';
import { loadValidConfig } from '../../runtime.js';
import { controlPaths, processAlive, readDaemonInfo, readPause, samePidNamespace, whoAmI, writePause, writePollRequest, type ControlPaths, type DaemonInfo, type PollTarget } from '../../service/control.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import { UsageError } from '../usage-error.js';

type Signaller = (pid: number, signal: 'SIGUSR1' | 'SIGUSR2') => void;
const defaultSignal: Signaller = (pid, signal) => process.kill(pid, signal);

/**
 * Where a daemon's file was written when not where this command runs: another host (another
 * container on the same volume, say), or another pid namespace under this host's name (a container
 * with host networking, or a hostname set alike), whose pid numbers another process here, or none,
 * or this very command. Such a daemon cannot be signalled from here; its file is removed at a clean
 * stop, so it may well be running.
 */
function elsewhere(info: DaemonInfo): string | undefined {
  if (info.host !== os.hostname()) return `on host ${info.host}`;
  if (!samePidNamespace(info)) return `in another pid namespace (${info.pid_ns ?? '?'}) under this host's name`;
  return undefined;
}

/**
 * Signals the daemon when one runs here; what to tell the operator either way. `missed`: a daemon
 * runs but was not told, so it goes on as it was (it reads the pause record at start and SIGUSR2).
 */
function tell(paths: ControlPaths, signal: 'SIGUSR1' | 'SIGUSR2', kill: Signaller): { sent: boolean; missed: boolean; note: string } {
  const info = readDaemonInfo(paths);
  const where = info === undefined ? undefined : elsewhere(info);
  if (info !== undefined && where !== undefined) {
    return { sent: false, missed: true, note: `a daemon ${where} (pid ${info.pid}, last seen ${info.updated_at}) may be running on this state; it cannot be signalled from here` };
  }
  // This command's own pid is no daemon's: the file outlived its daemon, in a namespace whose number
  // was given out again (they are, once freed) and numbers its processes alike (a container's).
  const gone = info === undefined || info.pid === process.pid || (!info.alive && !processAlive(info.pid));
  if (gone) return { sent: false, missed: false, note: 'no daemon is running on this state here' };
  // Alive but not the file's owner's: not signalled (the file may name any pid), yet it may be the
  // daemon: one run as root on a directory another user owns hands its file to that owner.
  if (!info.alive) return { sent: false, missed: true, note: `pid ${info.pid} runs here as another user than ${paths.daemon}'s owner; not signalled (the daemon run as root, or a process that took its pid after a crash)` };
  try {
    kill(info.pid, signal);
    return { sent: true, missed: false, note: `told the daemon (pid ${info.pid})` };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EPERM' ? `not allowed to signal pid ${info.pid} (run as its user or root)` : `could not signal pid ${info.pid}: ${code ?? String(err)}`;
    return { sent: false, missed: true, note: why };
  }
}

/** Said, on stderr, when the running daemon was not told: the command's record is not in force there yet. */
function notTold(ctx: CommandContext, what: string): ExitCode {
  writeLine(ctx.io.stderr, `the running daemon was NOT told: ${what} until it is (\`kill -USR2 PID\` as its user or root, on its host or in its container) or restarts`);
  return EXIT.FAILURE;
}

/**
 * Said, on stderr, of the daemons `pause` and `resume` may not have reached (exit unchanged: the
 * record is written). Without state.path the state is $STATE_DIRECTORY's under systemd but ./var
 * under the directory this command runs in: a record from a shell lands beside no state, and the
 * service goes on as it was (pausing before a first start is allowed, so it is not an error). With
 * shared state the record is this host's file: every other daemon on the database goes on as it was.
 */
function notHere(ctx: CommandContext, config: ReturnType<typeof loadValidConfig>, found: boolean, verb: 'pause' | 'resume', others: string): void {
  if (!found && config.state.url === undefined && !existsSync(config.state.path)) {
    writeLine(
      ctx.io.stderr,
      `no state file at ${config.state.path}: if autoclaim runs elsewhere (a service's state is $STATE_DIRECTORY/autoclaim.db when the config sets no state.path), it was NOT ${verb}d; set state.path in the config to the daemon's state and ${verb} again`,
    );
  }
  if (config.state.url !== undefined) {
    writeLine(ctx.io.stderr, `shared state (state.url): only this host's daemon is ${verb}d; the daemons on other hosts ${others}: ${verb} each host`);
  }
}

export function pauseCommand(ctx: CommandContext, opts: { reason?: string }, kill: Signaller = defaultSignal): ExitCode {
  const config = loadValidConfig(ctx.configPath, ctx.io.env, ctx.io.cwd);
  const paths = controlPaths(config.state.path);
  const who = whoAmI(ctx.io.env);
  writePause(paths, { paused: true, ...who, at: ctx.io.clock.now(), reason: opts.reason });
  const { sent, missed, note } = tell(paths, 'SIGUSR2', kill);
  writeLine(ctx.io.stdout, `signing paused by ${who.user}@${who.host} (recorded in ${paths.pause}); ${note}${sent ? '' : ': a daemon started on this state starts paused'}. Polling and deciding (dry) go on. \`autoclaim resume\` lifts it.`);
  notHere(ctx, config, sent || missed, 'pause', 'go on signing the wallets they hold');
  // An operator pulling the kill switch must not read "paused" while the daemon signs on.
  return missed ? notTold(ctx, 'it goes on signing') : EXIT.OK;
}

export function resumeCommand(ctx: CommandContext, kill: Signaller = defaultSignal): ExitCode {
  const config = loadValidConfig(ctx.configPath, ctx.io.env, ctx.io.cwd);
  const paths = controlPaths(config.state.path);
  const who = whoAmI(ctx.io.env);
  const was = readPause(paths);
  writePause(paths, { paused: false, ...who, at: ctx.io.clock.now() });
  const { sent, missed, note } = tell(paths, 'SIGUSR2', kill);
  writeLine(ctx.io.stdout, `${was?.paused === true ? `pause of ${was.user}@${was.host} lifted` : 'no pause by command was in force'} by ${who.user}@${who.host}; ${note}.`);
  notHere(ctx, config, sent || missed, 'resume', 'stay paused');
  if (missed) return notTold(ctx, 'it stays as it was');
  if (config.safety.paused === true) {
    writeLine(ctx.io.stdout, 'signing stays paused: safety.paused is true in the config, which only an edit and a reload (SIGHUP) lift.');
    return EXIT.FAILURE;
  }
  return EXIT.OK;
}

export function pollCommand(ctx: CommandContext, opts: { wallet?: string[]; paused?: boolean }, kill: Signaller = defaultSignal): ExitCode {
  const config = loadValidConfig(ctx.configPath, ctx.io.env, ctx.io.cwd);
  const names = opts.wallet ?? [];
  if (names.length > 0 && opts.paused === true) throw new UsageError('poll: --wallet and --paused do not go together');
  const unknown = names.filter((n) => !config.wallets.some((w) => w.name === n));
  if (unknown.length > 0) throw new UsageError(`poll: no wallet named ${unknown.join(', ')} in the config`);
  const target: PollTarget = names.length > 0 ? names : opts.paused === true ? 'paused' : 'all';
  const paths = controlPaths(config.state.path);
  writePollRequest(paths, target, { ...whoAmI(ctx.io.env), at: ctx.io.clock.now() });
  const { sent, note } = tell(paths, 'SIGUSR1', kill);
  const what = Array.isArray(target) ? target.join(', ') : target === 'paused' ? 'the paused wallets' : 'every wallet';
  writeLine(sent ? ctx.io.stdout : ctx.io.stderr, sent ? `asked the daemon to poll ${what} now; ${note}` : `not polled: ${note} (\`autoclaim once\` polls without a daemon)`);
  return sent ? EXIT.OK : EXIT.FAILURE;
}
