// Mint, withdraw and burn, a hostile review (helper h29e, docs/reliability.md): the findings about
// plans whose money path is not claim → deposit, each driven through the real executor against the
// sandbox, which verifies every signature and keeps a ledger of what it applied.
import { afterEach, describe, expect, it } from 'vitest';
import { openFaultWorld, runOnce, SOL, type FaultWorld } from './faults-harness.js';

describe('mint, withdraw and burn (helper h29e)', () => {
  let world: FaultWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  // it.fails: today the old epoch's burn goes out beside the new epoch's, two in one turn. A held
  // plan none of whose steps went out in its epoch is sent late by design (recheck.test.ts's table,
  // faults-consequences.test.ts: "the held mint of the first epoch" resumes); the fix, skipping
  // such a first step as a claim is skipped, is a change of that choice for the lead to make
  // (docs/reliability.md, helper h29e).
  it.fails("a plan whose first step is a burn, held past its epoch, is not sent beside the new epoch's own plan", async () => {
    // Two rules, once per epoch each (the default). The withdraw goes out; every read after it
    // fails, so the burn's fresh summary cannot be read and its plan stays open, unsent (as after a
    // crash right after the plan was recorded, or a summary endpoint down until midnight).
    world = await openFaultWorld({
      rules: `  - name: out
    do:
      - withdraw: { symbol: SOL2X, amount: 0.25 }
  - name: unwind
    do:
      - burn: { symbol: SOL5X, amount: 0.1 }
`,
    });
    const w = world;
    w.sandbox.world.setWallet(w.wallet.address, { shares: { SOL2X: 10n * SOL }, tokens: { SOL5X: 10n * SOL } });
    const one = await runOnce(w, { readsFailAfter: 'withdraw' });
    expect(Object.fromEntries(one.plans.map((p) => [p.rule, p.steps[0]?.state]))).toEqual({ out: 'acknowledged', unwind: 'planned' });
    expect(w.applied('burn')).toEqual([]);
    // The epoch turns before the next turn: the old plan's burn was never sent in its epoch.
    w.sandbox.advanceEpoch();
    await runOnce(w);
    // Once per epoch: one burn for the new epoch. The old epoch's burn, sent now, made two in a
    // turn (as a claim's plan is skipped when its epoch rolled over before it was sent).
    expect(w.applied('burn').map((e) => e.amountLamports)).toEqual([SOL / 10n]);
    expect(w.applied('withdraw')).toHaveLength(2);
  });

  it('an unknown burn says what it holds: withdraws and burns too, not "deposits and mints"', async () => {
    // Every line an operator reads about it named deposits and mints only, while the withdraw of
    // the next epoch was held by it as well: read literally, the unwind would still run.
    world = await openFaultWorld({
      rules: `  - name: unwind
    do:
      - burn: { symbol: SOL5X, amount: 0.1 }
  - name: out
    do:
      - withdraw: { symbol: SOL2X, amount: 0.25 }
`,
    });
    const w = world;
    w.sandbox.world.setWallet(w.wallet.address, { shares: { SOL2X: 10n * SOL }, tokens: { SOL5X: 10n * SOL } });
    w.sandbox.addFault({ kind: 'apply_then_5xx', match: { op: 'burn', wallet: w.wallet.address } });
    const one = await runOnce(w);
    const unknown = one.events.find((e) => e.event === 'action.unknown');
    expect(unknown?.msg).toMatch(/Further deposits, mints, withdraws and burns of this wallet are held/);
    // The withdraw planned in the same turn is held by it, and says by what.
    const blocked = one.events.find((e) => e.event === 'action.blocked');
    expect(blocked).toMatchObject({ kind: 'withdraw' });
    expect(blocked?.msg).toMatch(/an earlier deposit, mint, withdraw or burn of this wallet is unknown/);
    w.sandbox.advanceEpoch();
    const two = await runOnce(w);
    const skipped = two.events.find((e) => e.event === 'rule.skipped');
    expect(skipped).toMatchObject({ reason: 'blocked_unknown_step' });
    expect(String(skipped?.detail)).toMatch(/^an unknown deposit, mint, withdraw or burn is open for this wallet/);
    expect(w.sandbox.ledger().map((e) => e.op)).toEqual(['burn']);
  });

  it.each([
    ['mint', '{"status":"success","tx":"t1","mint":{"address":"So1","symbol":"SOL5X"},"received":49.9921}'],
    ['mint', '{"status":"success","tx":{"signature":"t1"},"mint":"SOL5X","received":{"amount":"49.9921","unit":"SOL5X"}}'],
    ['burn', '{"status":"success","tx":"t1","received":{"sol":0.1}}'],
  ] as const)('a %s answered "success" with a field of another shape than the example is applied, not unknown: %s', async (op, body) => {
    // Only `status` and `error` say whether it was applied (SPEC §2); `mint`, `tx` and `received`
    // are said for the reader. Refused as unreadable, an applied action turned unknown and held
    // every deposit, mint, withdraw and burn of the wallet until an operator resolved it.
    world = await openFaultWorld({ rules: `  - name: r\n    do:\n      - ${op}: { symbol: SOL5X, amount: 0.1 }\n`, balanceLamports: SOL });
    const w = world;
    w.sandbox.world.setWallet(w.wallet.address, { tokens: { SOL5X: SOL } });
    w.sandbox.addFault({ kind: 'malformed', body, apply: true, match: { op, wallet: w.wallet.address } });
    const r = await runOnce(w);
    expect(w.applied(op)).toHaveLength(1);
    expect(r.state(op)).toBe('acknowledged');
    // What it said is kept as it came.
    expect(r.plans[0]?.steps[0]?.responseRaw).toBe(body);
  });
});
