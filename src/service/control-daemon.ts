// The daemon's side of service/control.ts: it writes what `status` shows (its pid, what holds
// signing and why), reads the pause record at start and at SIGUSR2, and polls at SIGUSR1.
import type { Daemon } from '../daemon.js';
import type { Clock } from '../domain.js';
import type { AutoclaimEvents } from '../events.js';
import type { Logger } from '../log/logger.js';
import type { SigningPause } from '../executor/deps.js';
import {
  controlPaths,
  pidNamespace,
  readPause,
  removeDaemonInfo,
  takePollRequest,
  writeDaemonInfo,
  type ControlPaths,
  type SigningHold,
} from './control.js';
import os from 'node:os';

interface ControlOptions {
  daemon: Daemon;
  events: AutoclaimEvents;
  logger: Logger;
  clock: Clock;
  dry: boolean;
}

export class DaemonControl {
  private readonly paths: ControlPaths;
  private readonly startedAt: string;
  private readonly unsubscribe: Array<() => void> = [];
  /** The kill switch's reason when last reported; undefined when off. */
  private lastKill: string | undefined;
  private published = false;

  constructor(private readonly opts: ControlOptions) {
    this.paths = controlPaths(opts.daemon.currentConfig.state.path);
    this.startedAt = new Date(opts.clock.now()).toISOString();
  }

  /** Before the daemon's first turn: a pause recorded before a restart holds from the start. */
  start(): void {
    this.readPause();
    const write = () => this.writeInfo();
    for (const name of ['signing:paused', 'signing:resumed', 'cycle:done'] as const) this.unsubscribe.push(this.opts.events.on(name, write));
    // A reload may turn safety.paused (or a wallet's enabled) on or off.
    this.unsubscribe.push(this.opts.events.on('config:reloaded', () => this.reportKillSwitch()));
  }

  /** SIGUSR2: `autoclaim pause` or `resume` wrote the record. */
  onPauseSignal(): void {
    this.readPause();
  }

  /** SIGUSR1: `autoclaim poll` wrote a request (or a bare signal: every wallet). */
  onPollSignal(): void {
    const target = takePollRequest(this.paths);
    const { polling, unknown } = this.opts.daemon.pollNow(target);
    this.opts.logger.info(
      { event: 'poll.requested', target, polling: polling.length, unknown },
      `poll requested: ${polling.length} wallet(s) now${unknown.length > 0 ? `; not configured here: ${unknown.join(', ')}` : ''}`,
    );
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    if (!this.published) return;
    this.published = false;
    try {
      removeDaemonInfo(this.paths);
    } catch {
      // Read as stale anyway: its pid is gone.
    }
  }

  private readPause(): void {
    this.opts.daemon.setOperatorPause(readPause(this.paths));
    this.reportKillSwitch();
  }

  /** Logs the kill switch when it turns on, changes or turns off (a command, or a reload of safety.paused); rewrites the file. */
  private reportKillSwitch(): void {
    const { daemon, logger } = this.opts;
    const now = daemon.killSwitch(undefined);
    const was = this.lastKill;
    this.lastKill = now?.reason;
    if (now !== undefined && now.reason !== was) {
      logger.warn(
        { event: 'signing.kill_switch_on', reason: now.reason, since: new Date(now.since).toISOString() },
        `kill switch on: ${now.reason}; polling and deciding (dry) go on, nothing is signed (to lift: ${now.fix ?? ''})`,
      );
    } else if (now === undefined && was !== undefined) {
      logger.warn({ event: 'signing.kill_switch_off', was }, 'kill switch off: signing resumes; every wallet is polled now');
      daemon.pollNow('all');
    }
    this.writeInfo();
  }

  /**
   * Once the signal handlers are in place: the file names this pid to the CLI, and a SIGUSR2 sent
   * to a process without a handler would end it. The pause record is read again after the file is
   * written: a pause recorded before it found no pid to signal, one recorded after signals it.
   */
  publish(): void {
    this.published = true;
    this.writeInfo();
    this.readPause();
  }

  /** What `status` shows of this daemon; a write that fails is logged and the daemon goes on. */
  writeInfo(): void {
    if (!this.published) return;
    const { daemon, clock, dry } = this.opts;
    const iso = (ms: number) => new Date(ms).toISOString();
    const hold = (wallet: string, p: SigningPause): SigningHold => ({ wallet, source: p.source ?? 'refusal', since: iso(p.since), reason: p.reason, fix: p.fix, ...p.refusal });
    const signing: SigningHold[] = [];
    const pauses = daemon.signingPauses();
    if (pauses.all !== undefined) signing.push(hold('all', pauses.all));
    const config = daemon.currentConfig;
    for (const [address, p] of pauses.wallets) signing.push(hold(config.wallets.find((w) => w.address === address)?.name ?? address, p));
    const all = daemon.killSwitch(undefined);
    if (all !== undefined) signing.push(hold('all', all));
    else for (const w of config.wallets) if (w.enabled === false) {
      const p = daemon.killSwitch(w.address);
      if (p !== undefined) signing.push(hold(w.name, p));
    }
    try {
      writeDaemonInfo(this.paths, { pid: process.pid, host: os.hostname(), pid_ns: pidNamespace(), started_at: this.startedAt, updated_at: iso(clock.now()), dry_run: dry, signing });
    } catch (err) {
      this.opts.logger.warn({ event: 'control.write_failed', err }, `could not write ${this.paths.daemon}: status will not show this daemon's signing state`);
    }
  }
}
