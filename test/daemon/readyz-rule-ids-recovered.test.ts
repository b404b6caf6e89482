// Helper h29a: /readyz is 503 while the rule ids cannot be read (ce21454), and only a wallet's
// turn asked the read again (Daemon.runWallet). A daemon that runs no turn for a while stayed 503
// after the database had come back: one whose schedule is daily (the in-process tests' fires once
// a year), or a cluster member holding no lease (its scheduler turns over no wallet). A start
// whose read met a database blip said "cannot be read … nothing new is decided" until a turn came
// (a day) or a lease did, though the next turn would decide at once: a rollout waiting for the pod
// to be ready waited as long. The probe now asks the read again itself, as a turn does.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createEvents } from '../../src/events.js';
import { StateError } from '../../src/errors.js';
import { Supervisor } from '../../src/service/supervisor.js';
import { makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';
import { closedPort } from '../support/net.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

const undo: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const u of undo.splice(0).reverse()) await u();
});

it('is ready again once the database answers, with no turn between', async () => {
  const t = tempDir('autoclaim-readyz-recovered-');
  undo.push(t.cleanup);
  const [wallet] = makeWallets(t.dir, ['alpha']) as [TestWallet];
  const port = await closedPort();
  const configPath = join(t.dir, 'autoclaim.yaml');
  writeFileSync(configPath, `${sandboxYaml([wallet])}metrics:\n  listen: 127.0.0.1:${port}\n`);
  let events: ReturnType<typeof createEvents> | undefined;
  const app: InProcess = await startInProcess({ dir: t.dir, configPath, events: (logger) => (events = createEvents({ logger })) });
  undo.push(() => app.stop());
  const { runtime, daemon, log } = app;
  const supervisor = new Supervisor({ env: {}, clock: { now: () => Date.now(), monotonic: () => performance.now() }, logger: log.logger, redactor: app.redactor, events: events!, runtime, daemon });
  await supervisor.start();
  undo.push(() => supervisor.stop());
  const readyz = async (): Promise<number> => (await fetch(`http://127.0.0.1:${port}/readyz`)).status;

  const store = runtime.store as { latestRulePlans: () => unknown };
  const read = store.latestRulePlans.bind(runtime.store);
  store.latestRulePlans = () => {
    throw new StateError('STATE_IO', 'database is locked');
  };
  await daemon.recover(); // the start's read, during the blip
  expect(log.events('rule.ids_failed')).toHaveLength(1);
  expect(await readyz()).toBe(503);

  store.latestRulePlans = read; // the database is back; no turn comes
  await readyz(); // asks again (SQLite answers at once)
  expect(await readyz()).toBe(200);
});
