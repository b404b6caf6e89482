// The demo sandboxes (`npm start`'s, in the daemon's process, and `autoclaim sandbox`) keep the real
// service's published limit, 500 requests a minute with bursts of 100 (SPEC §1, §6): a client that
// does not keep to it meets the 429s here, not first on the real service.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { AppConfig } from '../../src/domain.js';
import { silentLogger } from '../../src/log/logger.js';
import { demoSandboxOptions, prepareDemoWorld } from '../../src/sandbox/demo.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { FakeClock } from '../support/clock.js';
import { send, testAgent } from './helpers.js';

const agent = testAgent();
afterAll(() => agent.close());
let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

/** How many of `n` reads at one instant are answered 200 before the 429s, and the first 429's Retry-After. */
async function burst(opts: SandboxOptions, n: number): Promise<{ ok: number; retryAfter: unknown }> {
  const clock = new FakeClock(Date.UTC(2026, 0, 5, 8, 0, 0));
  sandbox = await startSandbox({ ...opts, clock });
  let ok = 0;
  let retryAfter: unknown;
  for (let i = 0; i < n; i++) {
    const r = await send(agent, `${sandbox.url}/health`);
    if (r.status === 200) ok += 1;
    else if (r.status === 429) retryAfter ??= r.headers['retry-after'];
  }
  return { ok, retryAfter };
}

describe('the demo sandboxes keep the published rate limit', () => {
  it('`autoclaim sandbox`: 100 at once, then 429 with Retry-After', async () => {
    expect(await burst(demoSandboxOptions(1), 101)).toEqual({ ok: 100, retryAfter: '1' });
  });

  it("`npm start`'s: 100 at once, then 429 with Retry-After", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'autoclaim-demo-limit-'));
    try {
      const config = { wallets: [], state: { path: join(dir, 'autoclaim.db') }, sandbox: { epochMs: 60_000, accrualLamportsPerSec: 1_000n } } as unknown as AppConfig;
      const { sandboxOptions } = prepareDemoWorld(config, { logger: silentLogger() });
      expect(await burst(sandboxOptions, 101)).toEqual({ ok: 100, retryAfter: '1' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
