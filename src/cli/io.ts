// The CLI's edges, passed in so commands can be run in-process by tests.
import type { Writable } from 'node:stream';
import type { Clock } from '../domain.js';
import type { Redactor } from '../log/redact.js';

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
  /**
   * The process's Redactor, when the caller needs what commands register with it (main.ts: its
   * last-resort handler for an uncaught exception scrubs with it); else main makes its own.
   */
  redactor?: Redactor;
}

/** SIGUSR1: poll now (`autoclaim poll`); SIGUSR2: read the pause record again (`autoclaim pause`/`resume`). */
type Signal = 'SIGTERM' | 'SIGINT' | 'SIGHUP' | 'SIGUSR1' | 'SIGUSR2';

interface SignalSource {
  on(signal: Signal, handler: () => void): void;
  off(signal: Signal, handler: () => void): void;
}

export function writeLine(stream: Writable, text = ''): void {
  stream.write(text + '\n');
}
