// sd_notify(3) for Type=notify units: READY=1 once the daemon can work, WATCHDOG=1 from the event
// loop, STOPPING=1 on the way out. Node has no unix datagram sockets, so messages go through the
// optional `unix-dgram` addon (sent from our own pid, which NotifyAccess=main requires). Without
// the addon, or for an abstract socket name (which the addon cannot address), they go through
// `systemd-notify`: that works for any receiver but is sent from a child pid, so systemd accepts it
// only with NotifyAccess=all. Outside systemd (no NOTIFY_SOCKET) every call is a silent no-op.
import { execFile } from 'node:child_process';
import type { Logger } from '../log/logger.js';

export interface Notifier {
  /** True when NOTIFY_SOCKET names a socket we can talk to. */
  readonly enabled: boolean;
  /** Start-up (or a reload) is complete. */
  ready(status?: string): void;
  /** A reload has begun; call ready() when it is done. */
  reloading(): void;
  stopping(status?: string): void;
  /**
   * EXTEND_TIMEOUT_USEC: the start (or stop) in progress may take `ms` more before systemd counts it
   * as hung; past TimeoutStartSec, another message must come within that time. Await close() before
   * blocking the event loop, or it is sent only once the loop runs again.
   */
  extendTimeout(ms: number, status?: string): void;
  status(text: string): void;
  /** One keep-alive ping (WATCHDOG=1). */
  watchdog(): void;
  /** How often to ping: half of WATCHDOG_USEC, when the watchdog is meant for this process. */
  watchdogIntervalMs(): number | undefined;
  /**
   * Pings the watchdog every watchdogIntervalMs() from a timer on the event loop, so a blocked loop
   * stops the pings and systemd restarts us. `healthy` lets the caller withhold pings (e.g. when the
   * scheduler has stalled). Returns a stop function; a no-op when there is no watchdog.
   */
  startWatchdog(healthy?: () => boolean): () => void;
  /** Waits until queued messages are handed to the socket. Never rejects. */
  close(): Promise<void>;
}

type NotifyTransport = 'auto' | 'addon' | 'systemd-notify';

interface NotifierOptions {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Our pid, compared with WATCHDOG_PID; default process.pid. */
  pid?: number;
  /** Default 'auto': the addon when it loads and the socket is a path, else systemd-notify. */
  transport?: NotifyTransport;
  /** Default: `systemd-notify` from PATH. */
  systemdNotifyPath?: string;
}

type Send = (message: string) => Promise<void>;

const EXEC_TIMEOUT_MS = 10_000;

export function createNotifier(opts: NotifierOptions): Notifier {
  const raw = opts.env['NOTIFY_SOCKET'];
  const pid = opts.pid ?? process.pid;
  const log = opts.logger;
  const target = raw === undefined || raw === '' ? undefined : parseSocket(raw);
  if (raw !== undefined && raw !== '' && target === undefined) {
    log.debug({ event: 'notify.unsupported', socket: raw }, 'NOTIFY_SOCKET is neither a path nor an abstract name; not notifying');
  }

  let sender: Promise<Send | undefined> | undefined;
  let queue: Promise<void> = Promise.resolve();
  let warned = false;

  const getSender = (): Promise<Send | undefined> => {
    sender ??= target === undefined ? Promise.resolve(undefined) : chooseSender(target, opts);
    return sender;
  };

  const send = (lines: string[]): void => {
    if (target === undefined) return;
    const message = lines.join('\n');
    queue = queue.then(async () => {
      try {
        const s = await getSender();
        await s?.(message);
      } catch (err) {
        // Once at warn: under Type=notify a lost READY=1 ends in a start timeout, and this line is the clue.
        const level = warned ? 'debug' : 'warn';
        warned = true;
        log[level]({ event: 'notify.failed', err }, `sd_notify to ${target.display} failed`);
      }
    });
  };

  const watchdogIntervalMs = (): number | undefined => {
    if (target === undefined) return undefined;
    const usec = parsePositiveInt(opts.env['WATCHDOG_USEC']);
    if (usec === undefined) return undefined;
    const forPid = opts.env['WATCHDOG_PID'];
    if (forPid !== undefined && forPid !== '' && parsePositiveInt(forPid) !== pid) return undefined;
    return Math.max(1, Math.floor(usec / 2000));
  };

  return {
    enabled: target !== undefined,
    ready: (status) => send(status === undefined ? ['READY=1'] : ['READY=1', statusLine(status)]),
    reloading: () => send(['RELOADING=1', `MONOTONIC_USEC=${process.hrtime.bigint() / 1000n}`]),
    stopping: (status) => send(status === undefined ? ['STOPPING=1'] : ['STOPPING=1', statusLine(status)]),
    extendTimeout: (ms, status) => {
      const line = `EXTEND_TIMEOUT_USEC=${Math.max(1, Math.trunc(ms)) * 1000}`;
      send(status === undefined ? [line] : [line, statusLine(status)]);
    },
    status: (text) => send([statusLine(text)]),
    watchdog: () => send(['WATCHDOG=1']),
    watchdogIntervalMs,
    startWatchdog(healthy) {
      const every = watchdogIntervalMs();
      if (every === undefined) return () => undefined;
      const timer = setInterval(() => {
        if (healthy === undefined || healthy()) send(['WATCHDOG=1']);
      }, every);
      // The ping must never be what keeps the process alive.
      timer.unref();
      return () => clearInterval(timer);
    },
    close: () => queue,
  };
}

