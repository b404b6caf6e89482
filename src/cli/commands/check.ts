// `check`: exactly the start-up pipeline (config, rules, keys), without the lock or the network.
import { dirname } from 'node:path';
import { loadConfig, summarizeConfig } from '../../config/index.js';
import { formatIssue } from '../../errors.js';
import { loadSigners, requireApiKey } from '../../runtime.js';
import { prepareDemoWorld } from '../../sandbox/demo.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import { describeFailure } from '../errors.js';

export function checkCommand(ctx: CommandContext): ExitCode {
  const { io } = ctx;
  const result = loadConfig(ctx.configPath, { env: io.env, cwd: io.cwd });
  for (const w of result.warnings) writeLine(io.stderr, `warning: ${formatIssue(w)}`);
  if (result.config === undefined) {
    for (const e of result.errors) writeLine(io.stderr, formatIssue(e));
    writeLine(io.stderr, `${ctx.configPath}: ${result.errors.length} error(s); the config is invalid`);
    return EXIT.CONFIG;
  }
  const config = result.config;
  try {
    // The demo config's keys are generated on first use, by check as by run.
    requireApiKey(config, io.env);
    if (config.api.baseUrl === 'sandbox') prepareDemoWorld(config, { logger: ctx.logger });
    loadSigners(config.wallets, { env: io.env, baseDir: dirname(config.file), redactor: ctx.redactor });
  } catch (err) {
    const { code, lines } = describeFailure(err);
    for (const l of lines) writeLine(io.stderr, l);
    return code;
  }
  writeLine(io.stdout, summarizeConfig(config, new Date(io.clock.now()), { env: io.env }));
  writeLine(io.stdout, `\n${ctx.configPath}: valid (${config.wallets.length} wallet(s), ${config.rules.length} rule(s), all keys load and match)`);
  return EXIT.OK;
}
