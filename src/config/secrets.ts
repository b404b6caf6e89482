// Secrets never live in the YAML (SPEC §4). This file refuses a config that holds one, and finds
// the API key where it is allowed to be: the environment, a private file, a systemd credential.
import { FILE_LIMITS, readBounded, tooBigText } from './read-bounded.js';
import { join } from 'node:path';
import type { AppConfig, ChannelConfig, InProcessKeySource } from '../domain.js';
import { KeyError, type KeyErrorCode } from '../errors.js';
import { MIN_SECRET_LENGTH } from '../log/redact.js';
import type { IssueList, Path, PathSegment } from './positions.js';
import { shownPath } from './shown-key.js';

const API_KEY_NAMES = /^(api[_-]?key|apikey|api[_-]?token|bearer|authorization|auth[_-]?token)$/i;
const WALLET_SECRET_NAMES = /^(secret|secret[_-]?key|private[_-]?key|keypair|seed|mnemonic|seed[_-]?phrase)$/i;
const OTHER_SECRET_NAMES = /^(password|passwd|token|access[_-]?token)$/i;
// base58, base64 or hex of 32 bytes or more: nothing a key source would be written as.
const ENCODED_LONG = /^[A-Za-z0-9+/=_-]{43,}$/;

const API_KEY_HELP =
  'secrets never live in the YAML: remove it (and rotate it if this file was shared), then set $AUTOCLAIM_API_KEY, ' +
  'or name a mode-0600 file with api.api_key_file, or use the systemd credential "api_key"';
const WALLET_KEY_HELP =
  'wallet keys never live in the YAML: remove it (and move the funds if this file was shared), then use ' +
  'key: { file: PATH } (a mode-0600 solana-keygen file), { env: VARIABLE } or { credential: NAME }';

/**
 * Reports every literal secret in the parsed YAML, naming where it is and where it belongs, never
 * what it is. Returns the flagged paths so schema messages about the same keys are not doubled.
 * `base` is where `data` sits in the config (a wallets_file line is `['wallets', i]`).
 */
export function findLiteralSecrets(data: unknown, issues: IssueList, base: Path = []): Path[] {
  const flagged: Path[] = [];
  const flag = (path: Path, message: string): void => {
    flagged.push(path);
    issues.error(path, message);
  };
  // One path, pushed and popped as the walk goes (a copy only for a flagged place): a fleet's
  // wallets_file is walked a line at a time, and a new array at every key was garbage per wallet.
  const path: PathSegment[] = [...base];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        path.push(i);
        walk(v);
        path.pop();
      });
      return;
    }
    if (value === null || typeof value !== 'object') return;
    // The first segment of the place the object is at (path still ends at it here).
    const inWallets = path[0] === 'wallets';
    // A backend's `key:` settings name things, they hold none: a PKCS#11 `token` is the token's
    // label and a Vault or signer `key` a key's name (their secrets come only from env, file or
    // credential, by the *_env/_file/_credential fields).
    const backend = inWallets && path[path.length - 2] === 'key' ? path[path.length - 1] : undefined;
    const names = (key: string): boolean => (backend === 'pkcs11' && key === 'token') || ((backend === 'vault' || backend === 'signer') && key === 'key');
    for (const key of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[key];
      path.push(key);
      const literal = v !== null && v !== undefined && (typeof v !== 'object' || Array.isArray(v)) && !names(key);
      if (literal && API_KEY_NAMES.test(key)) flag([...path], API_KEY_HELP);
      else if (literal && WALLET_SECRET_NAMES.test(key)) flag([...path], WALLET_KEY_HELP);
      else if (literal && OTHER_SECRET_NAMES.test(key)) flag([...path], 'secrets never live in the YAML; pass them through the environment or a mode-0600 file');
      else if (key === 'key' && inWallets && looksLikeKeyMaterial(v)) flag([...path], `looks like key material; ${WALLET_KEY_HELP}`);
      else walk(v);
      path.pop();
    }
  };
  walk(data);
  return flagged;
}

