// How the CLI talks to a running daemon: small JSON files beside the state file, and a signal to
// the pid the daemon wrote. No socket and no port to secure: whoever may write the state
// directory and signal the daemon's user may already stop it.
//
// - `<state>.daemon.json`: written by `run` at start and whenever signing's state changes, removed
//   at a clean stop: its pid and host, and what holds signing (the server's refusals with their
//   words, the kill switch). `status` reads it; `pause`, `resume` and `poll` find the pid in it.
// - `<state>.pause.json`: `autoclaim pause` / `resume`, with who (user, host) and when. It stays
//   after a resume (as the record of it) and survives restarts: a paused daemon starts paused.
//   SIGUSR2 asks the daemon to read it again.
// - `<state>.poll.json`: `autoclaim poll --wallet NAME` asks for a poll now; SIGUSR1 asks the daemon
//   to read and remove it. A SIGUSR1 with no request polls every wallet.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { OperatorPause } from '../executor/kill-switch.js';
import { writeFileAtomic } from '../store/sqlite/files.js';
import type { ServerRefusal } from '../events.js';

export interface ControlPaths {
  daemon: string;
  pause: string;
  poll: string;
}

/** The control files of the state file at `statePath` (config.state.path, as `run` and the CLI both resolve it). */
export function controlPaths(statePath: string): ControlPaths {
  return { daemon: `${statePath}.daemon.json`, pause: `${statePath}.pause.json`, poll: `${statePath}.poll.json` };
}

/** One hold on signing as `status` shows it. */
export interface SigningHold extends ServerRefusal {
  /** `all` or a wallet's name. */
  wallet: string;
  source: 'refusal' | 'clock' | 'schema' | 'kill_switch';
  since: string;
  reason: string;
  fix?: string | undefined;
}

export interface DaemonInfo {
  pid: number;
  host: string;
  /**
   * The pid namespace the pid is a number of (`/proc/self/ns/pid`; absent where there is none, and
   * in files written before it was recorded). Containers that share the host's name (host
   * networking, a hostname set alike) each number their own processes: the pid is not this one's.
   */
  pid_ns?: string | undefined;
  started_at: string;
  updated_at: string;
  dry_run: boolean;
  /** Every hold on signing now: refusals (the server's words), the clock, the kill switch. */
  signing: SigningHold[];
}

// Written with a temporary file and a rename, so a reader never sees half of one. The state's
// directory is made as the state file's own is (0700) when it is not there yet: `autoclaim pause`
// before the first start is a pause a daemon started later must find.
// `sudo autoclaim pause` writes into a directory the daemon's user owns, so root hands the record
// to that owner (a root-owned 0600 pause is unreadable to the daemon, which counts it as paused:
// the resume after it would never lift it); writeFileAtomic makes its temporary name afresh, so a
// link that user left there does not make root write through it.
function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, { toDirOwner: true });
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { unreadable: err instanceof Error ? err.message : String(err) };
  }
}

export function writeDaemonInfo(paths: ControlPaths, info: DaemonInfo): void {
  writeJson(paths.daemon, info);
}

export function removeDaemonInfo(paths: ControlPaths): void {
  fs.rmSync(paths.daemon, { force: true });
}

/**
 * The running daemon's file, when there is one and its process is alive on this host (`alive`).
 * A pid that is not a process of the file's owner is no daemon of this state: the daemon writes
 * the file, so a compromised one could name any pid, and `poll`, `pause` and `resume` run as root
 * would signal it (the signer's, say: SIGUSR2 ends a process that does not listen for it).
 */
export function readDaemonInfo(paths: ControlPaths, isAlive: (pid: number) => boolean = processAlive): (DaemonInfo & { alive: boolean }) | undefined {
  const raw = readJson(paths.daemon) as Partial<DaemonInfo> | undefined;
  if (raw === undefined || typeof raw.pid !== 'number' || typeof raw.host !== 'string') return undefined;
  const info: DaemonInfo = {
    pid: raw.pid,
    host: raw.host,
    started_at: String(raw.started_at ?? ''),
    updated_at: String(raw.updated_at ?? ''),
    dry_run: raw.dry_run === true,
    signing: Array.isArray(raw.signing) ? raw.signing : [],
    pid_ns: typeof raw.pid_ns === 'string' ? raw.pid_ns : undefined,
  };
  return { ...info, alive: info.host === os.hostname() && samePidNamespace(info) && isAlive(info.pid) && sameOwner(paths.daemon, info.pid) };
}

