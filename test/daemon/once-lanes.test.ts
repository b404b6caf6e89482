// `once` gives every wallet one turn, at most `concurrency` at a time, and one wallet's turn that
// throws costs the others nothing: a real runtime against the in-process sandbox, with the daemon's
// runWallet watched (and one wallet's turn made to throw) to see what overlaps.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeWallets, tempDir } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

describe('once', () => {
  let app: InProcess | undefined;
  let cleanup = (): void => {};
  afterEach(async () => {
    await app?.stop();
    cleanup();
  });

  it('runs each wallet once, at most `concurrency` at a time, and counts a turn that throws as crashed', async () => {
    let dir: string;
    ({ dir, cleanup } = tempDir('autoclaim-once-lanes-'));
    const names = ['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6'];
    const configPath = join(dir, 'autoclaim.yaml');
    writeFileSync(configPath, sandboxYaml(makeWallets(dir, names)));
    app = await startInProcess({ dir, configPath, level: 'info', concurrency: 3 });
    const { daemon } = app;

    const turns: string[] = [];
    let inFlight = 0;
    let most = 0;
    const real = daemon.runWallet.bind(daemon);
    vi.spyOn(daemon, 'runWallet').mockImplementation(async (name) => {
      turns.push(name);
      most = Math.max(most, ++inFlight);
      try {
        // A turn of its own on the event loop first, so that turns started together overlap.
        await new Promise((resolve) => setImmediate(resolve));
        if (name === 'w2') throw new Error('a bug in one wallet');
        return await real(name);
      } finally {
        inFlight--;
      }
    });

    const report = await daemon.once();
    expect(turns.slice().sort()).toEqual(names);
    expect(most).toBe(3);
    expect(report).toMatchObject({ wallets: 7, polled: 6, failed: 0, unknown: 0, pending: 0, crashed: 1 });
    expect(app.log.events('wallet.failed').map((e) => e['wallet'])).toEqual(['w2']);
  });
});
