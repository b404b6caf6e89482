// What every command starts from: the .env file, the config path, a redactor and a logger.
import { Writable } from 'node:stream';
import { findConfigPath, loadEnvFile } from '../config/env.js';
import { looksLikeKeyMaterial } from '../config/secrets.js';
import { ConfigError } from '../errors.js';
import { createLogger, type Logger } from '../log/logger.js';
import { Redactor } from '../log/redact.js';
import type { CliIo } from './io.js';
import { registerEnvSecrets } from './env-secrets.js';
import { terminalOutput } from './terminal-text.js';
import { UsageError } from './usage-error.js';

export { UsageError };

export interface GlobalOptions {
  config?: string;
  envFile?: string;
  logLevel?: string;
}

export interface CommandContext {
  io: CliIo;
  configPath: string;
  redactor: Redactor;
  logger: Logger;
  /**
   * The config's log.level sets the logger's (openRuntime, once the config is read): neither
   * --log-level nor $AUTOCLAIM_LOG_LEVEL, which win over it, was given, and the command logs to
   * stdout (one that logs to stderr keeps warn, so its own output stays readable).
   */
  configSetsLevel?: boolean;
  /**
   * Settles when the log, on the real stdout, can no longer be written (its reader gone): every
   * line after is lost. Never, for a command that logs elsewhere. `run` stops on it.
   */
  logLost?: Promise<NodeJS.ErrnoException>;
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `redactor`: the run's own (program.ts), so what main prints after the command scrubs what the command registered. */
export function makeContext(io: CliIo, opts: GlobalOptions, logTo: 'stdout' | 'stderr' = 'stdout', redactor = new Redactor()): CommandContext {
  if (opts.logLevel !== undefined && !LEVELS.includes(opts.logLevel)) {
    throw new UsageError(`--log-level must be one of ${LEVELS.join(', ')}`);
  }
  // `--config "$CONFIG"` with the variable unset must not run whatever config is found by default:
  // an empty file name is refused, not read as "not given".
  for (const [flag, given] of [['--config', opts.config], ['--env-file', opts.envFile]] as const) {
    if (given !== undefined && given.trim() === '') throw new UsageError(`${flag} names no file (is the variable that should fill it empty?)`);
    // A key pasted where the file name goes is quoted by the failure ("config file /cwd/<key> not
    // found"), as `autoclaim key <the key>` was (commands/key.ts): registered before anything is said.
    if (given !== undefined && looksLikeKeyMaterial(given)) redactor.add(given.trim());
  }
  // dotenv never overrides what the environment already says (SPEC §4).
  const envFile = loadEnvFile(opts.envFile, io.env, io.cwd);
  registerEnvSecrets(redactor, io.env); // again: the .env file may have set them
  // Empty is unset (a unit's `Environment=AUTOCLAIM_LOG_LEVEL=`); anything else must be a level,
  // said as a config error (exit 78) rather than the logger's stack trace.
  const fromEnv = io.env.AUTOCLAIM_LOG_LEVEL?.trim() || undefined;
  if (opts.logLevel === undefined && fromEnv !== undefined && !LEVELS.includes(fromEnv)) {
    throw new ConfigError([{ file: '$AUTOCLAIM_LOG_LEVEL', line: 0, col: 0, path: '', message: `must be one of ${LEVELS.join(', ')}` }]);
  }
  const level = opts.logLevel ?? fromEnv ?? (logTo === 'stderr' ? 'warn' : 'info');
  let lost: (err: NodeJS.ErrnoException) => void = () => {};
  const logLost = new Promise<NodeJS.ErrnoException>((resolve) => (lost = resolve));
  const toStdout = logTo === 'stdout' && io.stdout === process.stdout;
  const logger = createLogger({
    level,
    redactor,
    // On the real stdout, createLogger picks a synchronous fd writer (pretty on a terminal).
    destination: logTo === 'stderr' ? io.stderr : toStdout ? undefined : io.stdout,
    onLost: (err) => lost(err),
  });
  // A .env readable by others usually holds the API key (and may hold a wallet's): said, not
  // refused, as a config warning is, since it was read without a word before (helper h29c).
  for (const w of envFile.warnings) logger.warn({ event: 'config.warning', ...w }, w.message);
  // What a command prints passes the Redactor as log lines do: a server echoing a credential into
  // a body `wallet --json` prints, or a config error quoting one, must not reach the terminal.
  const shown: CliIo = { ...io, stdout: redacting(io.stdout, redactor), stderr: redacting(io.stderr, redactor) };
  const configSetsLevel = opts.logLevel === undefined && fromEnv === undefined && logTo === 'stdout';
  return { io: shown, configPath: findConfigPath(opts.config, io.env, io.cwd), redactor, logger, configSetsLevel, ...(toStdout ? { logLost } : {}) };
}

function redacting(stream: CliIo['stdout'], redactor: Redactor): CliIo['stdout'] {
  const out: CliIo['stdout'] = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      // Passed on at once (not after the inner write drains) so lines keep their order with the
      // logger's, which writes to the same stream directly.
      // Control characters from a server (ESC sequences, bidi overrides) never reach the terminal
      // raw, whatever printed them (terminal-text.ts); JSON output is unchanged in meaning.
      stream.write(terminalOutput(redactor.redact(chunk.toString())));
      cb();
    },
  });
  out.isTTY = stream.isTTY;
  return out;
}
