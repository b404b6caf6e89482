// How long a wallet may go unpolled by plan, which staleness (the wallet_stale alert,
// autoclaim_stale_after_seconds) counts in: the poll interval while the fleet fits the rate budget,
// the planner's bound when it outgrows it. Before, staleness counted cron intervals only, and a
// fleet of 10,000 wallets at 2,500 requests a minute (a turn every 4 minutes) was stale at 3.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeWallets, tempDir } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

const MINUTE = 60_000;

describe("a wallet's time between polls", () => {
  let cleanup: (() => void) | undefined;
  let app: InProcess | undefined;

  afterEach(async () => {
    await app?.stop();
    cleanup?.();
    app = undefined;
    cleanup = undefined;
  });

  async function gapWith(perMinute: number): Promise<number> {
    const t = tempDir('autoclaim-poll-gap-');
    cleanup = t.cleanup;
    const wallets = makeWallets(t.dir, ['a', 'b', 'c', 'd', 'e', 'f']);
    const configPath = join(t.dir, 'autoclaim.yaml');
    const yaml = sandboxYaml(wallets, { api: `  rate_limit: { per_minute: ${perMinute} }\n` }).replace('poll: "0 0 1 1 *"', 'poll: "* * * * *"');
    writeFileSync(configPath, yaml);
    app = await startInProcess({ dir: t.dir, configPath });
    expect(app.daemon.pollIntervalMs()).toBe(MINUTE);
    return app.daemon.walletPollGapMs();
  }

  it.each([
    // 58 polls a minute (2% kept for claims) for 6 wallets: each every interval.
    [60, 1],
    // 2 polls a minute for 6 wallets: the planner's bound, 5 intervals, is the longer.
    [3, 5],
    // 1 a minute: a round of the fleet, 6 intervals, is longer than the bound.
    [2, 6],
  ])('per_minute %i, 6 wallets polled every minute: %i interval(s)', async (perMinute, intervals) => {
    expect(await gapWith(perMinute)).toBe(intervals * MINUTE);
  });
});
