import { inProcessSigner } from '../../src/keys/backends/in-process.js';
// Time (issue 4): the wall clock stepping back or forward in a running process, an epoch rolling
// over in the middle of a plan, and a server whose clock disagrees with ours. Real code throughout:
// runWalletCycle → decide → PlanExecutor, a real SQLite store in a temp dir, the real sandbox on
// loopback. Only time is fake: true time moves when the test says, and our wall clock, our
// monotonic clock and the server's clock can each be moved on their own.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient, createDispatcher } from '../../src/api/client.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { generateKeypair } from '../../src/keys/signer.js';
import { signerFromSeed } from '../../src/keys/signer.js';
import type { Clock, Rule, WalletConfig } from '../../src/domain.js';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { openStore, type SyncStore } from '../../src/store/index.js';
import { ClockSkewWatch } from '../../src/executor/clock-skew.js';
import { createDecisionClock } from '../../src/executor/decision-clock.js';
import { PlanExecutor } from '../../src/executor/executor.js';
import type { FailpointName } from '../../src/executor/failpoints.js';
import { runWalletCycle } from '../../src/executor/wallet-cycle.js';
import { apiConfig } from '../api/helpers.js';
import { CANARY_API_KEY, parseEvents, tempDir } from '../e2e/helpers.js';
import { cooldownRule, DAY, HOUR, Lines, MIN, SOL, Timeline } from './trust-rig.js';

interface Harness {
  time: Timeline;
  sandbox: Sandbox;
  store: SyncStore;
  wallet: WalletConfig;
  /** Called at each failpoint: the tests use them as hooks to move time mid-plan. */
  hooks: Partial<Record<FailpointName, () => void>>;
  cycle(): ReturnType<typeof runWalletCycle>;
  /** A new process on the same state file: a fresh decision clock reading today's wall clock. */
  restart(): void;
  setPending(lamports: bigint): void;
  events(): Array<Record<string, unknown>>;
  close(): Promise<void>;
}

async function harness(rule: Rule, opts: { tsWindowSec?: number; clockSkewThresholdMs?: number } = {}): Promise<Harness> {
  const { dir, cleanup } = tempDir('autoclaim-time-');
  const time = new Timeline();
  const { secretKey64, address } = generateKeypair();
  const sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    clock: time.server,
    // NTP-step tests move our wall clock far from the server's; a wide window lets their requests
    // through so what is tested is the decision, not the server's staleness check.
    tsWindowSec: opts.tsWindowSec ?? 3 * 86_400,
    defaultAccrualLamportsPerSec: 0n,
    wallets: [{ address, pendingLamports: SOL, accrualLamportsPerSec: 0n, balanceLamports: 0n }],
  });
  const out = new Lines();
  const redactor = new Redactor().add(CANARY_API_KEY);
  const logger = createLogger({ level: 'debug', redactor, destination: out });
  const config = apiConfig({ baseUrl: sandbox.url, readAttempts: 1 });
  const dispatcher = createDispatcher(config);
  const client = new ApiClient({
    config,
    apiKey: CANARY_API_KEY,
    dispatcher,
    limiter: new RateLimiter({ perMinute: 0, burst: 100, clock: time.ours }),
    clock: time.ours,
    logger,
  });
  const store = openStore(join(dir, 'autoclaim.db'), { logger, clock: time.ours, redactor });
  const wallet: WalletConfig = { name: 'w', address, key: { file: 'unused.json' }, rules: [rule.name] };
  const hooks: Harness['hooks'] = {};
  const failpoint = (name: FailpointName) => hooks[name]?.();
  const settings = () => ({ rules: [rule], safety: { maxLamportsPerAction: 100n * SOL }, alerts: { clockSkewMs: opts.clockSkewThresholdMs } });
  const signer = signerFromSeed(secretKey64.slice(0, 32));
  let executor: PlanExecutor;
  let decisionClock: Clock;
  let clockSkew: ClockSkewWatch;
  const restart = () => {
    executor = new PlanExecutor({
      store,
      api: client,
      signers: new Map([[wallet.address, inProcessSigner(signer)]]),
      config: settings,
      clock: time.ours,
      logger,
      failpoint,
    });
    decisionClock = createDecisionClock(time.ours);
    clockSkew = new ClockSkewWatch();
  };
  restart();
  return {
    time,
    sandbox,
    store,
    wallet,
    hooks,
    restart,
    cycle: () =>
      runWalletCycle(
        {
          api: client,
          store,
          executor,
          config: settings,
          clock: time.ours,
          decisionClock,
          clockSkew,
          logger,
          failpoint,
          dry: false,
        },
        wallet,
      ),
    setPending: (lamports) => {
      sandbox.world.setWallet(address, { pendingLamports: lamports });
    },
    events: () => parseEvents(out.text),
    close: async () => {
      await dispatcher.close();
      await sandbox.close();
      store.close();
      cleanup();
    },
  };
}