interface Target {
  /** Path, or "\0name" for an abstract socket. */
  address: string;
  abstract: boolean;
  /** As NOTIFY_SOCKET spelled it, for messages. */
  display: string;
}

function parseSocket(raw: string): Target | undefined {
  if (raw.startsWith('/')) return { address: raw, abstract: false, display: raw };
  if (raw.startsWith('@') && raw.length > 1) return { address: `\0${raw.slice(1)}`, abstract: true, display: raw };
  return undefined; // vsock: and friends
}

async function chooseSender(target: Target, opts: NotifierOptions): Promise<Send | undefined> {
  const mode = opts.transport ?? 'auto';
  const exec = (): Send => execSender(opts.systemdNotifyPath ?? 'systemd-notify', target.display, opts.env['PATH']);
  if (mode === 'systemd-notify') return exec();
  if (target.abstract) {
    // unix-dgram copies the path with strncpy, so a leading NUL (an abstract name) cannot be addressed.
    if (mode === 'addon') return undefined;
    opts.logger.debug({ event: 'notify.transport', transport: 'systemd-notify' }, 'abstract NOTIFY_SOCKET: notifying through systemd-notify');
    return exec();
  }
  try {
    const addon = await import('unix-dgram');
    return addonSender(addon.createSocket, target.address);
  } catch (err) {
    if (mode === 'addon') throw err;
    opts.logger.debug(
      { event: 'notify.transport', transport: 'systemd-notify', err },
      'unix-dgram addon unavailable: notifying through systemd-notify, which systemd accepts only with NotifyAccess=all',
    );
    return exec();
  }
}

type CreateSocket = typeof import('unix-dgram').createSocket;

function addonSender(createSocket: CreateSocket, path: string): Send {
  return (message) =>
    new Promise<void>((resolve, reject) => {
      // One socket per message: an open addon socket holds the event loop, and a datagram a few
      // times a minute does not need a long-lived one.
      const socket = createSocket('unix_dgram');
      const buf = Buffer.from(message, 'utf8');
      try {
        socket.send(buf, 0, buf.length, path, (err) => (err === undefined ? resolve() : reject(err)));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      } finally {
        socket.close();
      }
    });
}

function execSender(binary: string, socket: string, path: string | undefined): Send {
  return (message) =>
    new Promise<void>((resolve, reject) => {
      execFile(
        binary,
        message.split('\n'),
        { env: path === undefined ? { NOTIFY_SOCKET: socket } : { NOTIFY_SOCKET: socket, PATH: path }, timeout: EXEC_TIMEOUT_MS, windowsHide: true },
        (err) => (err === null ? resolve() : reject(new Error(`${binary}: ${err.message}`, { cause: err }))),
      );
    });
}

function statusLine(text: string): string {
  // One datagram is newline-separated assignments: a newline in the text would start a new one.
  return `STATUS=${text.replace(/[\r\n]+/g, ' ')}`;
}

function parsePositiveInt(s: string | undefined): number | undefined {
  if (s === undefined || !/^[1-9][0-9]*$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}
