// withdraw and burn as plan steps (issue 12): the real service documents them with the body and
// signed message of a deposit; they run under the same caps, holds and exactly-once rules. Driven
// through the real executor against the sandbox, which verifies every signature and keeps a ledger.
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { openStore } from '../../src/store/index.js';
import { openFaultWorld, runOnce, SOL, type FaultWorld } from './faults-harness.js';

const RULES = `  - name: unwind
    when: { pending_sol: { gte: 0.5 } }
    do:
      - withdraw: { symbol: SOL2X, amount: 0.25 }
      - burn: { symbol: SOL5X, amount: 0.1 }
`;

describe('withdraw and burn steps', () => {
  let world: FaultWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('are signed, sent and acknowledged once, in order, and never again in the epoch', async () => {
    world = await openFaultWorld({ rules: RULES });
    const w = world;
    w.sandbox.world.setWallet(w.wallet.address, { shares: { SOL2X: 1n * SOL }, tokens: { SOL5X: 1n * SOL } });
    const one = await runOnce(w);
    expect(one.plans[0]?.steps.map((s) => [s.kind, s.state])).toEqual([
      ['withdraw', 'acknowledged'],
      ['burn', 'acknowledged'],
    ]);
    expect(w.sandbox.ledger().map((e) => [e.op, e.symbol, e.amountLamports])).toEqual([
      ['withdraw', 'SOL2X', SOL / 4n],
      ['burn', 'SOL5X', SOL / 10n],
    ]);
    // Shares and tokens are logged in their unit, never as amount_sol (helper 34).
    expect(one.events.filter((e) => e.event === 'action.acknowledged').map((e) => [e.amount_units, e.unit, e.amount_sol])).toEqual([
      ['0.25', 'SOL2X vault shares', undefined],
      ['0.1', 'SOL5X tokens', undefined],
    ]);
    const two = await runOnce(w);
    expect(two.events.filter((e) => e.event === 'action.sent')).toEqual([]);
    expect(w.sandbox.ledger()).toHaveLength(2);
  });

  it('a refusal about the action (nothing to withdraw) is rejected, and the burn after it is skipped', async () => {
    world = await openFaultWorld({ rules: RULES });
    const w = world;
    const r = await runOnce(w);
    expect(r.plans[0]?.status).toBe('rejected');
    expect(r.plans[0]?.steps.map((s) => [s.kind, s.state])).toEqual([
      ['withdraw', 'rejected'],
      ['burn', 'skipped'],
    ]);
    expect(w.sandbox.ledger()).toEqual([]);
  });

  it('is held like a deposit when its outcome is unknown', async () => {
    world = await openFaultWorld({ rules: RULES });
    const w = world;
    w.sandbox.world.setWallet(w.wallet.address, { shares: { SOL2X: 1n * SOL }, tokens: { SOL5X: 1n * SOL } });
    w.sandbox.addFault({ kind: 'apply_then_5xx', match: { op: 'withdraw', wallet: w.wallet.address } });
    const one = await runOnce(w);
    expect(one.plans[0]?.steps.map((s) => s.state)).toEqual(['unknown', 'planned']);
    w.sandbox.advanceEpoch();
    w.sandbox.world.setWallet(w.wallet.address, { pendingLamports: SOL });
    const two = await runOnce(w);
    expect(two.events.find((e) => e.event === 'rule.skipped')).toMatchObject({ reason: 'blocked_unknown_step' });
    expect(w.sandbox.ledger().map((e) => e.op)).toEqual(['withdraw']);
  });

  it('a withdraw recorded as a share of the claim (before the config refused it) is skipped, never sized from lamports', async () => {
    // helper 34: 50% of the lamports claimed is no count of shares. A plan recorded by an earlier
    // release resumes after the upgrade: its claim goes, its withdraw does not.
    world = await openFaultWorld({ rules: `  - name: unwind\n    when: { pending_sol: { gte: 0.5 } }\n    do:\n      - claim\n      - withdraw: { symbol: SOL2X, amount: 0.25 }\n` });
    const w = world;
    w.sandbox.world.setWallet(w.wallet.address, { shares: { SOL2X: 10n * SOL } });
    const store = openStore(w.config.state.path, { logger: createLogger({ redactor: new Redactor(), destination: { write: () => {} } }) });
    const epoch = new Date().toISOString().slice(0, 10);
    store.insertPlan(
      { wallet: 'w', address: w.wallet.address, rule: 'unwind', epoch, seq: 0, steps: [{ kind: 'claim' }, { kind: 'withdraw', symbol: 'SOL2X', amount: { kind: 'percent', ppm: 500_000 } }], estimateLamports: SOL },
      { dry: false, reason: 'recorded by an earlier release' },
    );
    store.close();
    const r = await runOnce(w);
    expect(r.plans[0]?.steps.map((s) => [s.kind, s.state])).toEqual([
      ['claim', 'acknowledged'],
      ['withdraw', 'skipped'],
    ]);
    expect(w.sandbox.ledger().map((e) => e.op)).toEqual(['claim']);
  });
});
