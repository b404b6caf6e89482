// `autoclaim pause` that cannot reach the daemon must not read as if it held.
// Run where no state is: a config without `state.path` puts the state in
// $STATE_DIRECTORY under systemd but in ./var under the directory a command runs in, so the
// runbook's `sudo autoclaim pause --config /etc/autoclaim/autoclaim.yaml` from a shell recorded
// the pause beside a state that does not exist, found no daemon, and said only "signing paused"
// (exit 0) while the service signed on. Pausing before a first start stays allowed (exit 0); the
// command must say, on stderr, that no state is there and why the service may not be paused.
// Run from another host or container on the same state (`docker compose run --rm autoclaim pause`
// beside the compose daemon: a new container, another hostname), it found the daemon's file, took
// it for no daemon "here", and said "paused" (exit 0) while the daemon, never signalled, signed on.
// Run on the daemon's host while its pid is alive but not the daemon file's owner's (a daemon run as
// root on a state directory another user owns: its file is handed to that owner, control.ts), it
// took the daemon for none and said "paused" (exit 0) too.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxYaml } from '../daemon/in-process.js';
import { controlPaths, pidNamespace, writeDaemonInfo } from '../../src/service/control.js';
import { makeWallets, runCli, tempDir, type TestWallet } from './helpers.js';

