// A reload that changes `schedule:` mid-tick must not drop the polls of that tick not yet started.
// The old scheduler's stop cleared their timers, and the new one's first tick was the new
// schedule's next time: those wallets skipped the interval (close to two intervals between polls),
// and over the rate budget a whole round more, since the planner had counted them as polled.
// Driven in-process on a clock that reads 23:59:50 UTC when the daemon starts, so that a daily
// schedule's first interval is 10 s whatever the hour the test runs at: the second and third
// wallets' polls come 3 s and 6 s into the tick, the reload comes before them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/domain.js';
import { makeWallets, tempDir } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

describe('a reload that changes the schedule mid-tick', () => {
  let dir: string;
  let cleanup: () => void;
  let app: InProcess | undefined;

  beforeEach(() => {
    ({ dir, cleanup } = tempDir('autoclaim-reload-schedule-tick-'));
  });
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    cleanup();
  });

  it('polls the wallets of the tick not yet polled, under the new schedule', async () => {
    const wallets = makeWallets(dir, ['alpha', 'beta', 'gamma']);
    const configPath = join(dir, 'autoclaim.yaml');
    const yaml = (poll: string) => sandboxYaml(wallets).replace('poll: "0 0 1 1 *"', `poll: "${poll}"\n  timezone: UTC\n  jitter: 0s`);
    writeFileSync(configPath, yaml('0 0 * * *'));
    let shift = 0;
    const at = (iso: string): void => {
      shift = Date.parse(iso) - Date.now();
    };
    at('2027-01-15T23:59:00Z');
    const clock: Clock = { now: () => Date.now() + shift, monotonic: () => performance.now() };
    const a = (app = await startInProcess({ dir, configPath, clock }));
    const polled = (): string[] => a.log.events('poll.ok').map((e) => String(e.wallet));

    // The first tick, at start: 10 s to midnight, the three polls spread over the first 8 s of it.
    at('2027-01-15T23:59:50Z');
    await a.daemon.start();
    await expect.poll(polled).toEqual(['alpha']);

    writeFileSync(configPath, yaml('30 0 * * *'));
    expect(a.daemon.reload()).toBe(true);
    expect(a.daemon.nextPoll()?.toISOString()).toBe('2027-01-16T00:30:00.000Z');
    // Before, beta and gamma were next polled at 00:30 (over the budget, a whole round later).
    await expect.poll(polled, { timeout: 20_000, interval: 200 }).toEqual(['alpha', 'beta', 'gamma']);
    expect(a.log.events('poll.overlap')).toHaveLength(0);
  }, 30_000);
});
