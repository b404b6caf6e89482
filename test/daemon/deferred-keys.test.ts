// The wallet keys checked on a worker thread while the first polls go out (issue 14). A fleet at
// or over the threshold (here 3, through the runtime's option; `run`/`once` ship 1,000) starts
// polling before its keys are loaded; nothing is decided to act on or signed until every key has
// passed. Driven in-process with real key files, the in-process sandbox (which verifies every
// signature and keeps a ledger of what it applied) and the worker built into dist/ (tests run
// from src/, where no worker script can be started: `npm run build` first).
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { systemClock } from '../../src/domain.js';
import { ConfigError } from '../../src/errors.js';
import { Redactor } from '../../src/log/redact.js';
import { checkConfig, openRuntime, type Runtime } from '../../src/runtime.js';
import { captureLog, type CapturedLog } from '../support/log.js';
import { makeWallets, REPO, tempDir, type TestWallet } from '../e2e/helpers.js';
import { sandboxYaml, type ConfigWallet } from './in-process.js';

const WORKER = new URL(`file://${join(REPO, 'dist/api/key-worker.js')}`);
/** A whole SOL pending for every wallet: each is over the rule's threshold, whatever the sandbox drew. */
const fund = (runtime: Runtime, list: TestWallet[]): void => {
  for (const w of list) runtime.sandbox?.world.setWallet(w.address, { pendingLamports: 1_000_000_000n });
};
const entry = (w: TestWallet, keyFile = `./keys/${w.name}.json`): ConfigWallet => ({ name: w.name, address: w.address, keyFile });

interface App {
  runtime: Runtime;
  daemon: Daemon;
  log: CapturedLog;
  redactor: Redactor;
}