/** Text (or a YAML value) that reads as an encoded key: base58, base64 or hex of 32 bytes or more, or a list of 32+ numbers. */
export function looksLikeKeyMaterial(v: unknown): boolean {
  if (typeof v === 'string') return ENCODED_LONG.test(v.trim()) || /^\s*\[\s*\d+(\s*,\s*\d+){31,}\s*\]\s*$/.test(v);
  return Array.isArray(v) && v.length >= 32 && v.every((x) => typeof x === 'number');
}

// ------------------------------------------------------------------------------------------------
// the API key

export interface ApiKeyOptions {
  /** $CREDENTIALS_DIRECTORY, unless given. */
  credentialsDir?: string | undefined;
}

type ApiKeySource =
  | { kind: 'env' }
  | { kind: 'file'; path: string }
  | { kind: 'credential'; path: string }
  | { kind: 'none' };

/** Where the API key will come from, without reading it (for `check` and logs). */
export function apiKeySource(config: AppConfig, env: NodeJS.ProcessEnv, opts: ApiKeyOptions = {}): ApiKeySource {
  if (nonEmpty(env.AUTOCLAIM_API_KEY)) return { kind: 'env' };
  if (config.api.apiKeyFile !== undefined) return { kind: 'file', path: config.api.apiKeyFile };
  const path = credentialPath('api_key', env, opts);
  if (path !== undefined) return { kind: 'credential', path };
  return { kind: 'none' };
}

/**
 * The credential's file, when there is one with something in it. One holding only whitespace is
 * the unit's `SetCredential=NAME:\n` default, standing in for a `LoadCredential=` whose file does
 * not exist (systemd/autoclaim.service): it means "not configured", like an unset variable.
 */
function credentialPath(name: string, env: NodeJS.ProcessEnv, opts: ApiKeyOptions): string | undefined {
  const dir = opts.credentialsDir ?? env.CREDENTIALS_DIRECTORY;
  if (!nonEmpty(dir)) return undefined;
  const path = join(dir, name);
  return hasContent(path) ? path : undefined;
}

export function describeApiKeySource(source: ApiKeySource): string {
  switch (source.kind) {
    case 'env':
      return '$AUTOCLAIM_API_KEY';
    case 'file':
      return `file ${shownPath(source.path)}`;
    case 'credential':
      return `systemd credential api_key (${shownPath(source.path)})`;
    case 'none':
      return 'none: reads go unauthenticated and signed requests will be refused';
  }
}

/**
 * The API key: `$AUTOCLAIM_API_KEY`, else `api.api_key_file`, else the systemd credential
 * `api_key`; undefined when none is set. Throws KeyError when the configured file is unreadable,
 * empty, or readable by group or others (a key file is refused as ssh refuses one), and when the key
 * is shorter than MIN_API_KEY_LENGTH, naming where it came from. The value is
 * never part of a message; the caller registers it with the Redactor.
 */
export function resolveApiKey(config: AppConfig, env: NodeJS.ProcessEnv, opts: ApiKeyOptions = {}): string | undefined {
  const fromEnv = env.AUTOCLAIM_API_KEY?.trim();
  if (fromEnv) return usableApiKey(fromEnv, '$AUTOCLAIM_API_KEY');
  const source = apiKeySource(config, env, opts);
  if (source.kind === 'file') return usableApiKey(readKeyFile(source.path, 'api.api_key_file', true), `api.api_key_file ${shownPath(source.path)}`);
  // systemd writes credentials itself (mode 0400, owned by the service), so no mode check there.
  if (source.kind === 'credential') {
    const what = `the systemd credential api_key (${source.path})`;
    return usableApiKey(readKeyFile(source.path, 'the systemd credential api_key', false), what);
  }
  return undefined;
}

/**
 * The shortest API key accepted. A short key is guessable, and short text is where redaction is
 * weakest: the redactor scrubs nothing under 8 characters (ordinary words would go with it). Real
 * API keys are far longer; 16 leaves a margin.
 */
export const MIN_API_KEY_LENGTH = 16;

