// `sudo autoclaim pause`, `resume` and `poll` (docs/operations.md) write their records into the
// service's state directory, which belongs to the daemon's user (DynamicUser=yes, a fixed User=,
// the image's node): the daemon must be able to read what root wrote there, and root must not be
// steered by what that user left in it.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { controlPaths, writePause, writePollRequest } from '../../src/service/control.js';
import { writeFileAtomic } from '../../src/store/sqlite/files.js';
import { tempDir } from '../e2e/helpers.js';

const NOBODY = 65534;
const asRoot = process.platform === 'linux' && process.getuid?.() === 0;

describe.skipIf(!asRoot)('control records written by root into the daemon’s state directory', () => {
  const t = tempDir('autoclaim-control-root-');
  afterAll(() => t.cleanup());
  chmodSync(t.dir, 0o711);

  function stateOfNobody(name: string): string {
    const dir = join(t.dir, name);
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, NOBODY, NOBODY);
    return join(dir, 'autoclaim.db');
  }
  const readableByNobody = (file: string) => spawnSync('cat', [file], { uid: NOBODY, gid: NOBODY, stdio: 'ignore' }).status === 0;
  const who = { user: 'ops', host: 'bastion', at: Date.UTC(2026, 10, 27) };

  it('a pause, and the resume that lifts it, are readable by the daemon: else it stays paused after the resume (the record unreadable counts as paused)', () => {
    const paths = controlPaths(stateOfNobody('pause'));
    writePause(paths, { paused: true, ...who });
    expect(readableByNobody(paths.pause)).toBe(true);
    writePause(paths, { paused: false, ...who });
    expect(readableByNobody(paths.pause)).toBe(true);
    expect(statSync(paths.pause).mode & 0o077).toBe(0);
  });

  it('a poll request is readable by the daemon', () => {
    const paths = controlPaths(stateOfNobody('poll'));
    writePollRequest(paths, ['treasury'], who);
    expect(readableByNobody(paths.poll)).toBe(true);
  });

  it('never writes through a link the directory’s owner put at its temporary name', () => {
    const paths = controlPaths(stateOfNobody('link'));
    const victim = join(t.dir, 'root-only');
    writeFileSync(victim, 'root’s\n', { mode: 0o600 });
    // The daemon's user owns the directory and can guess the name (the pid of `sudo autoclaim`).
    symlinkSync(victim, `${paths.pause}.${process.pid}.tmp`);
    try {
      writePause(paths, { paused: true, ...who });
    } catch {
      // Refusing is as good as writing elsewhere; what matters is the file it points at.
    }
    expect(readFileSync(victim, 'utf8')).toBe('root’s\n');
  });
});

describe('the state lock’s holder record (store/sqlite/files.ts)', () => {
  const t = tempDir('autoclaim-atomic-link-');
  afterAll(() => t.cleanup());

  it('is never written through a link left at its temporary name, nor kept at another mode', () => {
    const file = join(t.dir, 'autoclaim.db.lock.json');
    const victim = join(t.dir, 'elsewhere');
    writeFileSync(victim, 'kept\n', { mode: 0o600 });
    symlinkSync(victim, `${file}.${process.pid}.tmp`);
    writeFileAtomic(file, '{}\n');
    expect(readFileSync(victim, 'utf8')).toBe('kept\n');
    expect(readFileSync(file, 'utf8')).toBe('{}\n');
    // A stale temporary file (a crash between write and rename) left open to others.
    writeFileSync(`${file}.${process.pid}.tmp`, 'stale', { mode: 0o644 });
    chmodSync(`${file}.${process.pid}.tmp`, 0o644);
    writeFileAtomic(file, '{"a":1}\n');
    expect(statSync(file).mode & 0o077).toBe(0);
  });
});