describe('autoclaim pause where no state file is', () => {
  let cleanup: (() => void) | undefined;
  afterEach(() => cleanup?.());

  it('records the pause but warns that no state is there, naming state.path', async () => {
    const t = tempDir('autoclaim-pause-path-');
    cleanup = t.cleanup;
    const [w] = makeWallets(t.dir, ['alpha']) as [TestWallet];
    const config = join(t.dir, 'autoclaim.yaml');
    // No state.path: the default, which depends on where the command runs.
    writeFileSync(config, sandboxYaml([w], { threshold: '1' }).replace(/^state:\n {2}path: .*\n/m, ''));
    const paused = await runCli(['pause', '--reason', 'incident', '--config', config], { cwd: t.dir, env: { USER: 'ops' } });
    expect(paused.code).toBe(0);
    expect(paused.stdout).toMatch(/^signing paused by ops@/);
    expect(paused.stderr).toMatch(/no state file at .*autoclaim\.db: if autoclaim runs elsewhere .*it was NOT paused.*state\.path/s);
  });

  // Helper h29a: `resume` from the same shell said "no daemon is running on this state here" (exit
  // 0) and nothing more, while the service, paused through its own state, stayed paused: claims
  // stopped for as long as nobody looked again.
  it('resume likewise warns that no state is there, naming state.path', async () => {
    const t = tempDir('autoclaim-resume-path-');
    cleanup = t.cleanup;
    const [w] = makeWallets(t.dir, ['alpha']) as [TestWallet];
    const config = join(t.dir, 'autoclaim.yaml');
    writeFileSync(config, sandboxYaml([w], { threshold: '1' }).replace(/^state:\n {2}path: .*\n/m, ''));
    const resumed = await runCli(['resume', '--config', config], { cwd: t.dir, env: { USER: 'ops' } });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/no state file at .*autoclaim\.db: if autoclaim runs elsewhere .*it was NOT resumed.*state\.path .*resume again/s);
  });

  it('exits 1, NOT told, when the daemon that last wrote its file runs on another host', async () => {
    const t = tempDir('autoclaim-pause-host-');
    cleanup = t.cleanup;
    const [w] = makeWallets(t.dir, ['alpha']) as [TestWallet];
    const config = join(t.dir, 'autoclaim.yaml');
    writeFileSync(config, sandboxYaml([w], { threshold: '1' }));
    mkdirSync(join(t.dir, 'state'), { mode: 0o700 });
    const at = new Date(Date.UTC(2026, 10, 27)).toISOString();
    writeDaemonInfo(controlPaths(join(t.dir, 'state', 'autoclaim.db')), { pid: 7, host: 'a1b2c3d4e5f6', started_at: at, updated_at: at, dry_run: false, signing: [] });
    const paused = await runCli(['pause', '--config', config], { cwd: t.dir, env: { USER: 'ops' } });
    expect(paused.code).toBe(1);
    expect(paused.stdout).toMatch(/a daemon on host a1b2c3d4e5f6 \(pid 7, .*\) may be running on this state; it cannot be signalled from here/);
    expect(paused.stderr).toMatch(/the running daemon was NOT told/);
  });

  // A live process standing for the daemon's pid (killed after each test).
  let other: ChildProcess | undefined;
  afterEach(() => void other?.kill('SIGKILL'));

  // Helper h29a: the host check (h28e) tells another container by its hostname, but containers
  // that share the host's name (host networking; a hostname set alike) each number their own
  // processes. The pid the file names was taken as this namespace's: a live process of the same
  // user there was signalled (SIGUSR2 ends one that does not listen: `sleep` here; under tini, pid
  // 7 is often this very command), "told the daemon", exit 0, while the daemon signed on.
  it.skipIf(process.platform !== 'linux')('exits 1, NOT told, and signals nothing when the daemon that wrote its file numbers its pids in another namespace', async () => {
    const t = tempDir('autoclaim-pause-pidns-');
    cleanup = t.cleanup;
    const [w] = makeWallets(t.dir, ['alpha']) as [TestWallet];
    const config = join(t.dir, 'autoclaim.yaml');
    writeFileSync(config, sandboxYaml([w], { threshold: '1' }));
    mkdirSync(join(t.dir, 'state'), { mode: 0o700 });
    // This namespace's process under the pid the daemon's namespace gave its daemon: ours, so it can be signalled.
    const bystander = spawn('sleep', ['60'], { stdio: 'ignore' });
    other = bystander;
    const ended = new Promise<NodeJS.Signals | null>((resolve) => bystander.on('exit', (_code, signal) => resolve(signal)));
    const at = new Date(Date.UTC(2026, 10, 27)).toISOString();
    writeDaemonInfo(controlPaths(join(t.dir, 'state', 'autoclaim.db')), { pid: bystander.pid!, host: hostname(), pid_ns: 'pid:[4026532999]', started_at: at, updated_at: at, dry_run: false, signing: [] });
    const paused = await runCli(['pause', '--config', config], { cwd: t.dir, env: { USER: 'ops' } });
    expect(paused.stdout).toMatch(/a daemon in another pid namespace \(pid:\[4026532999\]\) under this host's name \(pid \d+, .*\) may be running on this state; it cannot be signalled from here/);
    expect(paused.stderr).toMatch(/the running daemon was NOT told/);
    expect(paused.code).toBe(1);
    bystander.kill('SIGKILL');
    expect(await ended).toBe('SIGKILL');
  });

  // A process of another user than the file's: as root, one started as nobody; else pid 1 (root's).
  it.skipIf(process.platform !== 'linux')('exits 1, NOT told, when the pid its file names runs here as another user than the file\'s', async ({ skip }) => {
    // Not root and pid 1 is ours (a container run as one user): no process of another user to name,
    // and naming ours would really signal it.
    if (process.getuid?.() !== 0 && statSync('/proc/1').uid === process.getuid?.()) skip();
    const t = tempDir('autoclaim-pause-owner-');
    cleanup = t.cleanup;
    const [w] = makeWallets(t.dir, ['alpha']) as [TestWallet];
    const config = join(t.dir, 'autoclaim.yaml');
    writeFileSync(config, sandboxYaml([w], { threshold: '1' }));
    mkdirSync(join(t.dir, 'state'), { mode: 0o700 });
    let pid = 1;
    if (process.getuid?.() === 0) {
      other = spawn('sleep', ['60'], { uid: 65534, gid: 65534, stdio: 'ignore' });
      pid = other.pid ?? 1;
    }
    const at = new Date(Date.UTC(2026, 10, 27)).toISOString();
    writeDaemonInfo(controlPaths(join(t.dir, 'state', 'autoclaim.db')), { pid, host: hostname(), started_at: at, updated_at: at, dry_run: false, signing: [] });
    const paused = await runCli(['pause', '--config', config], { cwd: t.dir, env: { USER: 'ops' } });
    expect(paused.code).toBe(1);
    expect(paused.stdout).toMatch(new RegExp(`pid ${pid} runs here as another user than .*daemon\\.json's owner; not signalled`));
    expect(paused.stderr).toMatch(/the running daemon was NOT told/);
  });

  // A namespace's number is handed out again once it is freed (checked here: three `unshare --pid`
  // in a row read the same pid:[…]), and a container numbers its processes alike at every start
  // (tini 1, node 7). So the file a daemon left when its container was killed can name, in a new
  // container under the same host name, this namespace and this very command's pid: it was
  // signalled, and `poll` said it "asked the daemon" (exit 0) with no daemon running.
  it.skipIf(process.platform !== 'linux')('takes a file naming this command\'s own pid, in its own namespace, for no daemon: poll exits 1, not "asked the daemon"', async () => {
    const t = tempDir('autoclaim-poll-self-');
    cleanup = t.cleanup;
    const [w] = makeWallets(t.dir, ['alpha']) as [TestWallet];
    const config = join(t.dir, 'autoclaim.yaml');
    writeFileSync(config, sandboxYaml([w], { threshold: '1' }));
    mkdirSync(join(t.dir, 'state'), { mode: 0o700 });
    const at = new Date(Date.UTC(2026, 10, 27)).toISOString();
    writeDaemonInfo(controlPaths(join(t.dir, 'state', 'autoclaim.db')), { pid: process.pid, host: hostname(), pid_ns: pidNamespace(), started_at: at, updated_at: at, dry_run: false, signing: [] });
    const hear = (): void => {}; // keeps Node's inspector shut, were this process signalled
    process.on('SIGUSR1', hear);
    try {
      const polled = await runCli(['poll', '--config', config], { cwd: t.dir, env: { USER: 'ops' } });
      expect({ code: polled.code, stdout: polled.stdout, stderr: polled.stderr }).toEqual({ code: 1, stdout: '', stderr: expect.stringContaining('no daemon is running on this state here') as unknown });
    } finally {
      process.off('SIGUSR1', hear);
    }
  });
});