describe('the deferred key check', () => {
  let dir: string;
  let cleanup: () => void;
  let configPath: string;
  let wallets: TestWallet[];
  let app: App | undefined;

  beforeAll(() => {
    if (!existsSync(WORKER)) throw new Error('dist/api/key-worker.js is missing: run `npm run build` first');
  });

  const setUp = (names: string[]): void => {
    ({ dir, cleanup } = tempDir('autoclaim-deferred-'));
    wallets = makeWallets(dir, names);
    configPath = join(dir, 'autoclaim.yaml');
  };

  const open = async (opts: { fromWallets: number; workerUrl?: URL }): Promise<App> => {
    const log = captureLog('debug');
    const { logger, redactor } = log;
    const common = { configPath, env: {}, cwd: dir, clock: systemClock, logger, redactor };
    const deferKeys = { fromWallets: opts.fromWallets, workerUrl: opts.workerUrl ?? WORKER };
    const runtime = await openRuntime({ ...common, lock: true, scheduled: false, deferKeys });
    const daemon = new Daemon({ ...common, runtime, dry: false, failpoint: () => {} });
    app = { runtime, daemon, log, redactor };
    return app;
  };

  afterEach(async () => {
    if (app !== undefined) {
      await app.daemon.stop(1000);
      await app.runtime.close();
      app = undefined;
    }
    cleanup();
  });

  it('claims for a good fleet as before, with every key loaded on the worker and logged as keys.checked', async () => {
    setUp(['alpha', 'beta', 'gamma', 'delta']);
    writeFileSync(configPath, sandboxYaml(wallets.map((w) => entry(w))));
    const { runtime, daemon, log } = await open({ fromWallets: 3 });
    fund(runtime, wallets);

    const report = await daemon.once();
    expect(report.polled).toBe(4);
    expect(report.crashed).toBe(0);
    const claimed = new Set(runtime.sandbox?.ledger().filter((e) => e.op === 'claim').map((e) => e.wallet));
    expect(claimed).toEqual(new Set(wallets.map((w) => w.address)));
    const [checked, ...more] = log.events('keys.checked');
    expect(more).toEqual([]);
    expect(checked).toMatchObject({ level: 'info', wallets: 4, thread: 'worker' });
    expect(typeof checked?.ms).toBe('number');
    expect([...runtime.signers.keys()].sort()).toEqual(wallets.map((w) => w.address).sort());
    for (const [address, signer] of runtime.signers) expect(signer.address).toBe(address);
  });

  it('teaches the one Redactor every form the synchronous check would, and scrubs each from what a server echoes', async () => {
    setUp(['alpha', 'beta', 'gamma']);
    writeFileSync(configPath, sandboxYaml(wallets.map((w) => entry(w))));
    const { runtime, redactor } = await open({ fromWallets: 3 });
    await runtime.keysReady();

    // The same config through the synchronous pipeline (as `check` runs it), on a Redactor of its own.
    const sync = new Redactor();
    const checked = checkConfig(configPath, { env: {}, cwd: dir, redactor: sync, logger: captureLog('error').logger });
    expect(checked.errors).toEqual([]);
    // What the runtime's Redactor knows beyond the sandbox's random API key (one text, one form).
    expect(redactor.size - 1).toBe(sync.size);

    for (const w of wallets) {
      const key = Buffer.from(w.secretKey64);
      const seed = key.subarray(0, 32);
      const forms = [
        JSON.stringify([...w.secretKey64]),
        bs58.encode(w.secretKey64),
        key.toString('base64'),
        key.toString('base64url'),
        seed.toString('hex'),
        seed.toString('base64'),
        bs58.encode(seed),
        [...seed].join(','),
      ];
      for (const form of forms) {
        const echoed = `{"error":"bad request","detail":"you sent ${form} as the key"}`;
        const scrubbed = redactor.redact(echoed);
        expect(scrubbed).toContain('[REDACTED]');
        expect(scrubbed).not.toContain(form.slice(0, 16));
      }
    }
  });

  it('stops `once` as a config error at the bad key, the same message as the synchronous check, with no plan and nothing signed', async () => {
    setUp(['alpha', 'beta', 'gamma', 'delta']);
    // gamma is configured with delta's key file: a key of another address.
    const list = [entry(wallets[0]!), entry(wallets[1]!), entry(wallets[2]!, './keys/delta.json')];
    writeFileSync(configPath, sandboxYaml(list));
    const sync = checkConfig(configPath, { env: {}, cwd: dir, redactor: new Redactor(), logger: captureLog('error').logger });
    expect(sync.errors).toHaveLength(1);
    expect(sync.errors[0]).toMatchObject({ line: 16, path: 'wallets[2].key' });
    expect(sync.errors[0]?.message).toMatch(/^wallet gamma: key file .*delta\.json is the key of address /);

    const { runtime, daemon, log } = await open({ fromWallets: 3 });
    fund(runtime, wallets.slice(0, 3));
    const failure = await daemon.once().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).issues).toEqual(sync.errors);
    // The rule fires for alpha and beta (everything pending is over its threshold), yet nothing was
    // recorded, nothing signed, and no turn counted as crashed.
    expect(runtime.store.listPlans()).toEqual([]);
    expect(runtime.sandbox?.ledger()).toEqual([]);
    expect(runtime.signers.size).toBe(0);
    expect(log.events('plan.recorded')).toEqual([]);
    expect(log.events('rule.fired')).toEqual([]);
    expect(log.events('wallet.failed')).toEqual([]);
    expect(log.events('keys.checked')).toEqual([]);
    expect(log.events('keys.invalid')).toMatchObject([{ level: 'error', issues: [expect.stringContaining('wallet gamma: key file')] }]);
    // Polls went on meanwhile: they need only the addresses and the API key.
    expect(log.events('poll.ok').length).toBeGreaterThan(0);
  });

  it('lets the main thread do the work when no worker can be started, with the same outcome', async () => {
    setUp(['alpha', 'beta', 'gamma']);
    writeFileSync(configPath, sandboxYaml(wallets.map((w) => entry(w))));
    const { runtime, daemon, log } = await open({ fromWallets: 3, workerUrl: new URL(`file://${join(dir, 'no-such-worker.js')}`) });
    fund(runtime, wallets);
    const report = await daemon.once();
    expect(report.plans).toBe(3);
    expect(runtime.sandbox?.ledger().filter((e) => e.op === 'claim')).toHaveLength(3);
    expect(log.events('keys.checked')).toMatchObject([{ wallets: 3, thread: 'main' }]);
  });

  it('keeps the synchronous path below the threshold: every key loaded before the runtime opens', async () => {
    setUp(['alpha', 'beta', 'gamma']);
    writeFileSync(configPath, sandboxYaml(wallets.map((w) => entry(w))));
    const { runtime, daemon, log } = await open({ fromWallets: 4 });
    // Loaded before openRuntime returned: no await in between.
    expect(runtime.signers.size).toBe(3);
    fund(runtime, wallets);
    const report = await daemon.once();
    expect(report.plans).toBe(3);
    expect(log.events('keys.checked')).toEqual([]);
  });

  it('refuses a bad key below the threshold at open, as ever', async () => {
    setUp(['alpha', 'beta', 'gamma']);
    writeFileSync(configPath, sandboxYaml([entry(wallets[0]!), entry(wallets[1]!, './keys/gamma.json')]));
    await expect(open({ fromWallets: 3 })).rejects.toThrow(/wallet beta: key file .*gamma\.json is the key of address/);
  });
});
