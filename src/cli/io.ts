// The CLI's edges, passed in so commands can be run in-process by tests.
import type { Writable } from 'node:stream';
import type { Clock } from '../domain.js';

export interface CliIo {
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable;
  /** For a confirmation on a terminal (`send`); absent in tests that never ask. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  clock: Clock;
  /** Resolves when the process is asked to stop (SIGTERM/SIGINT); `run` and `sandbox` wait on it. */
  signals: SignalSource;
}

interface SignalSource {
  on(signal: 'SIGTERM' | 'SIGINT' | 'SIGHUP', handler: () => void): void;
  off(signal: 'SIGTERM' | 'SIGINT' | 'SIGHUP', handler: () => void): void;
}

export function writeLine(stream: Writable, text = ''): void {
  stream.write(text + '\n');
}
