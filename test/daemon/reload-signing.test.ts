// A setup mistake must not burn the epoch (issue 12): with a wrong header prefix the first claim is
// refused as an invalid request; its plan ends `failed` (spending no limit), signing pauses, and
// once a reload fixes the prefix the rule fires again and the claim goes through in the same epoch.
// Driven in-process: a real runtime, the in-process sandbox (which checks headers and signatures),
// captured JSON log lines, the sandbox's own ledger.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import { createEvents, type StepEvent } from '../../src/events.js';
import type { Runtime } from '../../src/runtime.js';
import { makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

/** One wallet, a rule that claims whatever is pending, once an epoch; `api` adds lines under api:. */
const yaml = (w: TestWallet, api: string): string => sandboxYaml([w], { threshold: '0.000000001', api });

describe('a wrong signing setup, fixed by a reload, in the same epoch', () => {
  let dir: string;
  let cleanup: () => void;
  let configPath: string;
  let wallet: TestWallet;
  let app: InProcess;
  let runtime: Runtime;
  let daemon: Daemon;
  const named = (event: string) => app.log.events(event);
  let outcomes: StepEvent[];

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-reload-signing-'));
    [wallet] = makeWallets(dir, ['alpha']) as [TestWallet];
    configPath = join(dir, 'autoclaim.yaml');
    writeFileSync(configPath, yaml(wallet, '  header_prefix: x-wrong\n'));
    outcomes = [];
    app = await startInProcess({
      dir,
      configPath,
      events: (logger) => {
        const events = createEvents({ logger });
        events.on('step:outcome', (e) => void outcomes.push(e));
        return events;
      },
    });
    ({ runtime, daemon } = app);
  });

  afterEach(async () => {
    await app.stop();
    cleanup();
  });

  it('fails the plan without spending the epoch, pauses signing, and claims after the fix', async () => {
    const sandbox = runtime.sandbox!;
    const first = await daemon.once();
    expect(first.failed).toBe(1);
    expect(sandbox.ledger()).toEqual([]);
    const [plan] = await runtime.store.listPlans({ address: wallet.address });
    expect(plan).toMatchObject({ status: 'failed', seq: 0 });
    expect(plan!.steps.map((s) => s.state)).toEqual(['failed']);
    expect(named('action.failed')).toHaveLength(1);
    expect(named('signing.paused')[0]).toMatchObject({ scope: 'wallet', level: 'error' });
    // The hint comes from the server's words (issue 27): a missing header names the prefix, with
    // the server's code, message, status and request id; it is not a clock problem.
    const paused = named('signing.paused')[0]!;
    expect(paused).toMatchObject({ hint: 'headers', code: 'missing_header', http_status: 400 });
    expect(String(paused['server_message'])).toMatch(/missing x-svc-ts header/);
    expect(String(paused['request_id'])).toMatch(/^[0-9a-f-]{36}$/);
    expect(String(paused['msg'])).toMatch(/api\.header_prefix/);
    expect(named('clock.skew')).toEqual([]);
    expect(daemon.signingPauses().wallets.get(wallet.address)?.refusal).toMatchObject({ hint: 'headers', code: 'missing_header' });
    // Its notice names the amount the claim was sized for (the pending seen) beside the server's words.
    expect(outcomes).toMatchObject([{ kind: 'claim', state: 'failed', code: 'missing_header', http_status: 400 }]);
    expect(outcomes[0]?.amountLamports).toBeGreaterThan(0n);

    // Paused: another cycle polls, decides nothing and signs nothing.
    await daemon.once();
    expect(runtime.store.listPlans({ address: wallet.address })).toHaveLength(1);
    expect(sandbox.ledger()).toEqual([]);

    // A reload that does not touch the signing setup leaves the pause in place.
    writeFileSync(configPath, yaml(wallet, '  header_prefix: x-wrong\n  timeout_ms: 9000\n'));
    expect(daemon.reload()).toBe(true);
    await daemon.once();
    expect(sandbox.ledger()).toEqual([]);

    // The fix: the default prefix. The rule fires again in the same epoch, at the next seq.
    writeFileSync(configPath, yaml(wallet, ''));
    expect(daemon.reload()).toBe(true);
    expect(named('signing.reconfigured').at(-1)).toMatchObject({ signing: true, pauses_lifted: 1 });
    const fixed = await daemon.once();
    expect(fixed.failed).toBe(0);
    const ledger = sandbox.ledger();
    expect(ledger.map((e) => e.op)).toEqual(['claim']);
    const plans = await runtime.store.listPlans({ address: wallet.address });
    expect(plans.map((p) => [p.seq, p.status, p.epoch])).toEqual([
      [1, 'done', plan!.epoch],
      [0, 'failed', plan!.epoch],
    ]);

    // And once_per_epoch holds from there: the done plan spends the epoch.
    await daemon.once();
    expect(sandbox.ledger()).toHaveLength(1);
  });
});
