// The part of the `unix-dgram` addon (an optional dependency with no published types) that
// autoclaim uses. Events and callbacks of the addon are synchronous.
declare module 'unix-dgram' {
  import type { EventEmitter } from 'node:events';

  export interface UnixDgramSocket extends EventEmitter {
    /** Binds a filesystem path; emits 'listening' or 'error'. */
    bind(path: string): void;
    /** sendto(2); the callback gets an errno-style error, or nothing on success. */
    send(buf: Buffer, offset: number, length: number, path: string, callback?: (err?: Error) => void): void;
    /** close(2). An open socket keeps the event loop alive. */
    close(): void;
  }

  export function createSocket(type: 'unix_dgram', listener?: (msg: Buffer) => void): UnixDgramSocket;
}
