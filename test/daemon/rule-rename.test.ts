// Issue 24, finding 6: renaming a rule `topup` → `top-up` and sending SIGHUP gave a second 1 SOL
// deposit in the same epoch despite once_per_epoch, a 6 h cooldown, 1 plan a day and 1 SOL a day:
// every limit followed the name. SPEC §2: a rule's limits survive its renaming. A rule that
// replaces another with the same steps takes its id (rules/rule-ids.ts) at a reload and at a
// restart, and says so (`rule.renamed`); when more than one rule could be meant nothing is carried
// (`rule.rename_ambiguous`). Driven in-process: a real runtime and state file, the in-process
// sandbox (epochs a day long) and its ledger.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

const SOL = 1_000_000_000n;

/** The rule of the report, under `name` (and `id` when given): a fixed deposit with every limit. */
const topup = (name: string, id?: string, amount = '1') => `  - name: ${name}
${id === undefined ? '' : `    id: ${id}\n`}    do:
      - deposit: { symbol: SOL2X, amount: ${amount} }
    limits: { once_per_epoch: true, cooldown: 6h, max_plans_per_day: 1, max_sol_per_day: 1 }
`;

const yaml = (w: TestWallet, rules: string): string => sandboxYaml([w]).replace(/rules:\n[\s\S]*?safety:/, `rules:\n${rules}safety:`);

