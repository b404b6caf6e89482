// A turn decides nothing until the rule ids are read from the state (executor/rule-ids-settle.ts).
// A `run` whose every read failed (a query over its deadline every time, say) decided nothing at
// any turn while /readyz said ready: its polls succeeded and the database took the probe's write,
// so a load balancer and the readiness alert saw a working daemon. Now /readyz is 503 with a db
// reason while no read has answered, and ready again once one has. Driven in-process: a real
// runtime and SQLite state file, the in-process sandbox, the supervisor's health server on loopback.
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

it('is not ready while the rule ids cannot be read, and ready again once they are', async () => {
  const t = tempDir('autoclaim-readyz-unread-');
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
  const readyz = async (): Promise<{ status: number; body: { ready: boolean; reasons: string[] } }> => {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    return { status: res.status, body: (await res.json()) as { ready: boolean; reasons: string[] } };
  };

  const store = runtime.store as { latestRulePlans: () => unknown };
  const read = store.latestRulePlans.bind(runtime.store);
  store.latestRulePlans = () => {
    throw new StateError('STATE_IO', 'database is locked');
  };
  await daemon.once();
  expect(log.events('rule.ids_failed').length).toBeGreaterThan(0);
  expect(runtime.sandbox!.ledger()).toEqual([]);
  const down = await readyz();
  expect(down.status).toBe(503);
  expect(down.body.reasons).toEqual([expect.stringMatching(/^db: the state database cannot be read: which rules planned before cannot be read from the state since \d{4}-\d\d-\d\dT.*nothing new is decided/)]);

  store.latestRulePlans = read;
  await daemon.once();
  expect(runtime.sandbox!.ledger().map((e) => e.op)).toEqual(['claim']);
  expect(await readyz()).toMatchObject({ status: 200, body: { ready: true, reasons: [] } });
});
