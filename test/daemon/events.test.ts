// The one event channel, heard from outside as metrics, the webhook and alerts hear it: a real
// runtime against the in-process sandbox, a daemon given the channel, one cycle and two reloads.
// The events come at the points the log lines do, with what a subscriber computes with.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import { createEvents, type AutoclaimEventMap, type AutoclaimEventName, type AutoclaimEvents } from '../../src/events.js';
import type { Logger } from '../../src/log/logger.js';
import { makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

const yaml = (wallets: TestWallet[], threshold?: string): string => sandboxYaml(wallets, threshold === undefined ? {} : { threshold });

type Heard = { [K in AutoclaimEventName]: { name: K; payload: AutoclaimEventMap[K] } }[AutoclaimEventName];

/** The wallet an event is about, by its configured name. */
function walletOf(h: Heard): string | undefined {
  if (h.name === 'poll:ok' || h.name === 'poll:failed') return h.payload.wallet.name;
  if (h.name === 'plan:recorded' || h.name === 'plan:settled' || h.name === 'step:outcome') return h.payload.wallet;
  return undefined;
}

const NAMES: AutoclaimEventName[] = ['poll:ok', 'poll:failed', 'plan:recorded', 'plan:settled', 'step:outcome', 'request:done', 'cycle:done', 'config:reloading', 'config:reloaded'];

describe('the daemon on the event channel', () => {
  let cleanup: () => void;
  let configPath: string;
  let wallets: TestWallet[];
  let app: InProcess;
  let daemon: Daemon;
  let events: AutoclaimEvents;
  let heard: Heard[];

  const of = <K extends AutoclaimEventName>(name: K): Array<AutoclaimEventMap[K]> =>
    heard.filter((h) => h.name === name).map((h) => h.payload as AutoclaimEventMap[K]);

  beforeEach(async () => {
    let dir: string;
    ({ dir, cleanup } = tempDir('autoclaim-events-'));
    wallets = makeWallets(dir, ['alpha', 'beta']);
    configPath = join(dir, 'autoclaim.yaml');
    writeFileSync(configPath, yaml(wallets));
    heard = [];
    const listen = (logger: Logger): AutoclaimEvents => {
      events = createEvents({ logger });
      for (const name of NAMES) events.on(name, (payload) => void heard.push({ name, payload } as Heard));
      return events;
    };
    app = await startInProcess({ dir, configPath, level: 'info', events: listen });
    ({ daemon } = app);
  });

  afterEach(async () => {
    await app.stop();
    cleanup();
  });

  it('tells each poll, plan, step and HTTP exchange of a cycle, in the order they happen', async () => {
    const report = await daemon.once();
    expect(report.polled).toBe(2);

    expect(of('poll:ok').map((e) => e.wallet.name).sort()).toEqual(['alpha', 'beta']);
    expect(of('poll:failed')).toEqual([]);
    for (const e of of('poll:ok')) expect(e.summary.pendingLamports).toBeGreaterThan(0n);

    const recorded = of('plan:recorded');
    expect(recorded.map((e) => [e.wallet, e.rule, e.dry]).sort()).toEqual([
      ['alpha', 'sweep', false],
      ['beta', 'sweep', false],
    ]);
    // An anomaly (the demo's accrual between the fresh read and the claim, beyond the slack, on a
    // loaded machine) is told beside the step's own outcome: not what this test is about.
    const steps = of('step:outcome').filter((e) => e.state !== 'anomaly');
    expect(steps.map((e) => [e.wallet, e.kind, e.state]).sort()).toEqual([
      ['alpha', 'claim', 'acknowledged'],
      ['beta', 'claim', 'acknowledged'],
    ]);
    for (const s of steps) {
      expect(s.amountLamports).toBeGreaterThan(0n);
      expect(recorded.map((r) => r.plan)).toContain(s.plan);
    }
    expect(of('plan:settled').map((e) => [e.wallet, e.status]).sort()).toEqual([
      ['alpha', 'done'],
      ['beta', 'done'],
    ]);

    // One wallet's turn, in order: its poll, its plan, the step, the plan's end.
    const alpha = heard.filter((h) => walletOf(h) === 'alpha' && !(h.name === 'step:outcome' && h.payload.state === 'anomaly'));
    expect(alpha.map((h) => h.name)).toEqual(['poll:ok', 'plan:recorded', 'step:outcome', 'plan:settled']);

    // Every request the client made: the summaries (the poll and the fresh read before signing) and the claims.
    const requests = of('request:done');
    expect(requests.filter((r) => r.method === 'POST' && r.status === 200)).toHaveLength(2);
    expect(requests.filter((r) => r.method === 'GET').length).toBeGreaterThanOrEqual(2);
    for (const r of requests) expect(r.seconds).toBeGreaterThanOrEqual(0);

    // `once` is not a scheduled cycle.
    expect(of('cycle:done')).toEqual([]);
  });

  it("names each step's tx (from the API's answer) and a deposit's symbol, as the notices show them", async () => {
    // A claim, then a deposit of half of it into SOL2X.
    writeFileSync(configPath, yaml(wallets).replace('      - claim\n', '      - claim\n      - deposit: { symbol: SOL2X, amount: "50%" }\n'));
    expect(daemon.reload()).toBe(true);
    await daemon.once();
    const ledger = app.runtime.sandbox!.ledger();
    const steps = of('step:outcome').filter((e) => e.wallet === 'alpha' && e.state !== 'anomaly');
    expect(steps.map((e) => [e.kind, e.state, e.symbol])).toEqual([
      ['claim', 'acknowledged', undefined],
      ['deposit', 'acknowledged', 'SOL2X'],
    ]);
    const alpha = wallets.find((w) => w.name === 'alpha')!.address;
    for (const s of steps) {
      const entry = ledger.find((e) => e.wallet === alpha && e.op === s.kind);
      expect(s.tx, s.kind).toBe(entry?.tx);
      expect(s.tx).toMatch(/\S/);
    }
  });

  it('a listener that throws costs neither the cycle nor the other listeners', async () => {
    events.on('poll:ok', () => {
      throw new Error('subscriber bug');
    });
    const report = await daemon.once();
    expect(report).toMatchObject({ polled: 2, plans: 2, failed: 0, crashed: 0 });
    expect(of('step:outcome').filter((e) => e.state !== 'anomaly')).toHaveLength(2);
    const failures = app.log.events('events.listener_failed');
    expect(failures).toHaveLength(2);
    expect(failures[0]?.['name']).toBe('poll:ok');
  });

  it('tells a reload as it starts and how it ended, with every issue of a refused one', () => {
    writeFileSync(configPath, yaml(wallets, '0.5'));
    expect(daemon.reload()).toBe(true);
    writeFileSync(configPath, yaml(wallets).replace('max_sol_per_action: 100', 'max_sol_per_action: -1'));
    expect(daemon.reload()).toBe(false);

    const reloads = heard.filter((h) => h.name === 'config:reloading' || h.name === 'config:reloaded');
    expect(reloads.map((h) => h.name)).toEqual(['config:reloading', 'config:reloaded', 'config:reloading', 'config:reloaded']);
    const [ok, refused] = of('config:reloaded');
    expect(ok).toEqual({ ok: true });
    expect(refused?.ok).toBe(false);
    const invalid = app.log.events('config.invalid')[0];
    expect(refused && !refused.ok ? refused.issues : []).toEqual(invalid?.['issues']);
    expect(refused && !refused.ok ? refused.issues.length : 0).toBeGreaterThan(0);
  });
});
