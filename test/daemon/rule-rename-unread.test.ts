// A renamed rule takes the old rule's id (and so its history and limits) by asking the journal at
// each start and reload (executor/rule-ids-settle.ts). That read failing once — SQLite busy or out
// of space for a moment, PostgreSQL unreachable for a few seconds, exactly at the SIGHUP — was
// logged (`rule.ids_failed`) and the new config went on in force with the new name's own id, for
// the process's life: no history, so once_per_epoch, the cooldown and the day caps all passed
// again, and the rule's 1 SOL deposit went out a second time in the epoch once the store answered;
// and a plan of the old name left open (its deposit not yet sent) found its rule gone and was
// skipped for good ("no longer configured"): the claimed SOL never deposited. Now a failed read is
// asked again at the next turn, and a turn decides and runs nothing until the ids are settled.
// Driven in-process: a real runtime and SQLite state file, the in-process sandbox and its ledger;
// the store's one read made to fail once.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

const SOL = 1_000_000_000n;

const topup = (name: string) => `  - name: ${name}
    do:
      - deposit: { symbol: SOL2X, amount: 1 }
    limits: { once_per_epoch: true, cooldown: 6h, max_plans_per_day: 1, max_sol_per_day: 1 }
`;
const yaml = (w: TestWallet, rules: string): string => sandboxYaml([w]).replace(/rules:\n[\s\S]*?safety:/, `rules:\n${rules}safety:`);

let app: InProcess | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  await app?.stop();
  app = undefined;
  cleanup?.();
  cleanup = undefined;
});

it.each([1, 3])('SIGHUP renaming a rule while the journal cannot be read (%i reads fail): still no second deposit in the epoch', async (failing) => {
  const t = tempDir('autoclaim-rule-rename-unread-');
  cleanup = t.cleanup;
  const [wallet] = makeWallets(t.dir, ['alpha']) as [TestWallet];
  const configPath = join(t.dir, 'autoclaim.yaml');
  writeFileSync(configPath, yaml(wallet, topup('topup')));
  const a = (app = await startInProcess({ dir: t.dir, configPath }));
  a.runtime.sandbox!.world.setWallet(wallet.address, { balanceLamports: 100n * SOL });
  const deposits = () => a.runtime.sandbox!.ledger().filter((e) => e.op === 'deposit');
  await a.daemon.once();
  expect(deposits()).toHaveLength(1);

  // The journal's read fails at the reload (and, with 3, at the next two turns' asks); then it answers.
  const { store } = a.runtime;
  const read = store.latestRulePlans.bind(store);
  let failures = failing;
  (store as { latestRulePlans: typeof read }).latestRulePlans = () => {
    if (failures-- > 0) throw new StateError('STATE_IO', 'database is locked');
    return read();
  };
  writeFileSync(configPath, yaml(wallet, topup('top-up')));
  expect(a.daemon.reload()).toBe(true);
  // Turns as `run`'s scheduler runs them (once() settles the rule ids again, as a start does). A turn
  // whose ask fails decides nothing new; the first that reads them carries the id.
  for (let turn = 0; turn < 4; turn++) await a.daemon.runWallet('alpha');
  expect(deposits()).toHaveLength(1);
  expect(a.log.events('rule.ids_failed')).toHaveLength(failing);
  expect((await a.runtime.store.listPlans({})).filter((p) => !p.dry).map((p) => p.rule)).toEqual(['topup']);
  expect(a.log.events('rule.renamed')).toMatchObject([{ rule: 'top-up', id: 'topup' }]);
});

it('a plan left open (its deposit not yet sent) when a reload renames its rule and the journal cannot be read: its deposit goes, once, later', async () => {
  const t = tempDir('autoclaim-rule-rename-unread-');
  cleanup = t.cleanup;
  const [wallet] = makeWallets(t.dir, ['alpha']) as [TestWallet];
  const configPath = join(t.dir, 'autoclaim.yaml');
  const compound = (name: string) => `  - name: ${name}\n    when:\n      pending_sol: { gte: 0.01 }\n    do:\n      - claim\n      - deposit: { symbol: SOL2X, amount: "50%" }\n    limits: { once_per_epoch: true }\n`;
  writeFileSync(configPath, yaml(wallet, compound('compound')));
  const a = (app = await startInProcess({ dir: t.dir, configPath }));
  const sandbox = a.runtime.sandbox!;
  // The deposit refused unapplied (429) once: the claim is in, the plan stays open for its deposit.
  sandbox.faults.add({ kind: 'rate_limit', retryAfterSec: 0, match: { op: 'deposit' } });
  await a.daemon.once();
  expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim']);

  const { store } = a.runtime;
  const read = store.latestRulePlans.bind(store);
  let failures = 1;
  (store as { latestRulePlans: typeof read }).latestRulePlans = () => {
    if (failures-- > 0) throw new StateError('STATE_IO', 'database is locked');
    return read();
  };
  writeFileSync(configPath, yaml(wallet, compound('compound-renamed')));
  expect(a.daemon.reload()).toBe(true);
  for (let turn = 0; turn < 2; turn++) await a.daemon.runWallet('alpha');
  // Not skipped as "no longer configured": the plan keeps its rule, and nothing fires twice.
  expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);
  expect((await store.listPlans({})).filter((p) => !p.dry).map((p) => [p.rule, p.status])).toEqual([['compound', 'done']]);
});

it('a reload renaming the rule between a plan’s claim and its deposit, its journal read failing: the deposit waits for the ids, then goes once', async () => {
  const t = tempDir('autoclaim-rule-rename-unread-');
  cleanup = t.cleanup;
  const [wallet] = makeWallets(t.dir, ['alpha']) as [TestWallet];
  const configPath = join(t.dir, 'autoclaim.yaml');
  const compound = (name: string) => `  - name: ${name}\n    when:\n      pending_sol: { gte: 0.01 }\n    do:\n      - claim\n      - deposit: { symbol: SOL2X, amount: "50%" }\n    limits: { once_per_epoch: true }\n`;
  writeFileSync(configPath, yaml(wallet, compound('compound')));
  const a = (app = await startInProcess({ dir: t.dir, configPath }));
  const sandbox = a.runtime.sandbox!;
  const { client, store } = a.runtime;
  const latest = store.latestRulePlans.bind(store);
  const poll = client.walletSummary.bind(client);
  let reads = 0;
  let failures = 1;
  client.walletSummary = async (address) => {
    // The turn's poll, the claim's fresh read, then the deposit's: the SIGHUP comes right before it.
    if (++reads === 3) {
      (store as { latestRulePlans: typeof latest }).latestRulePlans = () => {
        if (failures-- > 0) throw new StateError('STATE_IO', 'database is locked');
        return latest();
      };
      writeFileSync(configPath, yaml(wallet, compound('compound-renamed')));
      expect(a.daemon.reload()).toBe(true);
    }
    return poll(address);
  };
  await a.daemon.runWallet('alpha');
  expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim']);
  await a.daemon.runWallet('alpha');
  expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);
  expect((await store.listPlans({})).filter((p) => !p.dry).map((p) => [p.rule, p.status])).toEqual([['compound', 'done']]);
});
