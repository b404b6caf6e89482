// The one log capture for tests: a real pino logger (the product's, redactor included) whose JSON
// lines are kept in memory, so a test asserts on events and fields, never on pretty text.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';

export type LogLine = Record<string, unknown>;

export interface CapturedLog {
  logger: Logger;
  redactor: Redactor;
  /** Every line so far, parsed (read it after the code under test has logged). */
  readonly lines: LogLine[];
  /** The lines whose `event` is `name`. */
  events: (name: string) => LogLine[];
  /** The raw output, exactly as written. */
  text: () => string;
}

export function captureLog(level = 'debug', redactor = new Redactor()): CapturedLog {
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      raw.push(chunk.toString());
      cb();
    },
  });
  const logger = createLogger({ level, redactor, destination, pretty: false });
  const lines = (): LogLine[] =>
    raw
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as LogLine);
  return {
    logger,
    redactor,
    get lines() {
      return lines();
    },
    events: (name) => lines().filter((l) => l['event'] === name),
    text: () => raw.join(''),
  };
}