function usableApiKey(key: string, what: string): string {
  // Trimmed at both ends already; one inside (two keys on two lines, a NUL) cannot be an HTTP
  // header's value: every request failed at the poll while `check` said the config was valid.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  if (/[\x00-\x1f\x7f]/.test(key)) {
    throw new KeyError(
      'API_KEY_NOT_ONE_LINE',
      `the API key from ${what} holds a line break or another control character (two keys on two lines?); an HTTP header cannot carry it: keep the one key, on one line`,
    );
  }
  if (key.length >= MIN_API_KEY_LENGTH) return key;
  throw new KeyError(
    'API_KEY_TOO_SHORT',
    `the API key from ${what} is shorter than ${MIN_API_KEY_LENGTH} characters; an API key that short cannot be kept out of ` +
      'logs reliably (and is guessable): use the full key the API issued',
  );
}

function readKeyFile(path: string, what: string, checkMode: boolean): string {
  const shown = shownPath(path);
  // One descriptor for the mode, the size and the bytes (read-bounded.ts): the file checked is the
  // file read, and one above FILE_LIMITS.secretFile is refused before a byte of it is read.
  const read = readBounded(path, FILE_LIMITS.secretFile);
  if (!read.ok) {
    if (read.reason === 'too_big') throw new KeyError('KEY_TOO_LARGE', `${what} ${shown}: ${tooBigText('secret file', read.size, FILE_LIMITS.secretFile)}`);
    const code = read.reason === 'error' ? read.code : read.reason === 'directory' ? 'EISDIR' : 'not a regular file';
    throw new KeyError('API_KEY_FILE_UNREADABLE', `${what} ${shown} cannot be read (${code})`);
  }
  if (checkMode && (read.mode & 0o077) !== 0) {
    throw new KeyError('API_KEY_FILE_MODE', `${what} ${shown} is readable by group or others; run: chmod 600 ${shown}`);
  }
  const key = read.bytes.toString('utf8').trim();
  read.bytes.fill(0);
  if (key === '') throw new KeyError('API_KEY_FILE_EMPTY', `${what} ${shown} is empty`);
  return key;
}

function nonEmpty(v: string | undefined): v is string {
  return v !== undefined && v.trim() !== '';
}

/**
 * A regular file with more than whitespace in it (credentials are small: it is read whole). One
 * that is there but cannot be read counts as present, so that its reader says why.
 */
function hasContent(path: string): boolean {
  const read = readBounded(path, FILE_LIMITS.secretFile);
  if (read.ok) {
    const present = read.bytes.toString('utf8').trim() !== '';
    read.bytes.fill(0);
    return present;
  }
  // Too big or unreadable: present, so that its reader says why; missing or not a file: absent.
  return read.reason === 'too_big' || (read.reason === 'error' && read.code !== 'ENOENT' && read.code !== 'ENOTDIR');
}

// ------------------------------------------------------------------------------------------------
// the webhook secret

/**
 * The secret that signs webhook POSTs: `$AUTOCLAIM_WEBHOOK_SECRET`, else the systemd credential
 * `webhook_secret`; undefined when neither is set (posts go unsigned). Refused below
 * MIN_API_KEY_LENGTH characters for the API key's reasons: guessable, and too short to redact.
 */
export function resolveWebhookSecret(env: NodeJS.ProcessEnv, opts: ApiKeyOptions = {}): string | undefined {
  const fromEnv = env.AUTOCLAIM_WEBHOOK_SECRET?.trim();
  if (fromEnv) return longEnoughSecret(fromEnv, '$AUTOCLAIM_WEBHOOK_SECRET');
  const path = credentialPath('webhook_secret', env, opts);
  if (path === undefined) return undefined;
  const what = `the systemd credential webhook_secret (${shownPath(path)})`;
  const text = readKeyFile(path, 'the systemd credential webhook_secret', false);
  return longEnoughSecret(text, what);
}

function longEnoughSecret(secret: string, what: string): string {
  if (secret.length >= MIN_API_KEY_LENGTH) return secret;
  throw new KeyError(
    'WEBHOOK_SECRET_TOO_SHORT',
    `the webhook secret from ${what} is shorter than ${MIN_API_KEY_LENGTH} characters; a secret that short cannot be kept out of ` +
      'logs reliably (and is guessable): use a long random one, e.g. openssl rand -hex 32',
  );
}

// ------------------------------------------------------------------------------------------------
// the PostgreSQL password (state.url)