describe('time', () => {
  let h: Harness | undefined;
  beforeEach(() => {
    h = undefined;
  });
  afterEach(async () => {
    await h?.close();
  });

  const plans = (x: Harness) => x.store.listPlans({}).filter((p) => !p.dry);
  const ops = (x: Harness) => x.sandbox.ledger().map((e) => `${e.op}@${e.epoch}`);
  const skips = (x: Harness, reason: string) => x.events().filter((e) => e.event === 'rule.skipped' && e.reason === reason);

  it('the wall clock stepping back 1 h right after a plan neither allows a second plan nor shortens the cooldown', async () => {
    h = await harness(cooldownRule({ oncePerEpoch: false, cooldownMs: 6 * HOUR }));
    await h.cycle();
    expect(ops(h)).toHaveLength(2); // claim + deposit
    h.time.stepOurWall(-HOUR);
    h.setPending(2n * SOL);

    // Same process: the decision clock did not see the step; the cooldown has 6 h to go.
    await h.cycle();
    expect(plans(h)).toHaveLength(1);
    expect(String(skips(h, 'cooldown').at(-1)?.detail)).toBe('cooldown 6h ends in 6h');

    // A restart reads the stepped-back wall clock afresh: the plan now looks dated in the future,
    // which the limits treat as "just happened", never as "long ago".
    h.restart();
    await h.cycle();
    expect(plans(h)).toHaveLength(1);
    expect(String(skips(h, 'cooldown').at(-1)?.detail)).toMatch(/ends in 7h; the last plan is dated 1h in the future/);

    // 6h01m of real time after the plan: the restarted process still waits (its wall clock is an
    // hour behind the plan's); the cooldown came out longer, never shorter.
    h.time.advance(6 * HOUR + MIN);
    await h.cycle();
    expect(plans(h)).toHaveLength(1);
    h.time.advance(HOUR);
    await h.cycle();
    expect(plans(h)).toHaveLength(2);
    expect(ops(h)).toHaveLength(4);
    expect(h.store.listPlans({}).every((p) => p.status === 'done')).toBe(true);
  });

  it('in one process, the cooldown lasts exactly its real duration whatever the wall clock did', async () => {
    h = await harness(cooldownRule({ oncePerEpoch: false, cooldownMs: 6 * HOUR }));
    await h.cycle();
    h.time.stepOurWall(-HOUR);
    h.setPending(2n * SOL);
    h.time.advance(6 * HOUR - MIN);
    await h.cycle();
    expect(plans(h)).toHaveLength(1);
    h.time.advance(2 * MIN); // 6h01m of real time since the plan; the wall clock says 5h01m
    await h.cycle();
    expect(plans(h)).toHaveLength(2);
  });

  it('the wall clock jumping forward 1 d in-process ends neither the cooldown nor the 24 h window early, and plans nothing twice', async () => {
    h = await harness(cooldownRule({ oncePerEpoch: false, cooldownMs: 6 * HOUR, maxPlansPerDay: 1 }));
    await h.cycle();
    expect(plans(h)).toHaveLength(1);
    h.time.stepOurWall(DAY);
    h.time.advance(MIN);
    h.setPending(2n * SOL);

    await h.cycle();
    expect(plans(h)).toHaveLength(1);
    expect(skips(h, 'cooldown')).toHaveLength(1);

    // 7 h of real time: the cooldown is over, the rolling day is not.
    h.time.advance(7 * HOUR);
    await h.cycle();
    expect(plans(h)).toHaveLength(1);
    expect(skips(h, 'max_plans_per_day')).toHaveLength(1);
    expect(ops(h)).toHaveLength(2);

    // A full real day later the rule may fire again, once.
    h.time.advance(17 * HOUR);
    await h.cycle();
    await h.cycle();
    expect(plans(h)).toHaveLength(2);
    expect(h.sandbox.ledger().filter((e) => e.op === 'claim')).toHaveLength(2);
  });

  it('an epoch rolling over between the claim and the deposit: the deposit goes out once, for the old plan', async () => {
    h = await harness(cooldownRule({}));
    const epoch0 = h.sandbox.world.epoch();
    let answers = 0;
    h.hooks.after_answer_before_record = () => {
      if (++answers === 1) h?.sandbox.advanceEpoch(); // right after the claim's answer
    };
    await h.cycle();
    const epoch1 = h.sandbox.world.epoch();
    expect(epoch1).not.toBe(epoch0);
    expect(ops(h)).toEqual([`claim@${epoch0}`, `deposit@${epoch1}`]);
    const [plan] = plans(h);
    expect(plan?.epoch).toBe(epoch0);
    expect(plan?.status).toBe('done');
    expect(plan?.steps.map((s) => [s.kind, s.state])).toEqual([
      ['claim', 'acknowledged'],
      ['deposit', 'acknowledged'],
    ]);
    expect(h.sandbox.ledger()[1]?.amountLamports).toBe(SOL / 2n);

    // Later polls in the new epoch: nothing is re-sent, nothing new fires (pending was claimed).
    await h.cycle();
    await h.cycle();
    expect(h.sandbox.ledger()).toHaveLength(2);
  });

  it('a deposit held back past the rollover (429) resumes once for the old plan; the new epoch gets its own plan', async () => {
    h = await harness(cooldownRule({}));
    const epoch0 = h.sandbox.world.epoch();
    h.sandbox.addFault({ match: { op: 'deposit' }, kind: 'rate_limit', retryAfterSec: 30 });
    await h.cycle();
    expect(ops(h)).toEqual([`claim@${epoch0}`]);
    expect(plans(h)[0]?.steps[1]?.state).toBe('planned');

    const epoch1 = h.sandbox.advanceEpoch();
    h.time.advance(MIN);
    h.setPending(3n * SOL);
    await h.cycle();
    await h.cycle();
    expect(h.sandbox.ledger().map((e) => [e.op, e.epoch, e.amountLamports])).toEqual([
      ['claim', epoch0, SOL],
      ['deposit', epoch1, SOL / 2n], // 50% of the OLD plan's claim, sent in the new epoch
      ['claim', epoch1, 3n * SOL],
      ['deposit', epoch1, (3n * SOL) / 2n],
    ]);
    const byEpoch = plans(h).map((p) => [p.epoch, p.status, p.steps.map((s) => s.state).join(',')]);
    expect(byEpoch.sort()).toEqual([
      [epoch0, 'done', 'acknowledged,acknowledged'],
      [epoch1, 'done', 'acknowledged,acknowledged'],
    ]);
  });

  it('an epoch rolling over between decide and the claim: the plan is skipped, the next poll claims once', async () => {
    h = await harness(cooldownRule({}));
    const epoch0 = h.sandbox.world.epoch();
    let recorded = 0;
    h.hooks.after_plan_recorded = () => {
      if (++recorded === 1) h?.sandbox.advanceEpoch();
    };
    await h.cycle();
    expect(h.sandbox.ledger()).toEqual([]);
    const skipped = h.events().find((e) => e.event === 'plan.skipped');
    expect(String(skipped?.reason)).toMatch(/epoch rolled over/);
    expect(plans(h).map((p) => [p.epoch, p.steps.map((x) => x.state).join(',')])).toEqual([[epoch0, 'skipped,skipped']]);

    await h.cycle();
    await h.cycle();
    const epoch1 = h.sandbox.world.epoch();
    expect(ops(h)).toEqual([`claim@${epoch1}`, `deposit@${epoch1}`]);
    expect(plans(h)).toHaveLength(2);
  });

  it('a server clock 45 s off is warned about once per episode, and its end noted once', async () => {
    h = await harness(cooldownRule({}), { tsWindowSec: 300 });
    h.time.serverOffset = 45_000;
    for (let i = 0; i < 4; i++) {
      await h.cycle();
      h.time.advance(MIN);
    }
    const skew = h.events().filter((e) => e.event === 'clock.skew');
    expect(skew).toHaveLength(1);
    expect(skew[0]?.level).toBe('warn');
    expect(Number(skew[0]?.skew_ms)).toBeGreaterThan(43_000);
    expect(String(skew[0]?.msg)).toMatch(/behind the API server/);
    // Within the server's window, so the work itself went through.
    expect(h.sandbox.ledger()).toHaveLength(2);

    h.time.serverOffset = 0;
    await h.cycle();
    await h.cycle();
    expect(h.events().filter((e) => e.event === 'clock.skew_resolved')).toHaveLength(1);
    expect(h.events().filter((e) => e.event === 'clock.skew')).toHaveLength(1);

    // A new episode is a new warning.
    h.time.serverOffset = -40_000;
    await h.cycle();
    await h.cycle();
    const again = h.events().filter((e) => e.event === 'clock.skew');
    expect(again).toHaveLength(2);
    expect(String(again[1]?.msg)).toMatch(/ahead of the API server/);
  });

  it('a threshold is a cycle option: 60 s tolerates a 45 s skew', async () => {
    h = await harness(cooldownRule({}), { tsWindowSec: 300, clockSkewThresholdMs: 60_000 });
    h.time.serverOffset = 45_000;
    await h.cycle();
    expect(h.events().filter((e) => e.event === 'clock.skew')).toEqual([]);
  });

  it('x-svc-ts outside the server window: refused as an invalid request, the plan failed, signing paused, nothing applied', async () => {
    h = await harness(cooldownRule({}), { tsWindowSec: 300 });
    h.time.stepOurWall(10 * MIN);
    const r = await h.cycle();
    expect(r.statuses).toEqual(['failed']);
    expect(h.sandbox.ledger()).toEqual([]);
    expect(h.sandbox.stats().byOp.claim).toEqual({ '400': 1 });
    const failed = h.events().find((e) => e.event === 'action.failed');
    expect(failed?.status).toBe(400);
    expect(String(failed?.err)).toMatch(/stale_timestamp|away from the server clock/);
    expect(h.events().find((e) => e.event === 'signing.paused')).toMatchObject({ scope: 'wallet', status: 400 });
    expect(plans(h)[0]?.steps.map((s) => s.state)).toEqual(['failed', 'skipped']);
    // Paused: the next cycle polls but neither decides nor signs.
    await h.cycle();
    expect(h.sandbox.stats().byOp.claim).toEqual({ '400': 1 });
    expect(plans(h)).toHaveLength(1);
    // The skew was visible before the claim was refused, and said so (warn); the refusal that
    // names the timestamp says so again, at error.
    expect(h.events().filter((e) => e.event === 'clock.skew').map((e) => e.level)).toEqual(['warn', 'error']);
  });
});
