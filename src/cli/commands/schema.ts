import { configJsonSchema } from '../../config/index.js';
import type { CliIo } from '../io.js';
import { writeLine } from '../io.js';
import { EXIT, type ExitCode } from '../exit-codes.js';

export function schemaCommand(io: CliIo): ExitCode {
  writeLine(io.stdout, JSON.stringify(configJsonSchema(), null, 2));
  return EXIT.OK;
}
