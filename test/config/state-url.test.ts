// state.url selects the PostgreSQL store (issue 15). The password never sits in the URL: a URL ends
// up in process listings, logs and shell history. $AUTOCLAIM_STATE_URL wins over the file.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BASE, TempDir, edit, formatted } from './helpers.js';

let dir: TempDir;
beforeEach(() => {
  dir = new TempDir();
});
afterEach(() => dir.remove());

const withState = (state: string) => edit(BASE, 'safety:\n', `state:\n${state}safety:\n`);

describe('state.url', () => {
  it('is off by default: SQLite at state.path, a 15 s lease', () => {
    dir.write('c.yaml', BASE);
    const { config } = dir.load('c.yaml');
    expect(config?.state).toMatchObject({ url: undefined, passwordFile: undefined, leaseMs: 15_000 });
    expect(config?.state.path).toMatch(/var\/autoclaim\.db$/);
  });

  it('takes a postgres URL, a password file beside the config and a lease', () => {
    dir.write('c.yaml', withState('  url: postgres://autoclaim@db.internal:5432/autoclaim?sslmode=verify-full\n  password_file: secrets/pg\n  lease: 30s\n'));
    const { config, errors } = dir.load('c.yaml');
    expect(errors).toEqual([]);
    expect(config?.state).toMatchObject({
      url: 'postgres://autoclaim@db.internal:5432/autoclaim?sslmode=verify-full',
      passwordFile: `${dir.path}/secrets/pg`,
      leaseMs: 30_000,
    });
  });

  it('takes a query deadline (10 s by default), and refuses one too short to be answered', () => {
    dir.write('c.yaml', BASE);
    expect(dir.load('c.yaml').config?.state.queryTimeoutMs).toBe(10_000);
    dir.write('d.yaml', withState('  url: postgres://a@one/x\n  query_timeout: 3s\n'));
    expect(dir.load('d.yaml').config?.state.queryTimeoutMs).toBe(3_000);
    dir.write('e.yaml', withState('  url: postgres://a@one/x\n  query_timeout: 100ms\n'));
    expect(formatted(dir.load('e.yaml')).errors).toEqual([expect.stringMatching(/state\.query_timeout.*must be at least 500ms/)]);
  });

  it('$AUTOCLAIM_STATE_URL wins over the file', () => {
    dir.write('c.yaml', withState('  url: postgres://a@one/x\n'));
    const { config } = dir.load('c.yaml', { AUTOCLAIM_STATE_URL: 'postgresql://b@two:6432/y' });
    expect(config?.state.url).toBe('postgresql://b@two:6432/y');
  });

  it.each([
    ['postgres://autoclaim:hunter2-hunter2@db/autoclaim', 'holds a password; remove it and use PGPASSWORD, state.password_file (mode 0600) or the systemd credential state_password'],
    ['postgres://autoclaim@db/autoclaim?password=hunter2', 'holds a password; remove it and use PGPASSWORD, state.password_file (mode 0600) or the systemd credential state_password'],
    ['mysql://autoclaim@db/autoclaim', 'scheme mysql: is not postgres: (expected postgres://user@host:port/database)'],
    ['postgres://autoclaim@db', 'names no database (postgres://user@host:port/database)'],
    ['db.internal:5432', 'scheme db.internal: is not postgres: (expected postgres://user@host:port/database)'],
    ['not a url', 'not a URL; expected postgres://user@host:port/database'],
  ])('refuses %s, naming file, line and key', (url, why) => {
    dir.write('c.yaml', withState(`  url: "${url}"\n`));
    const r = dir.load('c.yaml');
    expect(r.config).toBeUndefined();
    expect(formatted(r).errors).toEqual([`c.yaml:15:3 state.url: ${why}`]);
  });

  // A URL with no TLS asked (node-postgres never tries it unasked) would carry the state the
  // exactly-once guards read across the network in the clear, alterable on the way.
  it.each([
    ['postgres://a@db.internal/x', 'db.internal'],
    ['postgres://a@10.0.0.5:5432/x?application_name=c', '10.0.0.5'],
    ['postgres://a@localhost/x?host=db.internal', 'db.internal'],
  ])('warns of %s: it reaches another machine without TLS', (url, host) => {
    dir.write('c.yaml', withState(`  url: "${url}"\n`));
    const r = formatted(dir.load('c.yaml'));
    expect(r).toEqual({
      errors: [],
      warnings: [expect.stringMatching(new RegExp(`^c\\.yaml:15:3 state\\.url: reaches ${host.replace(/\./g, '\\.')} without TLS.*sslmode=verify-full`))],
    });
  });

  it.each([
    'postgres://a@db.internal/x?sslmode=verify-full',
    'postgres://a@db.internal/x?sslmode=require',
    'postgres://a@db.internal/x?sslmode=disable',
    'postgres://a@db.internal/x?ssl=true',
    'postgres://a@127.0.0.1:5432/x',
    'postgres://a@[::1]/x',
    'postgres://a@localhost/x',
    'postgresql:///x?host=/var/run/postgresql',
  ])('does not warn of %s (TLS asked, or said off, or this machine)', (url) => {
    dir.write('c.yaml', withState(`  url: "${url}"\n`));
    expect(formatted(dir.load('c.yaml'))).toEqual({ errors: [], warnings: [] });
  });

  it('says so when the URL without TLS came from the environment', () => {
    dir.write('c.yaml', BASE);
    const r = formatted(dir.load('c.yaml', { AUTOCLAIM_STATE_URL: 'postgres://a@db.internal/x' }));
    expect(r.warnings).toEqual([expect.stringContaining('$AUTOCLAIM_STATE_URL (from the environment): reaches db.internal without TLS')]);
  });

  it('says so when the bad URL came from the environment', () => {
    dir.write('c.yaml', BASE);
    const r = dir.load('c.yaml', { AUTOCLAIM_STATE_URL: 'postgres://u:secret-secret@h/db' });
    expect(formatted(r).errors).toHaveLength(1);
    expect(formatted(r).errors[0]).toContain('$AUTOCLAIM_STATE_URL (from the environment): holds a password');
    expect(formatted(r).errors[0]).not.toContain('secret-secret');
  });

  it('refuses a lease under 3 s', () => {
    dir.write('c.yaml', withState('  url: postgres://a@h/db?sslmode=verify-full\n  lease: 2s\n'));
    const r = dir.load('c.yaml');
    expect(formatted(r).errors).toEqual([
      'c.yaml:16:3 state.lease: must be at least 3s: a lease is renewed every third of it, and each renewal is a round trip to the database',
    ]);
  });

  // issue 25 finding 1: a claim judged not applied before its first request can no longer be
  // accepted may be applied twice; with shared state a paused daemon's request is that request.
  it('claim_settle: derived from ts_window when unset; shorter than ts_window + 1m is an error with state.url, a warning without', () => {
    dir.write('default.yaml', withState('  url: postgres://a@h/db?sslmode=verify-full\n'));
    const d = dir.load('default.yaml');
    expect(formatted(d)).toEqual({ errors: [], warnings: [] });
    expect(d.config?.api).toMatchObject({ tsWindowMs: 300_000, claimSettleMs: 360_000 });
    dir.write('window.yaml', edit(withState('  url: postgres://a@h/db?sslmode=verify-full\n'), 'v1\n', 'v1\n  ts_window: 30s\n'));
    // A window under a minute is its own margin: a service that far off our clock refuses everything.
    expect(dir.load('window.yaml').config?.api).toMatchObject({ tsWindowMs: 30_000, claimSettleMs: 60_000 });

    dir.write('short.yaml', edit(withState('  url: postgres://a@h/db?sslmode=verify-full\n'), 'v1\n', 'v1\n  claim_settle: 60s\n'));
    expect(formatted(dir.load('short.yaml')).errors).toEqual([
      expect.stringMatching(/^short\.yaml:\d+:\d+ api\.claim_settle: with shared state \(state\.url\), api\.claim_settle \(1m\) is shorter than api\.ts_window \+ 1m \(6m\)/),
    ]);
    dir.write('long.yaml', edit(withState('  url: postgres://a@h/db?sslmode=verify-full\n'), 'v1\n', 'v1\n  claim_settle: 6m\n'));
    expect(formatted(dir.load('long.yaml'))).toEqual({ errors: [], warnings: [] });
    dir.write('sqlite.yaml', edit(BASE, 'v1\n', 'v1\n  claim_settle: 60s\n'));
    const alone = formatted(dir.load('sqlite.yaml'));
    expect(alone.errors).toEqual([]);
    expect(alone.warnings).toEqual([expect.stringMatching(/^sqlite\.yaml:\d+:\d+ api\.claim_settle: api\.claim_settle \(1m\) is shorter than/)]);
  });
});
