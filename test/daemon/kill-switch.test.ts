// The kill switch (issue 27): safety.paused, `autoclaim pause` (recorded beside the state, read at
// start and at SIGUSR2), a wallet's and a rule's `enabled: false`. Each keeps polling and deciding
// (dry plans, logged) and signs nothing; lifting it lets the claim through. Driven in-process: a
// real runtime, the in-process sandbox and its ledger, captured log lines.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain.js';
import { createEvents } from '../../src/events.js';
import { DaemonControl } from '../../src/service/control-daemon.js';
import { controlPaths, readDaemonInfo, writePause } from '../../src/service/control.js';
import { makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

describe('the kill switch', () => {
  let cleanup: (() => void) | undefined;
  let app: InProcess | undefined;

  afterEach(async () => {
    await app?.stop();
    cleanup?.();
    app = undefined;
    cleanup = undefined;
  });

  async function open(edit: (yaml: string) => string, names = ['alpha']) {
    const t = tempDir('autoclaim-kill-switch-');
    cleanup = t.cleanup;
    const wallets: TestWallet[] = makeWallets(t.dir, names);
    const configPath = join(t.dir, 'autoclaim.yaml');
    writeFileSync(configPath, edit(sandboxYaml(wallets, { threshold: '0.000000001' })));
    app = await startInProcess({ dir: t.dir, configPath, events: (logger) => createEvents({ logger }) });
    return { dir: t.dir, configPath, wallets, app };
  }

  const dryPlans = async (a: InProcess, address: string) => (await a.runtime.store.listPlans({ address })).filter((p) => p.dry).length;

  it('safety.paused: polled, decided dry and logged, nothing signed; a reload that lifts it lets the claim through', async () => {
    const { configPath, wallets, app: a } = await open((y) => y.replace('  max_sol_per_action: 100\n', '  max_sol_per_action: 100\n  paused: true\n'));
    const w = wallets[0]!;
    const r = await a.daemon.once();
    expect(r.polled).toBe(1);
    expect(a.runtime.sandbox!.ledger()).toEqual([]);
    expect(await dryPlans(a, w.address)).toBe(1);
    expect(a.log.events('plan.dry')[0]).toMatchObject({ held: expect.stringMatching(/kill switch \(safety\.paused/) as unknown });
    expect(a.daemon.killSwitch(undefined)?.reason).toMatch(/safety\.paused/);
    // Not a fault: readiness and the signing-paused alert do not count it.
    expect(a.daemon.signingPauses().all).toBeUndefined();

    writeFileSync(configPath, sandboxYaml(wallets, { threshold: '0.000000001' }));
    expect(a.daemon.reload()).toBe(true);
    await a.daemon.once();
    expect(a.runtime.sandbox!.ledger().map((e) => e.op)).toEqual(['claim']);
  });

  it('enabled: false on a wallet holds that wallet only; on a rule, that rule decides dry', async () => {
    const { wallets, app: a } = await open((y) => y.replace(/( {2}- name: beta\n {4}address: \S+\n {4}key: \{[^\n]*\}\n)/, '$1    enabled: false\n'), ['alpha', 'beta']);
    await a.daemon.once();
    const ledger = a.runtime.sandbox!.ledger();
    expect(ledger.map((e) => e.wallet)).toEqual([wallets[0]!.address]);
    expect(await dryPlans(a, wallets[1]!.address)).toBe(1);
    expect(a.daemon.killSwitch(wallets[1]!.address)?.scope).toBe('wallet');
    expect(a.daemon.killSwitch(wallets[0]!.address)).toBeUndefined();
  });

  it('enabled: false added to a wallet by a reload holds it from then on; removed, it lets go', async () => {
    const { configPath, wallets, app: a } = await open((y) => y, ['alpha', 'beta']);
    const beta = wallets[1]!.address;
    expect(a.daemon.killSwitch(beta)).toBeUndefined();
    const held = sandboxYaml(wallets, { threshold: '0.000000001' }).replace(/( {2}- name: beta\n {4}address: \S+\n {4}key: \{[^\n]*\}\n)/, '$1    enabled: false\n');
    writeFileSync(configPath, held);
    expect(a.daemon.reload()).toBe(true);
    expect(a.daemon.killSwitch(beta)?.scope).toBe('wallet');
    expect(a.daemon.killSwitch(wallets[0]!.address)).toBeUndefined();
    writeFileSync(configPath, sandboxYaml(wallets, { threshold: '0.000000001' }));
    expect(a.daemon.reload()).toBe(true);
    expect(a.daemon.killSwitch(beta)).toBeUndefined();
  });

  it('a rule with enabled: false is decided in dry mode only', async () => {
    const { wallets, app: a } = await open((y) => y.replace('  - name: sweep\n', '  - name: sweep\n    enabled: false\n'));
    await a.daemon.once();
    expect(a.runtime.sandbox!.ledger()).toEqual([]);
    expect(await dryPlans(a, wallets[0]!.address)).toBe(1);
    expect(a.log.events('plan.dry')[0]).toMatchObject({ held: 'rule disabled (enabled: false)' });
  });

  /** A turn under a pause that came mid-step: nothing in the ledger, the claim still planned; lifted, it goes once. */
  async function heldThenSentOnceLifted(a: InProcess): Promise<void> {
    const report = await a.daemon.once();
    expect(a.runtime.sandbox!.ledger()).toEqual([]);
    expect(report.pending).toBe(1);
    const [plan] = await a.runtime.store.listPlans({});
    expect(plan?.steps.map((s) => s.state)).toEqual(['planned']);

    a.daemon.setOperatorPause(undefined);
    await a.daemon.once();
    expect(a.runtime.sandbox!.ledger().map((e) => e.op)).toEqual(['claim']);
  }

  it('autoclaim pause while a planned claim waits for its fresh summary: nothing is signed, and the claim goes once lifted', async () => {
    // The gate was asked before the step's fresh read only: under a busy rate limiter (or a 429's
    // pause) that read can wait minutes, and a pause that came meanwhile did not stop the signature.
    const { app: a } = await open((y) => y);
    const { client } = a.runtime;
    const read = client.walletSummary.bind(client);
    let reads = 0;
    client.walletSummary = async (address) => {
      const summary = await read(address);
      // The turn's poll is the first read; the second is the claim's own, right before signing.
      if (++reads === 2) a.daemon.setOperatorPause({ paused: true, user: 'ops', host: 'bastion', at: Date.now(), reason: 'incident 43' });
      return summary;
    };
    await heldThenSentOnceLifted(a);
  });

  it('autoclaim pause while a signed claim waits for its turn to go out: it is held back unsent, and goes once lifted', async () => {
    const { app: a } = await open((y) => y);
    const { client } = a.runtime;
    const send = client.send.bind(client);
    let paused = false;
    client.send = async (prepared, gate) => {
      // Signed and `sending`, before the rate limiter lets it go (where the gate is asked).
      if (!paused) a.daemon.setOperatorPause({ paused: true, user: 'ops', host: 'bastion', at: Date.now(), reason: 'incident 44' });
      paused = true;
      return send(prepared, gate);
    };
    await heldThenSentOnceLifted(a);
  });

  it('autoclaim pause recorded while the daemon starts, before its pid is named to the CLI: read again once it is', async () => {
    // The command found no daemon file to signal ("a daemon started on this state starts paused")
    // while this daemon had read the record already: it signed on, paused by nobody.
    const { app: a } = await open((y) => y);
    const paths = controlPaths(a.daemon.currentConfig.state.path);
    const events = createEvents({ logger: a.log.logger });
    const control = new DaemonControl({ daemon: a.daemon, events, logger: a.log.logger, clock: systemClock, dry: false });
    control.start();
    expect(readDaemonInfo(paths)).toBeUndefined();
    writePause(paths, { paused: true, user: 'ops', host: 'bastion', at: Date.now(), reason: 'during the start' });
    control.publish();
    expect(a.daemon.killSwitch(undefined)?.reason).toMatch(/during the start/);
    await a.daemon.once();
    expect(a.runtime.sandbox!.ledger()).toEqual([]);
    control.stop();
  });

  it('autoclaim pause, recorded before a start, holds from the first turn; a resume record read at SIGUSR2 lifts it', async () => {
    const { configPath, wallets, app: a } = await open((y) => y);
    const paths = controlPaths(a.daemon.currentConfig.state.path);
    expect(configPath).toBeTruthy();
    writePause(paths, { paused: true, user: 'ops', host: 'bastion', at: Date.parse('2026-11-26T05:00:00Z'), reason: 'incident 42' });
    const events = createEvents({ logger: a.log.logger });
    const control = new DaemonControl({ daemon: a.daemon, events, logger: a.log.logger, clock: systemClock, dry: false });
    control.start();
    control.publish();
    expect(a.log.events('signing.kill_switch_on')[0]).toMatchObject({ reason: 'paused by ops@bastion (autoclaim pause): incident 42' });
    const info = readDaemonInfo(paths);
    expect(info?.alive).toBe(true);
    expect(info?.signing).toMatchObject([{ wallet: 'all', source: 'kill_switch', since: '2026-11-26T05:00:00.000Z', fix: 'autoclaim resume' }]);

    await a.daemon.once();
    expect(a.runtime.sandbox!.ledger()).toEqual([]);
    expect(await dryPlans(a, wallets[0]!.address)).toBe(1);

    writePause(paths, { paused: false, user: 'ops', host: 'bastion', at: Date.now() });
    control.onPauseSignal();
    expect(a.log.events('signing.kill_switch_off')).toHaveLength(1);
    expect(readDaemonInfo(paths)?.signing).toEqual([]);
    await a.daemon.once();
    expect(a.runtime.sandbox!.ledger().map((e) => e.op)).toEqual(['claim']);
    control.stop();
    expect(readDaemonInfo(paths)).toBeUndefined();
  });
});
