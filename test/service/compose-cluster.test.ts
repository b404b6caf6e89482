// docker-compose.yml's `cluster` profile (issue 15), checked statically as dockerfile.test.ts checks
// the rest (no Docker engine here): PostgreSQL from the official image on a named volume, its
// password a secret file, healthy before the daemons start; two daemons on the image's own entry
// (`run`, the command the tests spawn), their state the PostgreSQL URL (no password in it) and
// their password the credential state_password from the same secret.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.js';
import { resolveStatePassword } from '../../src/config/secrets.js';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (f: string): string => readFileSync(join(ROOT, f), 'utf8');

type Service = Record<string, unknown>;
const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  secrets: Record<string, { file?: string }>;
};
const service = (name: string): Service => compose.services[name] ?? {};
const env = (s: Service): Record<string, string> => (s['environment'] ?? {}) as Record<string, string>;
const daemons = ['autoclaim-a', 'autoclaim-b'];

describe('docker-compose.yml, profile cluster', () => {
  it('has PostgreSQL from the official image, on a named volume, healthy by pg_isready', () => {
    const pg = service('postgres');
    expect(pg['profiles']).toEqual(['cluster']);
    expect(pg['image']).toMatch(/^postgres:\d+/);
    expect(pg['volumes']).toEqual(['autoclaim-pg:/var/lib/postgresql/data']);
    expect(Object.keys(compose.volumes)).toContain('autoclaim-pg');
    expect(JSON.stringify((pg['healthcheck'] as { test: unknown }).test)).toContain('pg_isready');
  });

  it('gives PostgreSQL its password from a secret file, never in the file itself', () => {
    const pg = service('postgres');
    expect(env(pg)['POSTGRES_PASSWORD']).toBeUndefined();
    expect(env(pg)['POSTGRES_PASSWORD_FILE']).toBe('/run/secrets/state_password');
    expect(pg['secrets']).toEqual(['state_password']);
    const file = compose.secrets['state_password']?.file;
    expect(file).toBeDefined();
    expect(existsSync(join(ROOT, file ?? ''))).toBe(true);
  });

  it('runs two daemons on the image entry the tests run (`run`), hardened like the single-host one, after PostgreSQL is healthy', () => {
    const single = service('autoclaim');
    for (const name of daemons) {
      const d = service(name);
      expect(d['profiles']).toEqual(['cluster']);
      expect(d['image']).toBe(single['image']);
      expect(d['command']).toEqual(['run']);
      expect(d['command']).toEqual(single['command']);
      expect(d['read_only']).toBe(true);
      expect(d['cap_drop']).toEqual(['ALL']);
      expect(d['ulimits']).toEqual({ core: 0 });
      expect(d['depends_on']).toEqual({ sandbox: { condition: 'service_healthy' }, postgres: { condition: 'service_healthy' } });
    }
    // The entry point is dist/cli/main.js, the file test/e2e spawns.
    expect(read('Dockerfile')).toMatch(/ENTRYPOINT \[.*"\/app\/dist\/cli\/main\.js"\]/);
  });

  it('points both daemons at the same PostgreSQL state, with their password from the secret', () => {
    for (const name of daemons) {
      const d = service(name);
      const url = new URL(env(d)['AUTOCLAIM_STATE_URL'] ?? '');
      expect(url.protocol).toBe('postgres:');
      expect(url.hostname).toBe('postgres');
      expect(url.password).toBe('');
      expect(env(d)['PGPASSWORD']).toBeUndefined();
      expect(env(d)['CREDENTIALS_DIRECTORY']).toBe('/run/secrets');
      expect(d['secrets']).toEqual(['state_password']);
    }
    expect(env(service('autoclaim-a'))['AUTOCLAIM_STATE_URL']).toBe(env(service('autoclaim-b'))['AUTOCLAIM_STATE_URL']);
  });

  it('the demo config loads with that URL, and the daemon reads the password from the mounted secret', () => {
    const d = service('autoclaim-a');
    const demoEnv = Object.fromEntries(
      read('config/docker-demo.env')
        .split('\n')
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    ) as Record<string, string>;
    // Mounted as /run/secrets/<secret name>: the same file under the credential's name.
    const secrets = mkdtempSync(join(tmpdir(), 'autoclaim-secrets-'));
    try {
      copyFileSync(join(ROOT, compose.secrets['state_password']?.file ?? ''), join(secrets, 'state_password'));
      const processEnv = { ...demoEnv, ...env(d), CREDENTIALS_DIRECTORY: secrets, STATE_DIRECTORY: '/var/lib/autoclaim' };
      const result = loadConfig(join(ROOT, 'config', 'docker.example.yaml'), { env: processEnv, cwd: ROOT });
      expect(result.errors).toEqual([]);
      // TLS off on purpose, said in the URL: no warning at every start of the demo.
      expect(result.warnings.filter((w) => w.path === 'state.url')).toEqual([]);
      const config = result.config;
      if (config === undefined) throw new Error('no config');
      expect(config.state.url).toBe(env(d)['AUTOCLAIM_STATE_URL']);
      expect(resolveStatePassword(config, processEnv)).toBe(read(compose.secrets['state_password']?.file ?? '').trim());
    } finally {
      rmSync(secrets, { recursive: true, force: true });
    }
  });
});