/**
 * The password of the PostgreSQL state: `$PGPASSWORD` (libpq's own variable), else
 * `state.password_file` (mode 0600, checked as the API key file is), else the systemd credential
 * `state_password`; undefined when none is set (trust, peer or certificate authentication, or a
 * ~/.pgpass the driver does not read). The caller registers it with the Redactor.
 */
export function resolveStatePassword(config: AppConfig, env: NodeJS.ProcessEnv, opts: ApiKeyOptions = {}): string | undefined {
  return resolvePostgresPassword(config.state.passwordFile, env, opts);
}

/** The same for any PostgreSQL URL whose config has a `state.password_file` (the signer's signer.yaml too). */
export function resolvePostgresPassword(passwordFile: string | undefined, env: NodeJS.ProcessEnv, opts: ApiKeyOptions = {}): string | undefined {
  const code = 'STATE_PASSWORD_TOO_SHORT';
  const fromEnv = env.PGPASSWORD;
  if (fromEnv !== undefined && fromEnv !== '') return redactable(fromEnv, 'the PostgreSQL password from $PGPASSWORD', code);
  if (passwordFile !== undefined) return redactable(readKeyFile(passwordFile, 'state.password_file', true), `the PostgreSQL password in state.password_file ${shownPath(passwordFile)}`, code);
  const path = credentialPath('state_password', env, opts);
  return path === undefined ? undefined : redactable(readKeyFile(path, 'the systemd credential state_password', false), `the PostgreSQL password in the systemd credential state_password (${shownPath(path)})`, code);
}

/**
 * A secret that goes to a server (the PostgreSQL password, a channel's secret) is refused below the
 * redactor's MIN_SECRET_LENGTH: the redactor leaves text that short alone, so a server that echoes
 * what it was sent (a PostgreSQL error quoting a cleartext password, an SMTP refusal) would put it
 * in a log line, a `status` failure or a stored error as it is.
 */
function redactable(secret: string, what: string, code: KeyErrorCode): string {
  if (secret.trim().length >= MIN_SECRET_LENGTH) return secret;
  throw new KeyError(
    code,
    `${what} is shorter than ${MIN_SECRET_LENGTH} characters; a secret that short cannot be kept out of logs (the redactor leaves ` +
      'text that short alone, or ordinary words would go with it): use a longer one',
  );
}

// ------------------------------------------------------------------------------------------------
// a notification channel's secret (alerts.channels)

/**
 * A channel's secret (a webhook URL, a bot token, a password, a routing key) from where the config
 * says it is: a variable, a mode-0600 file, a systemd credential. Throws KeyError naming the source
 * (never the value) when it is not set or cannot be read. The caller registers it with the Redactor.
 */
export function resolveChannelSecret(source: InProcessKeySource, what: string, env: NodeJS.ProcessEnv, opts: ApiKeyOptions = {}): string {
  const code = 'CHANNEL_SECRET_TOO_SHORT';
  if ('env' in source) {
    const v = env[source.env]?.trim();
    if (!nonEmpty(v)) throw new KeyError('CHANNEL_SECRET_MISSING', `${what}: $${source.env} is not set`);
    return redactable(v, `${what} from $${source.env}`, code);
  }
  if ('file' in source) return redactable(readKeyFile(source.file, what, true), `${what} in ${shownPath(source.file)}`, code);
  const dir = opts.credentialsDir ?? env.CREDENTIALS_DIRECTORY;
  if (!nonEmpty(dir)) throw new KeyError('CHANNEL_SECRET_MISSING', `${what}: the systemd credential ${shownPath(source.credential)} is not there ($CREDENTIALS_DIRECTORY is not set)`);
  return redactable(readKeyFile(join(dir, source.credential), `${what}: the systemd credential`, false), `${what} in the systemd credential ${shownPath(source.credential)}`, code);
}

/** A channel's secrets, by the config key that names their source. */
export function channelSecretSources(c: ChannelConfig): Array<[string, InProcessKeySource]> {
  switch (c.type) {
    case 'slack':
    case 'discord':
      return [['url', c.url]];
    case 'telegram':
      return [['token', c.token]];
    case 'pagerduty':
      return [['routing_key', c.routingKey]];
    case 'email':
      return c.password === undefined ? [] : [['password', c.password]];
  }
}
