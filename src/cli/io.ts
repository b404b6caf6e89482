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
  /** The signals the process is sent: `run` listens for all five, `sandbox` and `signer` until a stop (untilStopAsked). */
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

/** Resolves at the first SIGTERM or SIGINT: what `sandbox` and `signer` serve until. */
export function untilStopAsked(signals: SignalSource): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      signals.off('SIGTERM', stop);
      signals.off('SIGINT', stop);
      resolve();
    };
    signals.on('SIGTERM', stop);
    signals.on('SIGINT', stop);
  });
}

export function writeLine(stream: Writable, text = ''): void {
  stream.write(text + '\n');
}
