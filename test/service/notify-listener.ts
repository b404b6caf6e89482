// A stand-in for systemd's notify socket: a unix datagram socket bound in a temp dir that records
// every datagram. Point a process's NOTIFY_SOCKET at `path` and wait for READY=1 / WATCHDOG=1.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface NotifyListener {
  /** The socket path: the value for NOTIFY_SOCKET. */
  readonly path: string;
  /** Every datagram received, in order, as text ("READY=1\nSTATUS=..."). */
  readonly messages: string[];
  /** Every assignment received, one per line of every datagram ("READY=1", "STATUS=..."). */
  assignments(): string[];
  /** Resolves with the first assignment (past or future) that matches; rejects after timeoutMs. */
  waitFor(match: string | ((assignment: string) => boolean), timeoutMs?: number): Promise<string>;
  close(): void;
}

const require = createRequire(import.meta.url);

/** Binds a listener at `path`, or at a fresh temp path when none is given. */
export function listenNotify(path?: string): NotifyListener {
  const { createSocket } = require('unix-dgram') as typeof import('unix-dgram');
  const dir = path === undefined ? mkdtempSync(join(tmpdir(), 'autoclaim-notify-')) : undefined;
  const socketPath = path ?? join(dir ?? '', 'notify.sock');
  const messages: string[] = [];
  const waiters = new Set<() => void>();
  const socket = createSocket('unix_dgram', (buf) => {
    messages.push(buf.toString('utf8'));
    for (const w of waiters) w();
  });
  let bindError: Error | undefined;
  socket.on('error', (err: Error) => {
    bindError = err;
  });
  socket.bind(socketPath); // synchronous: 'error' has fired by now if it failed
  if (bindError !== undefined) {
    socket.close();
    throw bindError;
  }

  const assignments = (): string[] => messages.flatMap((m) => m.split('\n')).filter((l) => l !== '');
  let closed = false;

  return {
    path: socketPath,
    messages,
    assignments,
    waitFor(match, timeoutMs = 10_000) {
      const test = typeof match === 'string' ? (a: string) => a === match : match;
      return new Promise<string>((resolve, reject) => {
        const check = (): boolean => {
          const hit = assignments().find(test);
          if (hit === undefined) return false;
          waiters.delete(onMessage);
          clearTimeout(timer);
          resolve(hit);
          return true;
        };
        const onMessage = (): void => void check();
        const timer = setTimeout(() => {
          waiters.delete(onMessage);
          reject(new Error(`no notify message matching ${String(match)}; got ${JSON.stringify(messages)}`));
        }, timeoutMs);
        waiters.add(onMessage);
        check();
      });
    },
    close() {
      if (closed) return;
      closed = true;
      socket.close();
      rmSync(dir ?? socketPath, { recursive: true, force: true });
    },
  };
}
