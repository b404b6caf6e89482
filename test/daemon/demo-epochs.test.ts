// `api.base_url: sandbox` with a fast `sandbox.epoch` is the one stated exemption from the epoch
// calendar checks (SPEC §2). The runtime swaps base_url for the in-process simulator's loopback URL,
// and the exemption was judged on that URL, so a demo that ran for more than a couple of minutes
// had its epochs refused (too far ahead) and, restarted, refused as going backward: nothing fired
// (issue 27). The exemption now follows the in-process sandbox itself.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { CycleDeps } from '../../src/executor/wallet-cycle.js';
import { makeWallets, tempDir } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

let app: InProcess | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  await app?.stop();
  cleanup?.();
});

const exemptFor = async (epoch: string): Promise<boolean | undefined> => {
  const t = tempDir('autoclaim-demo-epochs-');
  cleanup = t.cleanup;
  const wallets = makeWallets(t.dir, ['alpha']);
  const configPath = join(t.dir, 'autoclaim.yaml');
  writeFileSync(configPath, sandboxYaml(wallets).replace('sandbox:\n  epoch: 1d\n', `sandbox:\n  epoch: ${epoch}\n`));
  app = await startInProcess({ dir: t.dir, configPath });
  expect(app.runtime.config.api.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:/);
  return (app.daemon as unknown as { cycle: CycleDeps }).cycle.epochsExempt?.();
};

it('the in-process sandbox with minute-long epochs is exempt, though its URL is now a loopback one', async () => {
  expect(await exemptFor('1m')).toBe(true);
});

it('with day-long epochs it is not: the calendar checks apply as to a real API', async () => {
  expect(await exemptFor('1d')).toBe(false);
});
