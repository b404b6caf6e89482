// The PostgreSQL journal's password, read as the daemon reads its own state.url password:
// $PGPASSWORD, else state.password_file (mode 0600), else the credential state_password; never in
// the URL; registered with the redactor once read. Against a cluster that requires one.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSignerConfig } from '../../src/signer/config.js';
import { openSignerJournal } from '../../src/signer/journal-open.js';
import { captureLog } from '../support/log.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { signerSetup, type SignerSetup } from './support.js';

const PASSWORD = 'pw-canary-signer-7731';

describe('the PostgreSQL journal’s password', () => {
  let cluster: PostgresCluster;
  let url: string;
  const setups: SignerSetup[] = [];

  beforeAll(async () => {
    cluster = await startPostgres({ password: PASSWORD });
    url = await cluster.createDatabase('journal');
  }, 60_000);

  afterAll(async () => {
    await cluster.stop();
    for (const s of setups) s.cleanup();
  });

  async function opens(state: string, env: NodeJS.ProcessEnv, prepare: (dir: string) => void = () => undefined): Promise<string> {
    const setup = signerSetup({ state });
    setups.push(setup);
    prepare(setup.dir);
    const log = captureLog('debug');
    const loaded = loadSignerConfig(setup.configFile, { env, cwd: setup.dir });
    expect(loaded.errors).toEqual([]);
    try {
      const journal = await openSignerJournal(loaded.config!, { env, redactor: log.redactor, logger: log.logger });
      await journal.records();
      await journal.close();
      // Once read, the password is a secret: whatever leaves through the redactor hides it.
      expect(log.redactor.redact(`x ${PASSWORD} y`)).not.toContain(PASSWORD);
      return 'opened';
    } catch (err) {
      expect(String(err)).not.toContain(PASSWORD);
      return (err as { code?: string }).code ?? 'error';
    }
  }

  it('from state.password_file (mode 0600, relative to signer.yaml)', async () => {
    const write = (dir: string) => {
      mkdirSync(join(dir, 'secrets'));
      writeFileSync(join(dir, 'secrets', 'pg'), `${PASSWORD}\n`, { mode: 0o600 });
    };
    expect(await opens(`url: ${url}\n  password_file: ./secrets/pg`, {}, write)).toBe('opened');
  }, 30_000);

  it('from $PGPASSWORD', async () => {
    expect(await opens(`url: ${url}`, { PGPASSWORD: PASSWORD })).toBe('opened');
  }, 30_000);

  it('refuses a password file others can read, and fails closed without a password', async () => {
    const loose = (dir: string) => {
      writeFileSync(join(dir, 'pg'), PASSWORD);
      chmodSync(join(dir, 'pg'), 0o644);
    };
    expect(await opens(`url: ${url}\n  password_file: ./pg`, {}, loose)).not.toBe('opened');
    expect(await opens(`url: ${url}`, {})).toBe('STATE_IO');
  }, 30_000);
});
