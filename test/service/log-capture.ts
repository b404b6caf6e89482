// A real pino logger whose JSON lines are kept in memory, so tests assert on events.
import { createLogger, type Logger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';

export interface CapturedLog {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
  events(name: string): Array<Record<string, unknown>>;
}

export function captureLog(level = 'debug'): CapturedLog {
  const lines: Array<Record<string, unknown>> = [];
  const destination = {
    write(line: string) {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  };
  const logger = createLogger({ level, redactor: new Redactor(), destination, pretty: false });
  return { logger, lines, events: (name) => lines.filter((l) => l['event'] === name) };
}
