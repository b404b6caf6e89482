// `autoclaim pause` when a daemon runs on the state but cannot be signalled (run as another user:
// EPERM). The daemon reads the pause record only at start and at SIGUSR2, so it goes on signing;
// the command said "signing paused" and exited 0, and the operator pulling the kill switch in an
// incident believed it held. It now exits 1 and says the running daemon was not told.
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pauseCommand, resumeCommand } from '../../src/cli/commands/control.js';
import { makeContext } from '../../src/cli/context.js';
import type { CliIo } from '../../src/cli/io.js';
import { systemClock } from '../../src/domain.js';
import { controlPaths, readPause, writeDaemonInfo } from '../../src/service/control.js';
import { makeWallets, tempDir, writeConfig } from './helpers.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.text += chunk.toString();
    cb();
  }
}

describe('autoclaim pause that cannot reach the running daemon', () => {
  let dir: string;
  let cleanup: () => void;
  let config: string;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir('autoclaim-pause-eperm-'));
    config = writeConfig(dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets: makeWallets(dir, ['alpha']) });
    // A daemon running on this state, on this host: the test runner's process stands for it (not this
    // one: a file naming the command's own pid is no daemon's).
    const paths = controlPaths(join(dir, 'state', 'autoclaim.db'));
    const at = new Date().toISOString();
    writeDaemonInfo(paths, { pid: process.ppid, host: os.hostname(), started_at: at, updated_at: at, dry_run: false, signing: [] });
  });
  afterEach(() => cleanup());

  const eperm = (): never => {
    throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
  };
  const run = (fn: (ctx: ReturnType<typeof makeContext>) => number) => {
    const stdout = new Capture();
    const stderr = new Capture();
    const io: CliIo = { env: { USER: 'ops' }, cwd: dir, stdout, stderr, clock: systemClock, signals: new EventEmitter() };
    const code = fn(makeContext(io, { config }));
    return { code, out: stdout.text + stderr.text };
  };

  it('exits 1 and says the daemon goes on signing until told; the record is still written', () => {
    const r = run((ctx) => pauseCommand(ctx, { reason: 'incident' }, eperm));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/not allowed to signal pid \d+/);
    expect(r.out).toMatch(/the running daemon (pid \d+ )?was NOT told/);
    expect(readPause(controlPaths(join(dir, 'state', 'autoclaim.db')))?.paused).toBe(true);
  });

  it('resume likewise: the running daemon stays paused until told', () => {
    const r = run((ctx) => resumeCommand(ctx, eperm));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/was NOT told/);
  });
});
