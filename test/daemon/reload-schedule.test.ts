// A reload that changes `schedule:` replaces the scheduler while the old one's turns still run.
// The new one must take those turns over: before, it started with none, so a wallet whose turn was
// held (here, its summary read waiting on the API) got a second turn at once from the new
// scheduler, two turns of one address side by side; and a stop waited only for the new one's.
// Driven in-process: a real runtime, state file and daemon over the in-process sandbox, the
// wallet's summary read held open by a gate in front of the real client.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

describe('a reload that changes the schedule', () => {
  let dir: string;
  let cleanup: () => void;
  let app: InProcess | undefined;

  beforeEach(() => {
    ({ dir, cleanup } = tempDir('autoclaim-reload-schedule-'));
  });
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    cleanup();
  });

  it('keeps one turn per wallet across the swap, and a stop waits for the old scheduler’s turn', async () => {
    const [wallet] = makeWallets(dir, ['alpha']) as [TestWallet];
    const configPath = join(dir, 'autoclaim.yaml');
    // No jitter: the first tick's turn starts at once.
    const yaml = (poll: string) => sandboxYaml([wallet]).replace('poll: "0 0 1 1 *"', `poll: "${poll}"\n  jitter: 0s`);
    writeFileSync(configPath, yaml('0 0 1 1 *'));
    const a = (app = await startInProcess({ dir, configPath }));
    const client = a.runtime.client;
    const read = client.walletSummary.bind(client);
    let reads = 0;
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    client.walletSummary = async (address) => {
      reads++;
      await held;
      return read(address);
    };

    await a.daemon.start();
    await expect.poll(() => reads).toBe(1);

    writeFileSync(configPath, yaml('0 0 2 1 *'));
    expect(a.daemon.reload()).toBe(true);
    expect(a.daemon.pollNow('all').polling).toEqual(['alpha']);
    await new Promise((r) => setTimeout(r, 50));
    expect(reads).toBe(1);
    expect(a.log.events('poll.overlap')).toHaveLength(1);

    // The old scheduler's turn is still running: a stop now does not call itself drained.
    expect(await a.daemon.stop(50)).toBe(false);
    release();
    // The held turn still finishes its claim: one, and one poll of the wallet behind it.
    await expect.poll(() => a.runtime.sandbox!.ledger().filter((e) => e.op === 'claim').length).toBe(1);
    expect(a.log.events('poll.ok')).toHaveLength(1);
  });
});
