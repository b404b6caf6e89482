// The daemon's control file names a pid that `poll`, `pause` and `resume` signal, run as root too.
// The daemon writes that file: a pid that is not a process of the file's owner is not taken for it.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { controlPaths, readDaemonInfo, writeDaemonInfo } from '../../src/service/control.js';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '../e2e/helpers.js';

describe('the daemon control file names a pid', () => {
  const t = tempDir('autoclaim-control-owner-');
  let other: ChildProcess | undefined;
  afterAll(() => {
    other?.kill('SIGKILL');
    t.cleanup();
  });

  const info = (pid: number) => ({ pid, host: hostname(), started_at: '', updated_at: '', dry_run: false, signing: [] });

  it.skipIf(process.platform !== 'linux')('of another user than the file’s: not a daemon of this state, never signalled', () => {
    const paths = controlPaths(join(t.dir, 'state.db'));
    // A process of another user: as root, one started as nobody; else pid 1 (root's).
    let pid = 1;
    if (process.getuid?.() === 0) {
      other = spawn('sleep', ['60'], { uid: 65534, gid: 65534, stdio: 'ignore' });
      pid = other.pid ?? 1;
    }
    writeDaemonInfo(paths, info(pid));
    expect(readDaemonInfo(paths)?.alive).toBe(false);
    // Its own: alive.
    writeDaemonInfo(paths, info(process.pid));
    expect(readDaemonInfo(paths)?.alive).toBe(true);
  });
});
