// `autoclaim pause` with shared state (state.url): each host's daemon has its own pause record
// beside its own state.path (docs/operations.md: "pause every host"). The command told this host's
// daemon and said only "signing paused ... told the daemon" (exit 0): an operator pulling the kill
// switch in an incident read the cluster as paused while every other host's daemon signed on the
// wallets it holds. Still exit 0 (this host's daemon was told), but it says on stderr which were not.
import { EventEmitter } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { pauseCommand, resumeCommand } from '../../src/cli/commands/control.js';
import { makeContext } from '../../src/cli/context.js';
import type { CliIo } from '../../src/cli/io.js';
import { systemClock } from '../../src/domain.js';
import { controlPaths, writeDaemonInfo } from '../../src/service/control.js';
import { makeWallets, tempDir, writeConfig } from './helpers.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.text += chunk.toString();
    cb();
  }
}

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

it('says on stderr that only this host was paused when the state is shared', () => {
  const t = tempDir('autoclaim-pause-shared-');
  cleanup = t.cleanup;
  const config = writeConfig(t.dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets: makeWallets(t.dir, ['alpha']) });
  writeFileSync(config, readFileSync(config, 'utf8').replace('  path: ./state/autoclaim.db', '  url: postgres://autoclaim@127.0.0.1:9/autoclaim'));
  // This host's daemon (the test runner's process stands for it, not this one, whose pid is the
  // command's; the signal is recorded, not sent).
  const at = new Date(Date.UTC(2026, 10, 27)).toISOString();
  writeDaemonInfo(controlPaths(join(t.dir, 'var', 'autoclaim.db')), { pid: process.ppid, host: os.hostname(), started_at: at, updated_at: at, dry_run: false, signing: [] });
  const signals: string[] = [];
  const stdout = new Capture();
  const stderr = new Capture();
  const io: CliIo = { env: { USER: 'ops' }, cwd: t.dir, stdout, stderr, clock: systemClock, signals: new EventEmitter() };
  const code = pauseCommand(makeContext(io, { config }), { reason: 'incident' }, (_pid, s) => void signals.push(s));
  expect(signals).toEqual(['SIGUSR2']);
  expect(code).toBe(0);
  expect(stdout.text).toMatch(/told the daemon \(pid \d+\)/);
  expect(stderr.text).toMatch(/shared state \(state\.url\): only this host's daemon is paused; the daemons on other hosts go on signing .*pause each host/);
});

// Helper h29a (h28e's note): `resume` on shared state lifted this host's pause and said only "told
// the daemon" (exit 0): an operator lifting the kill switch read the cluster as resumed while every
// other host's daemon stayed paused.
it('says on stderr that only this host was resumed when the state is shared', () => {
  const t = tempDir('autoclaim-resume-shared-');
  cleanup = t.cleanup;
  const config = writeConfig(t.dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets: makeWallets(t.dir, ['alpha']) });
  writeFileSync(config, readFileSync(config, 'utf8').replace('  path: ./state/autoclaim.db', '  url: postgres://autoclaim@127.0.0.1:9/autoclaim'));
  const at = new Date(Date.UTC(2026, 10, 27)).toISOString();
  writeDaemonInfo(controlPaths(join(t.dir, 'var', 'autoclaim.db')), { pid: process.ppid, host: os.hostname(), started_at: at, updated_at: at, dry_run: false, signing: [] });
  const signals: string[] = [];
  const stdout = new Capture();
  const stderr = new Capture();
  const io: CliIo = { env: { USER: 'ops' }, cwd: t.dir, stdout, stderr, clock: systemClock, signals: new EventEmitter() };
  const code = resumeCommand(makeContext(io, { config }), (_pid, s) => void signals.push(s));
  expect(signals).toEqual(['SIGUSR2']);
  expect(code).toBe(0);
  expect(stderr.text).toMatch(/shared state \(state\.url\): only this host's daemon is resumed; the daemons on other hosts stay paused: resume each host/);
});