describe('renaming a rule keeps its limits (finding 6)', () => {
  let dir: string;
  let cleanup: () => void;
  let configPath: string;
  let wallet: TestWallet;
  let app: InProcess | undefined;

  const start = async () => {
    app = await startInProcess({ dir, configPath });
    app.runtime.sandbox!.world.setWallet(wallet.address, { balanceLamports: 100n * SOL });
    return app;
  };
  const deposits = (a: InProcess) => a.runtime.sandbox!.ledger().filter((e) => e.op === 'deposit');
  const plans = async (a: InProcess) => (await a.runtime.store.listPlans({})).filter((p) => !p.dry);

  beforeEach(() => {
    ({ dir, cleanup } = tempDir('autoclaim-rule-rename-'));
    [wallet] = makeWallets(dir, ['alpha']) as [TestWallet];
    configPath = join(dir, 'autoclaim.yaml');
  });

  afterEach(async () => {
    await app?.stop();
    app = undefined;
    cleanup();
  });

  it('SIGHUP: topup → top-up, same steps: no second deposit in the epoch, and rule.renamed says so', async () => {
    writeFileSync(configPath, yaml(wallet, topup('topup')));
    const a = await start();
    await a.daemon.once();
    expect(deposits(a)).toHaveLength(1);

    writeFileSync(configPath, yaml(wallet, topup('top-up')));
    expect(a.daemon.reload()).toBe(true);
    await a.daemon.once();
    expect(deposits(a)).toHaveLength(1);
    expect((await plans(a)).map((p) => p.rule)).toEqual(['topup']);
    expect(a.log.events('rule.renamed')).toMatchObject([{ rule: 'top-up', id: 'topup' }]);
    expect(a.log.events('rule.skipped').at(-1)).toMatchObject({ rule: 'top-up', reason: 'once_per_epoch' });
  });

  it('a turn already under way at SIGHUP decides with the carried id, however late the journal answers', async () => {
    // The reload puts the new rules in force at once and carries the old id after asking the
    // journal (a round trip on PostgreSQL). A turn polling meanwhile waited for the carry only when
    // it started, so it decided with the new id: no history, a second deposit. (The turn holds the
    // wallet as it was, whose rule list names the rules of then: the rule keeps its name here and
    // is given an id of its own, which the carry takes back.)
    writeFileSync(configPath, yaml(wallet, topup('topup')));
    const a = await start();
    await a.daemon.once();
    expect(deposits(a)).toHaveLength(1);

    const { client, store } = a.runtime;
    const poll = client.walletSummary.bind(client);
    let inPoll!: () => void;
    const polling = new Promise<void>((resolve) => (inPoll = resolve));
    let back!: () => void;
    const pollBack = new Promise<void>((resolve) => (back = resolve));
    client.walletSummary = async (address) => {
      inPoll();
      await pollBack;
      return poll(address);
    };
    const latest = store.latestRulePlans.bind(store);
    let answer!: () => void;
    const journal = new Promise<void>((resolve) => (answer = resolve));
    Object.assign(store, {
      latestRulePlans: async () => {
        await journal;
        return latest();
      },
    });

    const turn = a.daemon.runWallet('alpha');
    await polling;
    writeFileSync(configPath, yaml(wallet, topup('topup', 'topup-v2')));
    expect(a.daemon.reload()).toBe(true);
    client.walletSummary = poll;
    back();
    // The turn goes as far as it goes before the journal answers (to its end, without the wait).
    await Promise.race([turn, new Promise((resolve) => setTimeout(resolve, 300))]);
    answer();
    await turn;

    expect(deposits(a)).toHaveLength(1);
    expect((await plans(a)).map((p) => p.rule)).toEqual(['topup']);
    expect(a.log.events('rule.renamed')).toMatchObject([{ rule: 'topup', id: 'topup' }]);
    expect(a.log.events('rule.skipped').at(-1)).toMatchObject({ rule: 'topup', reason: 'once_per_epoch' });
  });

  it('a reload while a plan’s deposit waits for its fresh summary: the plan keeps its rule, however late the journal answers', async () => {
    // The recheck before signing found the plan's rule by id in the rules in force: between a
    // reload and the carry of the old id (a journal round trip) a rule kept across it looked gone,
    // and the plan was skipped for good ("no longer configured"): its deposit never went.
    writeFileSync(configPath, yaml(wallet, topup('topup')));
    const a = await start();
    const { client, store } = a.runtime;
    const latest = store.latestRulePlans.bind(store);
    let answer!: () => void;
    const journal = new Promise<void>((resolve) => (answer = resolve));
    const read = client.walletSummary.bind(client);
    let reads = 0;
    client.walletSummary = async (address) => {
      // The turn's poll is the first read; the second is the deposit's own, right before signing.
      if (++reads === 2) {
        Object.assign(store, {
          latestRulePlans: async () => {
            await journal;
            return latest();
          },
        });
        writeFileSync(configPath, yaml(wallet, topup('topup', 'topup-v2')));
        expect(a.daemon.reload()).toBe(true);
      }
      return read(address);
    };
    const turn = a.daemon.runWallet('alpha');
    // The turn goes as far as it goes before the journal answers (to its end, without the wait).
    await Promise.race([turn, new Promise((resolve) => setTimeout(resolve, 300))]);
    answer();
    await turn;

    expect(deposits(a)).toHaveLength(1);
    expect(a.log.events('plan.skipped')).toEqual([]);
    expect((await plans(a)).map((p) => [p.rule, p.steps.map((s) => s.state)])).toEqual([['topup', ['acknowledged']]]);
  });

  it('restart: the renamed rule finds its history again in the state file', async () => {
    writeFileSync(configPath, yaml(wallet, topup('topup')));
    let a = await start();
    await a.daemon.once();
    expect(deposits(a)).toHaveLength(1);
    await a.stop();

    writeFileSync(configPath, yaml(wallet, topup('top-up')));
    a = app = await start(); // a new process: a new sandbox world, the same state file
    await a.daemon.once();
    expect(deposits(a)).toEqual([]);
    expect((await plans(a)).map((p) => p.rule)).toEqual(['topup']);
    expect(a.log.events('rule.renamed')).toMatchObject([{ rule: 'top-up', id: 'topup' }]);
  });

  it('an explicit id: keeps the history without any matching, whatever the steps become', async () => {
    writeFileSync(configPath, yaml(wallet, topup('topup')));
    const a = await start();
    await a.daemon.once();
    writeFileSync(configPath, yaml(wallet, topup('renamed-and-changed', 'topup', '0.5')));
    expect(a.daemon.reload()).toBe(true);
    await a.daemon.once();
    expect(deposits(a)).toHaveLength(1);
    expect(a.log.events('rule.renamed')).toEqual([]);
  });

  it('two rules with the steps of the gone one: nothing is guessed, a warning names them', async () => {
    writeFileSync(configPath, yaml(wallet, topup('topup')));
    const a = await start();
    await a.daemon.once();
    writeFileSync(configPath, yaml(wallet, topup('top-up') + topup('top_up')));
    expect(a.daemon.reload()).toBe(true);
    await a.daemon.once();
    expect(a.log.events('rule.renamed')).toEqual([]);
    // Said at the reload, and again at each start of a turn's settling (once() recovers first).
    expect(a.log.events('rule.rename_ambiguous')[0]).toMatchObject({ rules: ['top-up', 'top_up'], ids: ['topup'] });
  });

  it('different steps are a new rule: it plans afresh', async () => {
    writeFileSync(configPath, yaml(wallet, topup('topup')));
    const a = await start();
    await a.daemon.once();
    writeFileSync(configPath, yaml(wallet, topup('top-up', undefined, '0.5')));
    expect(a.daemon.reload()).toBe(true);
    await a.daemon.once();
    expect(deposits(a)).toHaveLength(2);
    expect(a.log.events('rule.renamed')).toEqual([]);
  });
});
