// `check`: exactly the start-up pipeline (config, rules, keys), without the lock or the network.
// Every problem, whatever step finds it, is listed in one pass with its file:line:col.
import { summarizeConfig } from '../../config/index.js';
import { formatIssue } from '../../errors.js';
import { checkConfig } from '../../runtime.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';

export function checkCommand(ctx: CommandContext): ExitCode {
  const { io } = ctx;
  // The demo config's keys are generated on first use, by check as by run.
  const result = checkConfig(ctx.configPath, { env: io.env, cwd: io.cwd, redactor: ctx.redactor, logger: ctx.logger });
  for (const w of result.warnings) writeLine(io.stderr, `warning: ${formatIssue(w)}`);
  if (result.config === undefined) {
    for (const e of result.errors) writeLine(io.stderr, formatIssue(e));
    writeLine(io.stderr, `${ctx.configPath}: ${result.errors.length} error(s); the config is invalid`);
    return EXIT.CONFIG;
  }
  const config = result.config;
  writeLine(io.stdout, summarizeConfig(config, new Date(io.clock.now()), { env: io.env }));
  writeLine(io.stdout, `\n${ctx.configPath}: valid (${config.wallets.length} wallet(s), ${config.rules.length} rule(s), all keys load and match)`);
  return EXIT.OK;
}
