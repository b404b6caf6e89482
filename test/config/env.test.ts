import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findConfigPath, loadEnvFile } from '../../src/config/index.js';
import { ConfigError, formatIssue } from '../../src/errors.js';
import { TempDir } from './helpers.js';

describe('findConfigPath', () => {
  it('takes --config, else $AUTOCLAIM_CONFIG, else ./config/autoclaim.yaml, against cwd', () => {
    const env = { AUTOCLAIM_CONFIG: '/etc/autoclaim/autoclaim.yaml' };
    expect(findConfigPath('mine.yaml', env, '/srv')).toBe('/srv/mine.yaml');
    expect(findConfigPath(undefined, env, '/srv')).toBe('/etc/autoclaim/autoclaim.yaml');
    expect(findConfigPath(undefined, {}, '/srv')).toBe('/srv/config/autoclaim.yaml');
    expect(findConfigPath('', { AUTOCLAIM_CONFIG: '' }, '/srv')).toBe('/srv/config/autoclaim.yaml');
  });
});

describe('loadEnvFile', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(() => dir.remove());

  it('sets what is unset and never overrides what the environment already says', () => {
    dir.write('.env', 'AUTOCLAIM_API_KEY=from-file\nTREASURY_SECRET="quoted value"\n# comment\nEMPTY_ALREADY=x\n');
    const env: NodeJS.ProcessEnv = { AUTOCLAIM_API_KEY: 'from-env', EMPTY_ALREADY: '' };
    const result = loadEnvFile(undefined, env, dir.path);
    expect(env).toEqual({ AUTOCLAIM_API_KEY: 'from-env', TREASURY_SECRET: 'quoted value', EMPTY_ALREADY: '' });
    expect(result).toEqual({ file: join(dir.path, '.env'), applied: ['TREASURY_SECRET'], warnings: [] });
  });

  it('reads an explicit --env-file instead of .env', () => {
    dir.write('.env', 'A=from-dotenv\n');
    dir.write('prod.env', 'A=from-prod\n');
    const env: NodeJS.ProcessEnv = {};
    loadEnvFile('prod.env', env, dir.path);
    expect(env).toEqual({ A: 'from-prod' });
  });

  it('is fine without a default .env', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(loadEnvFile(undefined, env, dir.path)).toEqual({ file: undefined, applied: [], warnings: [] });
    expect(env).toEqual({});
  });

  it('refuses a missing explicit --env-file', () => {
    let caught: unknown;
    try {
      loadEnvFile('missing.env', {}, dir.path);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).issues.map(formatIssue)).toEqual(['missing.env: env file not found']);
  });

  it('warns, without the values, when the file is readable by others', () => {
    const file = dir.write('.env', 'AUTOCLAIM_API_KEY=CANARY-secret\n');
    chmodSync(file, 0o644);
    const result = loadEnvFile(undefined, {}, dir.path);
    expect(result.warnings.map(formatIssue)).toEqual([
      `.env: is readable by group or others and may hold secrets; run: chmod 600 ${file}`,
    ]);
    expect(JSON.stringify(result)).not.toContain('CANARY');
  });
});
