// `autoclaim pause` run where no state is: a config without `state.path` puts the state in
// $STATE_DIRECTORY under systemd but in ./var under the directory a command runs in, so the
// runbook's `sudo autoclaim pause --config /etc/autoclaim/autoclaim.yaml` from a shell recorded
// the pause beside a state that does not exist, found no daemon, and said only "signing paused"
// (exit 0) while the service signed on. Pausing before a first start stays allowed (exit 0); the
// command must say, on stderr, that no state is there and why the service may not be paused.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxYaml } from '../daemon/in-process.js';
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
});