/** This process's pid namespace, as DaemonInfo.pid_ns records it; undefined where /proc does not say (not Linux). */
export function pidNamespace(): string | undefined {
  try {
    return fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/** Whether the file's pid numbers a process of this command's namespace; true when the file does not say (an older daemon). */
export function samePidNamespace(info: Pick<DaemonInfo, 'pid_ns'>): boolean {
  return info.pid_ns === undefined || info.pid_ns === pidNamespace();
}

/** Whether process `pid` runs as the user who owns `file`; true where /proc does not say (not Linux). */
function sameOwner(file: string, pid: number): boolean {
  if (!fs.existsSync('/proc/self')) return true;
  try {
    return fs.statSync(`/proc/${pid}`).uid === fs.statSync(file).uid;
  } catch {
    return false;
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user (the service's); signalling it will say more.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The pause record. A file that cannot be read or parsed counts as paused: a kill switch that
 * someone set must not be lifted by a typo or a half-written file.
 */
export function readPause(paths: ControlPaths): OperatorPause | undefined {
  const raw = readJson(paths.pause) as Record<string, unknown> | undefined;
  if (raw === undefined) return undefined;
  const at = typeof raw['at'] === 'string' ? Date.parse(raw['at']) : Number.NaN;
  if (typeof raw['paused'] !== 'boolean' || Number.isNaN(at)) {
    return { paused: true, user: '?', host: '?', at: 0, reason: `${paths.pause} is unreadable (${typeof raw['unreadable'] === 'string' ? raw['unreadable'] : 'not a pause record'}); remove it or run autoclaim resume` };
  }
  const reason = typeof raw['reason'] === 'string' ? raw['reason'] : undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v : '?');
  return { paused: raw['paused'], user: text(raw['user']), host: text(raw['host']), at, ...(reason === undefined ? {} : { reason }) };
}

/**
 * The pause record beside the state at `statePath`, read afresh at every call: for `once` and
 * `send`, whose pids `pause` never learns, so they ask it before each signature.
 */
export function pauseReader(statePath: string): () => OperatorPause | undefined {
  const paths = controlPaths(statePath);
  return () => readPause(paths);
}

export function writePause(paths: ControlPaths, p: OperatorPause): void {
  writeJson(paths.pause, { paused: p.paused, user: p.user, host: p.host, at: new Date(p.at).toISOString(), ...(p.reason === undefined ? {} : { reason: p.reason }) });
}

/** `all`, `paused` (the wallets signing is paused for), or wallet names. */
export type PollTarget = 'all' | 'paused' | string[];

export function writePollRequest(paths: ControlPaths, target: PollTarget, by: { user: string; host: string; at: number }): void {
  writeJson(paths.poll, { wallets: target, user: by.user, host: by.host, at: new Date(by.at).toISOString() });
}

/** Reads and removes the poll request; `all` when there is none (a bare SIGUSR1). */
export function takePollRequest(paths: ControlPaths): PollTarget {
  const raw = readJson(paths.poll) as Record<string, unknown> | undefined;
  fs.rmSync(paths.poll, { force: true });
  const w = raw?.['wallets'];
  if (w === 'paused') return 'paused';
  if (Array.isArray(w) && w.every((n) => typeof n === 'string')) return w;
  return 'all';
}

/** Who runs this command, for the records of pause, resume and poll. */
export function whoAmI(env: NodeJS.ProcessEnv): { user: string; host: string } {
  let user = env['SUDO_USER'] ?? env['USER'] ?? env['LOGNAME'];
  if (user === undefined || user === '') {
    try {
      user = os.userInfo().username;
    } catch {
      user = `uid ${process.getuid?.() ?? '?'}`;
    }
  }
  return { user, host: os.hostname() };
}
