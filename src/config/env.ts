// Where the config is and what the .env file adds to the environment (SPEC §4).
import { FILE_LIMITS, readBounded, tooBigText } from './read-bounded.js';
import { resolve } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { ConfigError, type ConfigIssue } from '../errors.js';

const DEFAULT_CONFIG_PATH = './config/autoclaim.yaml';
const DEFAULT_ENV_FILE = '.env';

/** `--config`, else `$AUTOCLAIM_CONFIG`, else ./config/autoclaim.yaml; absolute, against `cwd`. */
export function findConfigPath(cliValue: string | undefined, env: NodeJS.ProcessEnv, cwd: string = process.cwd()): string {
  const chosen = nonEmpty(cliValue) ?? nonEmpty(env.AUTOCLAIM_CONFIG) ?? DEFAULT_CONFIG_PATH;
  return resolve(cwd, chosen);
}

interface EnvFileResult {
  /** The file read, absolute; undefined when the default .env does not exist. */
  file: string | undefined;
  /** Names set from the file (already-set variables are never overridden). */
  applied: string[];
  /** E.g. a .env readable by others: it usually holds the API key. */
  warnings: ConfigIssue[];
}

/**
 * Loads a dotenv file into `env`, never overriding a variable that is already set. `path` is the
 * explicit `--env-file` (it must exist: throws ConfigError); without it, `.env` in `cwd` is read
 * when present. Values are never part of a message.
 */
export function loadEnvFile(
  path: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string = process.cwd(),
): EnvFileResult {
  const explicit = nonEmpty(path) !== undefined;
  const file = resolve(cwd, nonEmpty(path) ?? DEFAULT_ENV_FILE);
  const shown = path ?? DEFAULT_ENV_FILE;
  const issue = (message: string): ConfigIssue => ({ file: shown, line: 0, col: 0, path: '', message });
  const read = readBounded(file, FILE_LIMITS.envFile);
  if (!read.ok) {
    const code = read.reason === 'error' ? read.code : read.reason === 'too_big' ? undefined : 'EISDIR';
    if (!explicit && code === 'ENOENT') return { file: undefined, applied: [], warnings: [] };
    const why =
      read.reason === 'too_big'
        ? `env file: ${tooBigText('env file', read.size, FILE_LIMITS.envFile)}`
        : code === 'ENOENT'
          ? 'env file not found'
          : `env file cannot be read (${code ?? 'unknown error'})`;
    throw new ConfigError([issue(why)]);
  }
  const text = read.bytes.toString('utf8');
  const mode = read.mode;
  const applied: string[] = [];
  for (const [name, value] of Object.entries(parseDotenv(text))) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    applied.push(name);
  }
  const warnings =
    (mode & 0o077) !== 0 && applied.length > 0
      ? [issue(`is readable by group or others and may hold secrets; run: chmod 600 ${file}`)]
      : [];
  return { file, applied, warnings };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v : undefined;
}
