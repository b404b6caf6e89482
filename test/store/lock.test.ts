// The single-instance lock, across real processes. The child runs the real acquireLock: lock.ts and
// what it imports are transpiled to CommonJS in a temp dir and resolve better-sqlite3 via NODE_PATH.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { acquireLock, lockPaths, type Lock } from '../../src/store/index.js';
import { open, tempDir, type TempDir } from './fixtures.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let build: string;
let tmp: TempDir;
const children: ChildProcess[] = [];
const locks: Lock[] = [];

beforeAll(() => {
  build = fs.mkdtempSync(path.join(os.tmpdir(), 'autoclaim-lock-build-'));
  fs.writeFileSync(path.join(build, 'package.json'), '{"type":"commonjs"}');
  for (const rel of ['errors.ts', 'store/sqlite/files.ts', 'store/sqlite/lock.ts']) {
    const source = fs.readFileSync(path.join(ROOT, 'src', rel), 'utf8');
    const out = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    });
    const file = path.join(build, rel.replace(/\.ts$/, '.js'));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, out.outputText);
  }
});
afterAll(() => {
  fs.rmSync(build, { recursive: true, force: true });
});
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const l of locks.splice(0)) l.release();
  tmp.cleanup();
});

const CHILD = `
const { acquireLock } = require(process.argv[1] + '/store/sqlite/lock.js');
try {
  acquireLock(process.argv[2]);
  process.stdout.write('locked\\n');
  setInterval(() => {}, 1000);
} catch (err) {
  process.stdout.write(JSON.stringify({ code: err.code, message: err.message }) + '\\n');
  process.exit(3);
}`;

/** Starts a child that tries the lock; resolves with its first line of output. */
function child(dbPath: string): Promise<{ proc: ChildProcess; line: string }> {
  const proc = spawn(process.execPath, ['-e', CHILD, build, dbPath], {
    env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ proc, line: out.slice(0, nl) });
    });
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    proc.on('exit', (code) => reject(new Error(`child exited ${code} before answering: ${err}`)));
  });
}

function exited(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => proc.once('exit', () => resolve()));
}

function take(dbPath: string): Lock {
  const lock = acquireLock(dbPath);
  locks.push(lock);
  return lock;
}

function lockError(dbPath: string): StateError {
  try {
    take(dbPath);
  } catch (err) {
    expect(err).toBeInstanceOf(StateError);
    return err as StateError;
  }
  throw new Error('expected the lock to be refused');
}

