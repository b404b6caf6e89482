// `once` (cron's way to run autoclaim) exits 0 only when every wallet was read and every plan
// finished (SPEC §3). Since the rule ids must be settled before a turn decides or runs anything
// (executor/rule-ids-settle.ts), a turn whose journal read failed returns having done nothing: it
// was tallied as a good poll and nothing else, so `once` said "all fine" (exit 0) for a cycle that
// decided no wallet and left an open plan's deposit unsent. Such a turn is counted as waiting to
// retry. Driven in-process: a real runtime and SQLite state file, the in-process sandbox.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
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

it('once whose journal read of the rule ids fails decides nothing and does not report all fine', async () => {
  const t = tempDir('autoclaim-once-unread-');
  cleanup = t.cleanup;
  const [wallet] = makeWallets(t.dir, ['alpha']) as [TestWallet];
  const configPath = join(t.dir, 'autoclaim.yaml');
  writeFileSync(configPath, sandboxYaml([wallet]));
  const a = (app = await startInProcess({ dir: t.dir, configPath }));
  const { store } = a.runtime;
  (store as { latestRulePlans: unknown }).latestRulePlans = () => {
    throw new StateError('STATE_IO', 'database is locked');
  };
  const report = await a.daemon.once();
  // Nothing was claimed: the turn decided nothing.
  expect(a.runtime.sandbox!.ledger()).toEqual([]);
  expect(a.log.events('rule.ids_failed').length).toBeGreaterThan(0);
  expect(report.polled).toBe(1);
  // onceCommand's exit: 0 only when nothing is failed, unknown, pending or crashed.
  expect(report.failed + report.unknown + report.pending + report.crashed).toBeGreaterThan(0);
});
