// An API key shorter than 16 characters is refused where it is read (issue 11): a short key is
// guessable and the hardest text to keep out of logs. The error names the source, never the value.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveApiKey } from '../../src/config/index.js';
import { MIN_API_KEY_LENGTH } from '../../src/config/secrets.js';
import type { AppConfig } from '../../src/domain.js';
import { KeyError } from '../../src/errors.js';
import { describeFailure } from '../../src/cli/errors.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { thrown } from '../support/errors.js';
import { apiKeyConfigs, TempDir } from './helpers.js';

const SHORT = 'Sh0rtKey-12c'; // 12 characters

const refusal = (fn: () => unknown): KeyError => thrown(KeyError, fn);

describe('an API key shorter than 16 characters is a config error', () => {
  let dir: TempDir;
  let withFile: AppConfig;
  let noFile: AppConfig;

  beforeEach(() => {
    dir = new TempDir();
    ({ withFile, noFile } = apiKeyConfigs(dir));
  });
  afterEach(() => dir.remove());

  it('from the environment, named as $AUTOCLAIM_API_KEY, exit 78, without the value', () => {
    expect(SHORT).toHaveLength(12);
    const err = refusal(() => resolveApiKey(noFile, { AUTOCLAIM_API_KEY: SHORT }));
    expect(err.code).toBe('API_KEY_TOO_SHORT');
    expect(err.message).toContain('$AUTOCLAIM_API_KEY');
    expect(err.message).toContain(`shorter than ${MIN_API_KEY_LENGTH} characters`);
    expect(err.message).not.toContain(SHORT);
    expect(describeFailure(err).code).toBe(EXIT.CONFIG);
    expect(EXIT.CONFIG).toBe(78);
  });

  it('from api.api_key_file, naming the file', () => {
    const file = dir.write('api_key', `${SHORT}\n`);
    const err = refusal(() => resolveApiKey(withFile, {}));
    expect(err.code).toBe('API_KEY_TOO_SHORT');
    expect(err.message).toContain(`api.api_key_file ${file}`);
    expect(err.message).not.toContain(SHORT);
  });

  it('from the systemd credential, naming it', () => {
    const creds = join(dir.path, 'creds.d');
    mkdirSync(creds);
    writeFileSync(join(creds, 'api_key'), `${SHORT}\n`, { mode: 0o400 });
    const err = refusal(() => resolveApiKey(noFile, { CREDENTIALS_DIRECTORY: creds }));
    expect(err.message).toContain(`systemd credential api_key (${join(creds, 'api_key')})`);
    expect(err.message).not.toContain(SHORT);
  });

  it('counts the trimmed key, and accepts exactly 16 characters', () => {
    expect(() => resolveApiKey(noFile, { AUTOCLAIM_API_KEY: `  ${'k'.repeat(15)}  \n` })).toThrowError(KeyError);
    expect(resolveApiKey(noFile, { AUTOCLAIM_API_KEY: 'k'.repeat(16) })).toBe('k'.repeat(16));
  });
});