describe('acquireLock', () => {
  it('refuses a second holder in another process, naming the holder and the lock file', async () => {
    const { proc, line } = await child(tmp.dbPath);
    expect(line).toBe('locked');
    const err = lockError(tmp.dbPath);
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain(`pid ${proc.pid}`);
    expect(err.message).toContain(os.hostname());
    expect(err.message).toContain(lockPaths(tmp.dbPath).lock);
    expect(err.message).toMatch(/started \d{4}-\d\d-\d\dT/);
  });

  it('is released by the kernel when the holder is SIGKILLed', async () => {
    const { proc, line } = await child(tmp.dbPath);
    expect(line).toBe('locked');
    expect(lockError(tmp.dbPath).code).toBe('STATE_LOCKED');
    proc.kill('SIGKILL');
    await exited(proc);
    const lock = take(tmp.dbPath);
    expect(lock.holder.pid).toBe(process.pid);
    // The sidecar now names us, not the dead process.
    expect(JSON.parse(fs.readFileSync(lockPaths(tmp.dbPath).info, 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('held here, it is refused to another process, which reads who holds it', async () => {
    take(tmp.dbPath);
    const { line } = await child(tmp.dbPath).catch((e: Error) => ({ line: e.message }));
    expect(JSON.parse(line)).toMatchObject({ code: 'STATE_LOCKED' });
    expect(line).toContain(`pid ${process.pid}`);
  });

  it('within one process a second acquire is refused too, and release hands it on', () => {
    const first = take(tmp.dbPath);
    expect(lockError(tmp.dbPath).code).toBe('STATE_LOCKED');
    first.release();
    first.release(); // idempotent
    expect(fs.existsSync(lockPaths(tmp.dbPath).info)).toBe(false);
    expect(take(tmp.dbPath).holder.pid).toBe(process.pid);
  });

  it('creates the directory 0700 and the lock files 0600', () => {
    take(tmp.dbPath);
    const modeOf = (p: string) => fs.statSync(p).mode & 0o777;
    expect(modeOf(path.dirname(tmp.dbPath))).toBe(0o700);
    expect(modeOf(lockPaths(tmp.dbPath).lock)).toBe(0o600);
    expect(modeOf(lockPaths(tmp.dbPath).info)).toBe(0o600);
  });

  it('does not lock the state database itself: readers and writers open it beside the holder', async () => {
    const { line } = await child(tmp.dbPath);
    expect(line).toBe('locked');
    const writer = open(tmp.dbPath);
    writer.recordPoll('w', 'A', 1, { ok: false, error: 'x' });
    const reader = open(tmp.dbPath, { readonly: true });
    expect(reader.walletStates()).toHaveLength(1);
    reader.close();
    writer.close();
  });

  it('says "holder unknown" when the sidecar is missing', async () => {
    const { line } = await child(tmp.dbPath);
    expect(line).toBe('locked');
    fs.rmSync(lockPaths(tmp.dbPath).info);
    expect(lockError(tmp.dbPath).message).toContain('holder unknown');
  });
});

describe('acquireLock: one lock per file, however its path is spelled', () => {
  /** The state directory made, and a symlink to it beside it. */
  function aliases(): { viaDirLink: string; viaFileLink: string; viaDotDot: string } {
    const stateDir = path.dirname(tmp.dbPath);
    fs.mkdirSync(stateDir, { recursive: true });
    fs.symlinkSync(stateDir, path.join(tmp.dir, 'linked-state'));
    fs.symlinkSync(tmp.dbPath, path.join(tmp.dir, 'alias.db'));
    return {
      viaDirLink: path.join(tmp.dir, 'linked-state', 'autoclaim.db'),
      viaFileLink: path.join(tmp.dir, 'alias.db'),
      // Not path.join: that would fold the `..` away before the lock ever saw it.
      viaDotDot: `${stateDir}/../state/./autoclaim.db`,
    };
  }

  it.each(['viaDirLink', 'viaFileLink', 'viaDotDot'] as const)('held under the real path, is refused %s', (spelling) => {
    const other = aliases()[spelling];
    take(tmp.dbPath);
    const err = lockError(other);
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain(lockPaths(tmp.dbPath).lock);
    expect(err.message).toContain(`pid ${process.pid}`);
  });

  it('held through a spelling, is refused under the real path, and names the real file', () => {
    const { viaDirLink, viaDotDot } = aliases();
    const real = path.join(fs.realpathSync(path.dirname(tmp.dbPath)), 'autoclaim.db');
    const lock = take(viaDirLink);
    expect(lock.path).toBe(`${real}.lock`);
    expect(lock.holder.db).toBe(real);
    expect(lockError(tmp.dbPath).code).toBe('STATE_LOCKED');
    expect(lockError(viaDotDot).code).toBe('STATE_LOCKED');
    // No lock file beside the other spellings: there is one lock, by the real file.
    expect(fs.readdirSync(tmp.dir).filter((f) => f.endsWith('.lock'))).toEqual([]);
  });

  it('across processes: a child holding the real path keeps out a symlinked spelling, and back', async () => {
    const { viaDirLink } = aliases();
    const { proc, line } = await child(viaDirLink);
    expect(line).toBe('locked');
    const err = lockError(tmp.dbPath);
    expect(err.code).toBe('STATE_LOCKED');
    expect(err.message).toContain(`pid ${proc.pid}`);
    proc.kill('SIGKILL');
    await exited(proc);
    take(tmp.dbPath);
    const { line: refused } = await child(viaDirLink).catch((e: Error) => ({ line: e.message }));
    expect(JSON.parse(refused)).toMatchObject({ code: 'STATE_LOCKED' });
  });

  it('`link/..` means what the kernel means: the parent of the link’s target, not of the link', () => {
    // a/hop -> b/deep, so a/hop/../x.db is b/x.db (a lexical fold would say a/x.db).
    fs.mkdirSync(path.join(tmp.dir, 'a'));
    fs.mkdirSync(path.join(tmp.dir, 'b', 'deep'), { recursive: true });
    fs.symlinkSync(path.join(tmp.dir, 'b', 'deep'), path.join(tmp.dir, 'a', 'hop'));
    take(path.join(tmp.dir, 'b', 'x.db'));
    expect(lockError(`${tmp.dir}/a/hop/../x.db`).code).toBe('STATE_LOCKED');
    take(path.join(tmp.dir, 'a', 'x.db')); // a different file: its own lock
  });

  it('a dangling symlink locks the file it will create', () => {
    const target = path.join(tmp.dir, 'later', 'state.db');
    fs.mkdirSync(path.dirname(tmp.dbPath), { recursive: true });
    fs.symlinkSync(target, tmp.dbPath);
    const lock = take(tmp.dbPath);
    expect(lock.path).toBe(`${fs.realpathSync(tmp.dir)}/later/state.db.lock`);
    expect(lockError(target).code).toBe('STATE_LOCKED');
  });
});
