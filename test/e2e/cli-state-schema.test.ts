// The commands that write the state file beside a running daemon (`actions resolve`, `send
// --cancel`) take no lock. After an upgrade the daemon still running is the old release, on the
// schema it knows; the new CLI opened the file writable, which migrates it, under that daemon: a
// version-1 file (keyed by wallet name) was re-keyed by address while the old daemon went on
// writing by name. As on PostgreSQL, they now open the file read-only first, which refuses a
// schema other than their own and changes nothing: the daemon's start migrates it, under its lock.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, type Lock } from '../../src/store/sqlite/lock.js';
import { writeV1State } from '../store/v1-state.js';
import { makeWallets, runCli, tempDir, writeConfig } from './helpers.js';

const userVersion = (file: string): number => {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return Number(db.pragma('user_version', { simple: true }));
  } finally {
    db.close();
  }
};

describe('a command that writes the state beside a running daemon of an older release', () => {
  let dir: string;
  let cleanup: () => void;
  let config: string;
  let dbPath: string;
  let lock: Lock | undefined;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir('autoclaim-cli-schema-'));
    config = writeConfig(dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets: makeWallets(dir, ['alpha']) });
    dbPath = join(dir, 'state', 'autoclaim.db');
    writeV1State(dbPath);
    // The old daemon, running: it holds the state lock.
    lock = acquireLock(dbPath);
  });
  afterEach(() => {
    lock?.release();
    cleanup();
  });

  it.each([
    ['actions resolve', ['actions', 'resolve', '1', '--applied']],
    ['send --cancel', ['send', '--cancel', '--id', 'topup-1']],
  ])('%s refuses, naming the schema, and leaves the file as it was', async (_label, argv) => {
    const r = await runCli([...argv, '--config', config], { cwd: dir });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/schema version 1; start the daemon once to migrate it/);
    expect(userVersion(dbPath)).toBe(1);
  });
});
