// A wallet is its address (issue 11, item 4): renaming a wallet in the config, same address, used to
// send a second fixed deposit in the same epoch, because the plan key, the unknown-step hold, the
// last x-svc-ts, cooldowns and windows all followed the name. Here a real state file, a real
// runtime and daemon, and an external sandbox whose ledger outlives every restart: the deposit is
// applied once under the old name, then the wallet is renamed and (i) reloaded, (ii) restarted,
// (iii) killed -9 right after the deposit was written and restarted — never a second deposit.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { systemClock, type Clock } from '../../src/domain.js';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { buildOnce } from './build.js';
import { CANARY_API_KEY, configYaml, makeWallets, parseEvents, runCli, spawnCli, tempDir, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

/** A fixed deposit, once an epoch: the rule whose second firing would be the bug. */
const STASH = `  - name: stash
    do:
      - deposit: { symbol: SOL2X, amount: 0.25 }
    limits: { once_per_epoch: true }
`;

interface StatusRow {
  wallet: string;
  address: string;
  unknownSteps: number[];
  lastActions: Array<{ plan: number; rule: string; epoch: string; status: string; steps: Array<{ kind: string; state: string; amountSol: string | null }> }>;
}

describe('renaming a wallet (same address)', () => {
  let dir: string;
  let cleanup: () => void;
  let sandbox: Sandbox;
  let wallet: TestWallet;
  let configPath: string;
  let log: string;
  let runtime: Runtime | undefined;
  let daemon: Daemon;

  const deposits = () => sandbox.ledger().filter((e) => e.op === 'deposit' && e.wallet === wallet.address);
  const events = (name: string) => parseEvents(log).filter((e) => e['event'] === name);
  /** The config with the wallet under `name`; the key file stays the one written for `a`. */
  const writeConfig = (name: string) => {
    const yaml = configYaml({ baseUrl: sandbox.url, wallets: [wallet], rules: STASH, apiExtra: '  claim_settle: 0s\n' });
    writeFileSync(configPath, yaml.replace('  - name: a\n', `  - name: ${name}\n`));
  };
  /** A new process on the same state file: a fresh runtime and daemon. */
  const start = async (clock: Clock = systemClock) => {
    const redactor = new Redactor().add(CANARY_API_KEY);
    const logger = createLogger({ level: 'debug', redactor, destination: { write: (line: string) => void (log += line) } });
    const common = { configPath, env: { AUTOCLAIM_API_KEY: CANARY_API_KEY }, cwd: dir, clock, logger, redactor };
    runtime = await openRuntime({ ...common, lock: true });
    daemon = new Daemon({ ...common, runtime, dry: false, failpoint: () => {} });
  };
  const stop = async () => {
    await runtime?.close();
    runtime = undefined;
  };
  const status = async (): Promise<StatusRow[]> => {
    const r = await runCli(['status', '--json', '--config', configPath], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { wallets: StatusRow[] }).wallets;
  };

  beforeAll(() => buildOnce(), 120_000);

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-rename-'));
    [wallet] = makeWallets(dir, ['a']) as [TestWallet];
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallet.address, pendingLamports: 0n, accrualLamportsPerSec: 0n, balanceLamports: 10n * SOL }],
    });
    configPath = join(dir, 'autoclaim.yaml');
    log = '';
    writeConfig('a');
  });

  afterEach(async () => {
    await stop();
    await sandbox.close();
    cleanup();
  });

  it('(i) reload and (ii) restart under the new name: no second deposit in the epoch; status shows the old history under the new name', async () => {
    await start();
    await daemon.once();
    expect(deposits().map((e) => e.amountLamports)).toEqual([SOL / 4n]);

    // (i) renamed, reloaded in the running daemon.
    writeConfig('b');
    expect(daemon.reload()).toBe(true);
    expect(daemon.currentConfig.wallets.map((w) => w.name)).toEqual(['b']);
    await daemon.once();
    expect(deposits()).toHaveLength(1);
    expect(events('rule.skipped').filter((e) => e['wallet'] === 'b').map((e) => e['reason'])).toEqual(['once_per_epoch']);

    // (ii) a new process over the same state file, under the new name.
    await stop();
    await start();
    await daemon.once();
    expect(deposits()).toHaveLength(1);
    expect(events('rule.skipped').filter((e) => e['wallet'] === 'b').map((e) => e['reason'])).toEqual(['once_per_epoch', 'once_per_epoch']);
    expect(events('action.sent').filter((e) => e['wallet'] === 'b')).toEqual([]);
    await stop();

    const [row, ...more] = await status();
    expect(more).toEqual([]);
    expect(row).toMatchObject({ wallet: 'b', address: wallet.address, unknownSteps: [] });
    expect(row?.lastActions).toEqual([
      expect.objectContaining({ rule: 'stash', epoch: sandbox.world.epoch(), status: 'done', steps: [expect.objectContaining({ kind: 'deposit', state: 'acknowledged', amountSol: '0.25' })] }),
    ]);

    // Not a rule that never fires again: the next epoch deposits once more, under the new name.
    sandbox.advanceEpoch();
    await start();
    await daemon.once();
    expect(deposits()).toHaveLength(2);
    expect(deposits()[1]?.epoch).toBe(sandbox.world.epoch());
  });

  it('the last signed timestamp follows the address: after a rename, the next request is still strictly newer', async () => {
    // Our clock stands still, so only the stored last x-svc-ts can make the second request newer:
    // keyed by name, the renamed wallet would sign the same second, and the server (which refuses
    // a replayed signature) would see the same deposit message signed again.
    const now = systemClock.now();
    const frozen: Clock = { now: () => now, monotonic: () => 1_000 };
    await start(frozen);
    await daemon.once();
    writeConfig('b');
    sandbox.advanceEpoch();
    await stop();
    await start(frozen);
    await daemon.once();
    expect(deposits()).toHaveLength(2);
    const ts = (await runtime!.store.listPlans({})).flatMap((p) => p.steps).map((s) => s.request?.ts ?? 0).sort((x, y) => x - y);
    expect(ts).toEqual([Math.floor(now / 1000), Math.floor(now / 1000) + 1]);
  });

  it('(iii) kill -9 right after the deposit is written, rename, restart: the deposit is held as unknown, never re-sent', async () => {
    const child = spawnCli(['once', '--config', configPath], { cwd: dir, env: { AUTOCLAIM_FAILPOINT: 'after_request_written' } });
    const exit = await child.exited;
    expect(exit.signal, child.stderr()).toBe('SIGKILL');
    // Killed as the request hit the socket: the server may or may not have read it whole.
    const landed = deposits().length;
    expect(landed).toBeLessThanOrEqual(1);

    writeConfig('b');
    const again = await runCli(['once', '--config', configPath], { cwd: dir });
    const unknown = again.events.filter((e) => e['event'] === 'action.unknown');
    expect(unknown).toHaveLength(1);
    expect(unknown[0]).toMatchObject({ level: 'error', kind: 'deposit' });
    expect(again.events.filter((e) => e['event'] === 'action.sent')).toEqual([]);
    expect(deposits()).toHaveLength(landed);

    // And again: still held, still one plan for the epoch, under the new name.
    const third = await runCli(['once', '--config', configPath], { cwd: dir });
    expect(third.events.filter((e) => e['event'] === 'action.sent')).toEqual([]);
    expect(deposits()).toHaveLength(landed);
    const [row] = await status();
    expect(row?.wallet).toBe('b');
    expect(row?.lastActions).toHaveLength(1);
    expect(row?.lastActions[0]?.steps.map((s) => s.state)).toEqual(['unknown']);
    expect(row?.unknownSteps).toHaveLength(1);

    // The hold is the address's: in the next epoch the renamed wallet's deposit rule still waits for the operator.
    sandbox.advanceEpoch();
    const next = await runCli(['once', '--config', configPath], { cwd: dir });
    expect(next.events.filter((e) => e['event'] === 'action.sent')).toEqual([]);
    expect(next.events.filter((e) => e['event'] === 'rule.skipped').map((e) => [e['wallet'], e['reason']])).toEqual([['b', 'blocked_unknown_step']]);
    expect(deposits()).toHaveLength(landed);
  }, 60_000);
});
