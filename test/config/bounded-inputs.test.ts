// Issue 24, finding 8: every file the config names is refused above its stated size before it is
// read (fstat on the opened descriptor, then a bounded read). A 300 MB sparse key file made `check`
// take seconds and gigabytes to fail with a RangeError. Sparse files (truncate) keep these cheap:
// reading one would cost its full size, so a test that passes read nothing.
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadKey } from '../../src/keys/keys.js';
import { loadEnvFile } from '../../src/config/env.js';
import { resolveApiKey, resolveStatePassword, resolveWebhookSecret } from '../../src/config/secrets.js';
import { FILE_LIMITS, readBounded } from '../../src/config/read-bounded.js';
import { resolveWebhookUrl } from '../../src/config/webhook-url.js';
import type { AppConfig } from '../../src/domain.js';
import { ConfigError, KeyError } from '../../src/errors.js';
import { CANARY_API_KEY, makeWallets, runCli, tempDir, writeConfig } from '../e2e/helpers.js';
import { apiKeyConfigs, TempDir } from './helpers.js';

const MB300 = 300 * 1024 * 1024;

/** A sparse file of `size` bytes: it costs nothing until read. */
function sparse(dir: TempDir, name: string, size: number): string {
  const file = dir.write(name, '');
  truncateSync(file, size);
  return file;
}

function keyError(fn: () => unknown): KeyError {
  try {
    fn();
  } catch (err) {
    if (err instanceof KeyError) return err;
    throw err;
  }
  throw new Error('expected a KeyError');
}

describe('files the config names are refused above their size, before they are read', () => {
  let dir: TempDir;
  let config: AppConfig;
  beforeEach(() => {
    dir = new TempDir();
    ({ withFile: config } = apiKeyConfigs(dir));
  });
  afterEach(() => dir.remove());

  it('a wallet key file above 64 KiB (a 300 MB sparse one): KEY_TOO_LARGE', () => {
    const file = sparse(dir, 'big-key.json', MB300);
    const err = keyError(() => loadKey({ file }, { env: {}, baseDir: dir.path }));
    expect(err.code).toBe('KEY_TOO_LARGE');
    expect(err.message).toBe(`key file ${file}: the file is 300.0 MiB; a key file above 64 KiB is refused before it is read`);
    // Just at the limit it is read (and fails as what it is: not a key).
    const edge = sparse(dir, 'edge-key.json', FILE_LIMITS.keyFile);
    expect(keyError(() => loadKey({ file: edge }, { env: {}, baseDir: dir.path })).code).not.toBe('KEY_TOO_LARGE');
  });

  it('a key as a systemd credential above 64 KiB: KEY_TOO_LARGE', () => {
    sparse(dir, 'wallet-key', MB300);
    expect(keyError(() => loadKey({ credential: 'wallet-key' }, { env: {}, credentialsDir: dir.path })).code).toBe('KEY_TOO_LARGE');
  });

  it('api.api_key_file, the api_key and webhook_secret credentials, state.password_file: above 64 KiB, KEY_TOO_LARGE', () => {
    sparse(dir, 'api_key', MB300);
    const fromFile = keyError(() => resolveApiKey(config, {}));
    expect(fromFile.code).toBe('KEY_TOO_LARGE');
    expect(fromFile.message).toMatch(/^api\.api_key_file .*api_key: the file is 300\.0 MiB; a secret file above 64 KiB is refused before it is read$/);

    const creds = new TempDir();
    try {
      sparse(creds, 'api_key', MB300);
      sparse(creds, 'webhook_secret', FILE_LIMITS.secretFile + 1);
      sparse(creds, 'state_password', FILE_LIMITS.secretFile + 1);
      const { noFile } = apiKeyConfigs(dir);
      expect(keyError(() => resolveApiKey(noFile, {}, { credentialsDir: creds.path })).code).toBe('KEY_TOO_LARGE');
      expect(keyError(() => resolveWebhookSecret({}, { credentialsDir: creds.path })).code).toBe('KEY_TOO_LARGE');
      expect(keyError(() => resolveStatePassword(noFile, {}, { credentialsDir: creds.path })).code).toBe('KEY_TOO_LARGE');
    } finally {
      creds.remove();
    }
    const pw = sparse(dir, 'pg-password', MB300);
    const withPw = { ...config, state: { ...config.state, passwordFile: pw } };
    expect(keyError(() => resolveStatePassword(withPw, {})).message).toMatch(/^state\.password_file .*: the file is 300\.0 MiB/);
  });

  it('the webhook_url credential above 64 KiB: refused before it is read, not taken for "no webhook"', () => {
    const creds = new TempDir();
    try {
      sparse(creds, 'webhook_url', MB300);
      const source = resolveWebhookUrl({ CREDENTIALS_DIRECTORY: creds.path });
      expect(source?.unreadable).toMatch(/^is 314572800 bytes, over the 65536-byte limit of a secret file; refused before it is read$/);
      expect(resolveWebhookUrl({ CREDENTIALS_DIRECTORY: join(creds.path, 'none') })).toBeUndefined();
    } finally {
      creds.remove();
    }
  });

  it('an env file above 1 MiB: a config error naming it', () => {
    sparse(dir, 'big.env', MB300);
    try {
      loadEnvFile('big.env', {}, dir.path);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).issues.map((i) => `${i.file}: ${i.message}`)).toEqual([
        'big.env: env file: the file is 300.0 MiB; an env file above 1.0 MiB is refused before it is read',
      ]);
    }
  });

  it('the config file above 1 MiB: a config error naming it', () => {
    sparse(dir, 'huge.yaml', MB300);
    const r = dir.load('huge.yaml');
    expect(r.errors.map((e) => e.message)).toEqual(['the file is 300.0 MiB; a config file above 1.0 MiB is refused before it is read']);
  });

  it('readBounded: a file that grows past the limit after the fstat is refused; a directory is not read', () => {
    const file = dir.write('grows', 'x'.repeat(10));
    expect(readBounded(file, 10)).toMatchObject({ ok: true });
    writeFileSync(file, 'x'.repeat(11));
    expect(readBounded(file, 10)).toMatchObject({ ok: false, reason: 'too_big', size: 11 });
    expect(readBounded(dir.path, 10)).toMatchObject({ ok: false, reason: 'directory' });
    expect(readBounded(join(dir.path, 'nope'), 10)).toMatchObject({ ok: false, reason: 'error', code: 'ENOENT' });
  });
});

describe('`autoclaim check` with a 300 MB sparse key file', () => {
  it('exits 78 naming the file and the limit', async () => {
    const { dir, cleanup } = tempDir('autoclaim-bounded-');
    try {
      const [wallet] = makeWallets(dir, ['treasury']);
      const config = writeConfig(dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets: [wallet!] });
      truncateSync(wallet!.keyFile, MB300);
      const r = await runCli(['check', '--config', config], { cwd: dir, env: { AUTOCLAIM_API_KEY: CANARY_API_KEY } });
      expect(r.code).toBe(78);
      expect(r.stdout + r.stderr).toMatch(/the file is 300\.0 MiB; a key file above 64 KiB is refused before it is read/);
    } finally {
      cleanup();
    }
  });
});
