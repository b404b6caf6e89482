// A wallet's signing pause outlived the wallet. A request refused for this wallet's setup (400/422
// naming the signature, timestamp or headers) pauses its signing until a restart or a reload that
// changes the signing setup. An operator who answers by taking the wallet out of the config (a
// SIGHUP that changes no api setting) was left with the pause of a wallet no longer there, for the
// process's life: /readyz 503 "signing: paused for 1 wallet(s): <its address>" and
// autoclaim_signing_paused{scope="wallet"} 1 until a restart, with nothing left to fix. What the
// readiness, the metrics and `status` read (Daemon.signingPauses) now names only the wallets this
// daemon works. In-process: a real runtime, the in-process sandbox (which checks headers).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

let app: InProcess | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  await app?.stop();
  app = undefined;
  cleanup?.();
  cleanup = undefined;
});

it('a wallet paused by a refusal of its request, taken out by a reload that leaves the signing setup: its pause goes with it', async () => {
  const t = tempDir('autoclaim-reload-pause-');
  cleanup = t.cleanup;
  const [alpha, beta] = makeWallets(t.dir, ['alpha', 'beta']) as [TestWallet, TestWallet];
  const configPath = join(t.dir, 'autoclaim.yaml');
  // The wrong prefix: every signed request is refused 400 missing_header, a pause of that wallet.
  const api = '  header_prefix: x-wrong\n';
  writeFileSync(configPath, sandboxYaml([beta], { threshold: '0.000000001', api }));
  app = await startInProcess({ dir: t.dir, configPath });
  const { daemon } = app;
  await daemon.once();
  expect([...daemon.signingPauses().wallets.keys()]).toEqual([beta.address]);

  // Beta out, alpha in (with a threshold it never reaches: it signs nothing, so it is not paused);
  // the signing setup as it was, so no pause is lifted by the reload itself.
  writeFileSync(configPath, sandboxYaml([alpha], { threshold: '1000000', api }));
  expect(daemon.reload()).toBe(true);
  await daemon.once();
  expect(app.log.events('poll.ok').filter((e) => e['wallet'] === 'alpha')).toHaveLength(1);
  expect([...daemon.signingPauses().wallets.keys()]).toEqual([]);

  // Put back, it is the wallet it was: still paused, since nothing in its setup changed.
  writeFileSync(configPath, sandboxYaml([alpha, beta], { threshold: '1000000', api }));
  expect(daemon.reload()).toBe(true);
  expect([...daemon.signingPauses().wallets.keys()]).toEqual([beta.address]);
});
