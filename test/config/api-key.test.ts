import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiKeySource, describeApiKeySource, resolveApiKey } from '../../src/config/index.js';
import type { AppConfig } from '../../src/domain.js';
import { KeyError } from '../../src/errors.js';
import { apiKeyConfigs, TempDir } from './helpers.js';

describe('resolveApiKey: environment, else api_key_file, else the systemd credential', () => {
  let dir: TempDir;
  let config: AppConfig;
  let configNoFile: AppConfig;

  beforeEach(() => {
    dir = new TempDir();
    ({ withFile: config, noFile: configNoFile } = apiKeyConfigs(dir));
  });
  afterEach(() => dir.remove());

  it('prefers $AUTOCLAIM_API_KEY, trimmed', () => {
    dir.write('api_key', 'from-file-0123456789\n');
    expect(resolveApiKey(config, { AUTOCLAIM_API_KEY: ' from-env-0123456789 \n' })).toBe('from-env-0123456789');
    expect(describeApiKeySource(apiKeySource(config, { AUTOCLAIM_API_KEY: 'x' }))).toBe('$AUTOCLAIM_API_KEY');
  });

  it('reads api.api_key_file (relative to the config) when the variable is unset or empty', () => {
    dir.write('api_key', '  from-file-0123456789\n\n');
    expect(resolveApiKey(config, {})).toBe('from-file-0123456789');
    expect(resolveApiKey(config, { AUTOCLAIM_API_KEY: '' })).toBe('from-file-0123456789');
    expect(describeApiKeySource(apiKeySource(config, {}))).toBe(`file ${join(dir.path, 'api_key')}`);
  });

  it('refuses a key file readable by group or others, without showing the key', () => {
    const file = dir.write('api_key', 'CANARY-key\n');
    chmodSync(file, 0o640);
    expect(() => resolveApiKey(config, {})).toThrowError(KeyError);
    try {
      resolveApiKey(config, {});
    } catch (err) {
      expect((err as KeyError).code).toBe('API_KEY_FILE_MODE');
      expect((err as Error).message).toBe(`api.api_key_file ${file} is readable by group or others; run: chmod 600 ${file}`);
      expect((err as Error).message).not.toContain('CANARY');
    }
  });

  it('refuses a configured key file that is missing or empty', () => {
    expect(() => resolveApiKey(config, {})).toThrowError(/api\.api_key_file .*api_key cannot be read \(ENOENT\)/);
    dir.write('api_key', '\n');
    expect(() => resolveApiKey(config, {})).toThrowError(/is empty/);
  });

  it('reads $CREDENTIALS_DIRECTORY/api_key, or the directory given', () => {
    const creds = join(dir.path, 'creds.d');
    mkdirSync(creds);
    writeFileSync(join(creds, 'api_key'), 'from-credential-0123\n', { mode: 0o400 });
    expect(resolveApiKey(configNoFile, { CREDENTIALS_DIRECTORY: creds })).toBe('from-credential-0123');
    expect(resolveApiKey(configNoFile, {}, { credentialsDir: creds })).toBe('from-credential-0123');
    expect(describeApiKeySource(apiKeySource(configNoFile, {}, { credentialsDir: creds }))).toBe(
      `systemd credential api_key (${join(creds, 'api_key')})`,
    );
  });

  it('prefers api.api_key_file over the credential', () => {
    const creds = join(dir.path, 'creds.d');
    mkdirSync(creds);
    writeFileSync(join(creds, 'api_key'), 'from-credential-0123\n', { mode: 0o400 });
    dir.write('api_key', 'from-file-0123456789\n');
    expect(resolveApiKey(config, { CREDENTIALS_DIRECTORY: creds })).toBe('from-file-0123456789');
  });

  it('is undefined when no source is set', () => {
    const emptyCreds = join(dir.path, 'empty.d');
    mkdirSync(emptyCreds);
    expect(resolveApiKey(configNoFile, { CREDENTIALS_DIRECTORY: emptyCreds })).toBeUndefined();
    expect(resolveApiKey(configNoFile, {})).toBeUndefined();
    expect(describeApiKeySource(apiKeySource(configNoFile, {}))).toBe(
      'none: reads go unauthenticated and signed requests will be refused',
    );
  });
});
