// Issue 4, faults on the wire, continued: what an `unknown` deposit or mint does to the rest of its
// wallet (SPEC §2: further deposits and mints stop until an operator resolves it), a 4xx that says
// the request was invalid (rejected, never re-sent), and the CLI's `once` agreeing with the table.
import { afterEach, describe, expect, it } from 'vitest';
import { openFaultWorld, runOnce, RULES, SOL, type FaultWorld } from './faults-harness.js';
import { runCli } from '../e2e/helpers.js';

const TWO_RULES = `  - name: compound
    when: { pending_sol: { gte: 0.5 } }
    do:
      - claim
      - deposit: { symbol: SOL2X, amount: "50%" }
  - name: lever
    when: { pending_sol: { gte: 0.5 } }
    do:
      - mint: { symbol: SOL5X, amount: 0.1 }
`;

describe('an unknown deposit or mint holds the wallet', () => {
  let world: FaultWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('holds the mint already planned, and the next epoch’s plans, until an operator resolves it', async () => {
    world = await openFaultWorld({ rules: TWO_RULES, balanceLamports: SOL });
    const w = world;
    w.sandbox.addFault({ kind: 'apply_then_5xx', match: { op: 'deposit', wallet: w.wallet.address } });

    const one = await runOnce(w);
    const [lever, compound] = one.plans; // newest first
    expect(compound?.steps.map((s) => s.state)).toEqual(['acknowledged', 'unknown']);
    expect(lever?.steps.map((s) => s.state)).toEqual(['planned']);
    expect(one.events.filter((e) => e.event === 'action.blocked').map((e) => e.kind)).toEqual(['mint']);
    expect(w.applied('deposit')).toHaveLength(1); // the server did apply it
    expect(w.applied('mint')).toHaveLength(0);

    // A new epoch with rewards again: neither rule may plan, the open mint stays held, the deposit
    // is not re-sent.
    w.sandbox.advanceEpoch();
    w.sandbox.world.setWallet(w.wallet.address, { pendingLamports: SOL });
    const two = await runOnce(w);
    expect(two.plans).toHaveLength(2);
    const skipped = two.events.filter((e) => e.event === 'rule.skipped');
    expect(skipped.map((e) => [e.rule, e.reason])).toEqual([
      ['compound', 'blocked_unknown_step'],
      ['lever', 'blocked_unknown_step'],
    ]);
    expect(w.sandbox.ledger().map((e) => e.op)).toEqual(['claim', 'deposit']);

    // The operator checks the chain and says it was applied; then everything resumes, once: the
    // held mint of the first epoch (its condition holds again on a fresh summary), and the second
    // epoch's two plans. The second epoch's mint is judged again right before it is signed, after
    // that epoch's claim emptied pending: its condition (pending_sol >= 0.5) no longer holds, so it
    // is skipped rather than sent on a stale reading.
    const unknownStep = compound?.steps[1];
    const resolved = await runCli(['actions', 'resolve', String(unknownStep?.id), '--applied', '--config', w.config.file], { cwd: w.dir });
    expect(resolved.code).toBe(0);
    const three = await runOnce(w);
    expect(three.events.filter((e) => e.event === 'action.blocked')).toEqual([]);
    expect(w.sandbox.ledger().map((e) => e.op)).toEqual(['claim', 'deposit', 'mint', 'claim', 'deposit']);
    expect(three.plans.map((p) => [p.rule, p.status, p.steps.map((s) => s.state).join(',')])).toEqual([
      ['lever', 'done', 'skipped'],
      ['compound', 'done', 'acknowledged,acknowledged'],
      ['lever', 'done', 'acknowledged'],
      ['compound', 'done', 'acknowledged,acknowledged'],
    ]);
    expect(three.events.find((e) => e.event === 'plan.skipped')).toMatchObject({ rule: 'lever', code: 'condition' });
    const four = await runOnce(w);
    expect(four.events.filter((e) => e.event === 'action.sent')).toEqual([]);
    expect(w.sandbox.ledger()).toHaveLength(5);
  });

  it.each([
    ['applied', 'apply_then_5xx', 1, true],
    ['not applied', 'reset_before', 1, false],
  ] as const)('a claim %s whose answer is lost while the summary cannot be read stays unknown, then is reconciled', async (_what, kind, applied, wasApplied) => {
    world = await openFaultWorld({ rules: RULES.claim });
    world.sandbox.addFault({ kind, match: { op: 'claim', wallet: world.wallet.address } });
    const one = await runOnce(world, { readsFailAfter: 'claim' });
    expect(one.state('claim')).toBe('unknown');
    expect(one.events.filter((e) => e.event === 'action.reconciled')).toEqual([]);
    expect(world.applied('claim')).toHaveLength(wasApplied ? 1 : 0);

    const two = await runOnce(world);
    expect(two.events.filter((e) => e.event === 'action.reconciled').map((e) => e.applied)).toEqual([wasApplied]);
    expect(two.state('claim')).toBe('acknowledged');
    expect(two.attempts('claim')).toHaveLength(wasApplied ? 1 : 2);
    expect(world.applied('claim')).toHaveLength(applied);
  });

  it('a 4xx that says the request is invalid: rejected, nothing applied, never sent again', async () => {
    // SOL9X is not a symbol the service knows: it answers 404 before applying anything.
    world = await openFaultWorld({ rules: RULES.mint.replace('SOL5X', 'SOL9X') });
    const one = await runOnce(world);
    expect(one.state('claim')).toBe('acknowledged');
    expect(one.state('mint')).toBe('rejected');
    expect(one.events.find((e) => e.event === 'action.rejected')?.status).toBe(404);
    const two = await runOnce(world);
    expect(two.state('mint')).toBe('rejected');
    expect(two.attempts('mint')).toHaveLength(1);
    expect(world.applied('mint')).toHaveLength(0);
    expect(world.sandbox.stats().byOp.mint).toEqual({ 404: 1 });
  });
});

describe('the CLI `once` agrees with the table', () => {
  let world: FaultWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it.each([
    // [op, fault kind, exit of the first once, of the second, step state, applications after two onces]
    // A deferred step (429) leaves the first `once` with work undone: exit 1, then 0 once it went out.
    ['claim', 'apply_then_drop', 0, 0, 'acknowledged', 1],
    ['claim', 'reset_before', 0, 0, 'acknowledged', 1],
    ['deposit', 'apply_then_5xx', 1, 1, 'unknown', 1],
    ['mint', 'status5xx_before', 1, 1, 'unknown', 0],
    ['deposit', 'rate_limit', 1, 0, 'acknowledged', 1],
  ] as const)('%s with %s: exit %i then %i, step %s, %i application(s)', async (op, kind, exit, exitAgain, state, applied) => {
    world = await openFaultWorld({ rules: RULES[op] });
    const w = world;
    w.sandbox.addFault({ kind, match: { op, wallet: w.wallet.address } });
    const first = await runCli(['once', '--config', w.config.file], { cwd: w.dir });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(exit);
    const second = await runCli(['once', '--config', w.config.file], { cwd: w.dir });
    expect(second.code).toBe(exitAgain);
    const actions = await runCli(['actions', '--json', '--config', w.config.file], { cwd: w.dir });
    const plans = (JSON.parse(actions.stdout) as { plans: Array<{ steps: Array<{ kind: string; state: string }> }> }).plans;
    expect(plans).toHaveLength(1);
    expect(plans[0]?.steps.find((s) => s.kind === op)?.state).toBe(state);
    expect(w.applied(op)).toHaveLength(applied);
  });
});
