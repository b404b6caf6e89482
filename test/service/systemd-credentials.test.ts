// The unit's credentials are optional (issue 13): each LoadCredential= has a SetCredential= default
// that systemd writes when the file is missing. What it writes must read as "not set" to autoclaim,
// so an operator with $AUTOCLAIM_API_KEY, api.api_key_file or no webhook gets a service that starts.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiKeySource, loadConfig, resolveApiKey, resolveWebhookSecret } from '../../src/config/index.js';
import { resolveStatePassword } from '../../src/config/secrets.js';
import type { AppConfig } from '../../src/domain.js';
import { Redactor } from '../../src/log/redact.js';
import { createFailureWebhook, DEFAULT_WEBHOOK_EVENTS } from '../../src/service/webhook-events.js';
import { BASE, TempDir, edit } from '../config/helpers.js';
import { captureLog } from '../support/log.js';

const UNIT = join(import.meta.dirname, '..', '..', 'systemd', 'autoclaim.service');

/** The SetCredential= defaults of the unit, C escapes resolved as systemd resolves them. */
function unitDefaults(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(UNIT, 'utf8').split('\n')) {
    const m = /^SetCredential=([^:]+):(.*)$/.exec(line.trim());
    if (m?.[1] !== undefined) out.set(m[1], (m[2] ?? '').replace(/\\n/g, '\n').replace(/\\t/g, '\t'));
  }
  return out;
}

describe('the unit’s credential defaults read as "not set"', () => {
  let dir: TempDir;
  let creds: string;
  beforeEach(() => {
    dir = new TempDir();
    creds = join(dir.path, 'credentials');
    mkdirSync(creds);
    // What systemd puts in $CREDENTIALS_DIRECTORY when none of the files exist.
    for (const [id, value] of unitDefaults()) writeFileSync(join(creds, id), value, { mode: 0o400 });
  });
  afterEach(() => dir.remove());

  it('has a default for each optional credential', () => {
    expect([...unitDefaults().keys()].sort()).toEqual(['api_key', 'state_password', 'webhook_secret', 'webhook_url']);
  });

  it('the API key comes from $AUTOCLAIM_API_KEY or api.api_key_file; with neither, check says so', () => {
    dir.write('config.yaml', BASE);
    const config = dir.load('config.yaml').config as AppConfig;
    expect(apiKeySource(config, { CREDENTIALS_DIRECTORY: creds }).kind).toBe('none');
    expect(resolveApiKey(config, { CREDENTIALS_DIRECTORY: creds })).toBeUndefined();
    expect(resolveApiKey(config, { CREDENTIALS_DIRECTORY: creds, AUTOCLAIM_API_KEY: 'from-env-0123456789' })).toBe('from-env-0123456789');
    dir.write('api_key', 'from-file-0123456789\n');
    dir.write('with-file.yaml', edit(BASE, 'v1\n', 'v1\n  api_key_file: api_key\n'));
    expect(resolveApiKey(dir.load('with-file.yaml').config as AppConfig, { CREDENTIALS_DIRECTORY: creds })).toBe('from-file-0123456789');

    const noKey = loadConfig('config.yaml', { env: { CREDENTIALS_DIRECTORY: creds }, cwd: dir.path, keys: { redactor: new Redactor() } });
    expect(noKey.errors.map((e) => e.message)).toContain(
      'no API key: set $AUTOCLAIM_API_KEY, api.api_key_file, or the systemd credential api_key (signed requests need it)',
    );
  });

  it('no PostgreSQL password: PGPASSWORD, then state.password_file (mode 0600), then the credential', () => {
    dir.write('config.yaml', BASE);
    const config = dir.load('config.yaml').config as AppConfig;
    expect(resolveStatePassword(config, { CREDENTIALS_DIRECTORY: creds })).toBeUndefined();
    writeFileSync(join(creds, 'state_password'), 'from-credential\n');
    expect(resolveStatePassword(config, { CREDENTIALS_DIRECTORY: creds })).toBe('from-credential');
    expect(resolveStatePassword(config, { CREDENTIALS_DIRECTORY: creds, PGPASSWORD: 'from-env' })).toBe('from-env');
    dir.write('pg-password', 'from-file\n');
    dir.write('with-file.yaml', edit(BASE, 'safety:\n', 'state:\n  url: postgres://a@h/db\n  password_file: pg-password\nsafety:\n'));
    const withFile = dir.load('with-file.yaml').config as AppConfig;
    expect(resolveStatePassword(withFile, { CREDENTIALS_DIRECTORY: creds })).toBe('from-file');
    chmodSync(join(dir.path, 'pg-password'), 0o644);
    expect(() => resolveStatePassword(withFile, {})).toThrow(/state.password_file .*pg-password is readable by group or others; run: chmod 600/);
  });

  it('no webhook, and no signing secret', () => {
    expect(resolveWebhookSecret({ CREDENTIALS_DIRECTORY: creds })).toBeUndefined();
    const hook = createFailureWebhook({ env: { CREDENTIALS_DIRECTORY: creds }, logger: captureLog().logger, redactor: new Redactor(), events: () => DEFAULT_WEBHOOK_EVENTS });
    expect(hook).toBeUndefined();
  });

  it('a real credential file still wins', () => {
    writeFileSync(join(creds, 'api_key'), 'from-credential-0123\n', { mode: 0o600 });
    dir.write('config.yaml', BASE);
    expect(resolveApiKey(dir.load('config.yaml').config as AppConfig, { CREDENTIALS_DIRECTORY: creds })).toBe('from-credential-0123');
  });
});
