// pino JSON lines on stdout (SPEC §5); human-readable when stdout is a terminal. Every line passes
// through the Redactor on its way out, so no code path can log a registered secret.
// The log/ folder: this logger, and redact.ts, the redactor every line (and every stored text) passes.
// What a line is called is events.ts's LOG_EVENTS.
import { pino, type DestinationStream, type LevelWithSilentOrString } from 'pino';
import type { LogEvent } from '../events.js';
import type { Redactor } from './redact.js';

/** A line's fields: `event` names it, from the one list (events.ts LOG_EVENTS), so a typo fails to compile. */
export interface LogFields {
  event: LogEvent;
  [field: string]: unknown;
}

type LogFn = (fields: LogFields, msg?: string) => void;

/**
 * The part of pino the code uses, with every line required to name its event. A pino logger is
 * one (tests hand in their own); nothing here may call pino's untyped forms (a bare message, no event).
 */
export interface Logger {
  fatal: LogFn;
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
  trace: LogFn;
  child(bindings: Record<string, unknown>): Logger;
  isLevelEnabled(level: LevelWithSilentOrString): boolean;
  level: string;
  flush(cb?: (err?: Error) => void): void;
}

interface LoggerOptions {
  level?: string;
  redactor: Redactor;
  /** Where lines go; default stdout. Tests pass a capturing stream. */
  destination?: DestinationStream;
  /** Pretty-print for humans; default: when stdout is a TTY and no destination is given. */
  pretty?: boolean;
  /**
   * Called (once) when a line cannot be written to stdout, the default destination: EPIPE (its
   * reader is gone), after which pino drops every line and says nothing, or any other write error.
   */
  onLost?: (err: NodeJS.ErrnoException) => void;
}

export function createLogger(opts: LoggerOptions): Logger {
  const pretty = opts.pretty ?? (opts.destination === undefined && process.stdout.isTTY === true);
  const redactor = opts.redactor;
  const base = {
    level: opts.level ?? 'info',
    base: undefined, // no pid/hostname noise: journald and Docker already record both
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    // bigint lamports must never crash a log call
    serializers: { err: pino.stdSerializers.err },
    hooks: { streamWrite: (line: string) => redactor.redact(line) },
  };
  if (pretty) {
    const transport = pino.transport({
      target: 'pino-pretty',
      options: { colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', messageKey: 'msg' },
    }) as DestinationStream;
    return pino(base, transport);
  }
  if (opts.destination !== undefined) return pino(base, opts.destination);
  const stdout = pino.destination({ dest: 1, sync: true });
  const onLost = opts.onLost;
  if (onLost !== undefined) {
    let told = false;
    stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (told) return;
      told = true;
      onLost(err);
    });
  }
  return pino(base, stdout);
}

/** A logger that writes nothing, for code paths (and tests) that need one but have nowhere to log. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

