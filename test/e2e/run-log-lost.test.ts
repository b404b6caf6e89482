// A `run` whose stdout can no longer be written (the reader of `autoclaim run | …` gone; under
// systemd, journald's end of the stream; under Docker, the runtime's) stops, exit 1, and says why
// on stderr. pino drops every line after an EPIPE on its own and says nothing, so the daemon went on
// polling, claiming and depositing with no log line at all (helper h29c saw 22 plans so), and no
// supervisor heard of it: exit 1 is what Restart=on-failure and a container's restart policy act on,
// and the start after it has a stream of its own.
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { buildOnce } from './build.js';
import { makeWallets, spawnCli, tempDir, writeConfig, type Child, type TestWallet } from './helpers.js';

beforeAll(() => buildOnce(), 120_000);

describe('run with its stdout gone', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  let child: Child | undefined;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    wallets = makeWallets(dir, ['alpha']);
    sandbox = await startSandbox({ apiKey: 'canary-apikey-7Qk2ZxW9pLmN4vR8sT1u', defaultAccrualLamportsPerSec: 0n, wallets: [{ address: wallets[0]!.address, pendingLamports: 0n, accrualLamportsPerSec: 0n }] });
  });

  afterEach(async () => {
    await child?.stop();
    await sandbox.close();
    cleanup();
  });

  it('stops, exit 1, saying so on stderr, rather than claim and deposit with no log line', async () => {
    const config = writeConfig(dir, { baseUrl: sandbox.url, wallets });
    const c = (child = spawnCli(['run', '--config', config], { cwd: dir }));
    await c.waitFor((e) => e.event === 'daemon.started');
    c.proc.stdout?.destroy(); // the reader leaves: the daemon's next line meets EPIPE
    // Something to act on from the next turn (every second), with no one reading what it says.
    sandbox.world.setWallet(wallets[0]!.address, { pendingLamports: 1_000_000_000n });
    const { code } = await c.exited;
    expect({ code, stderr: c.stderr() }).toEqual({ code: 1, stderr: expect.stringContaining('stdout') as unknown });
  }, 30_000);
});
