// Failover without a double send (issue 15, "How it is shown"): three `autoclaim run` daemons as
// real processes on one PostgreSQL state, a dozen wallets, epochs rolling every few seconds, a
// rule that claims and compounds every wallet once per epoch; then at seeded random moments, kill
// -9 of a daemon holding leases (restarted after a random delay) and SIGSTOP/SIGCONT of one
// (longer than a lease about half the time), at times two at once. Judged against the sandbox's
// ledger, the truth of what was applied (ledger-check.ts): every applied action was recorded by a
// daemon before it went out, none twice, no (wallet, epoch) claimed or compounded twice, every
// wallet claimed and compounded in every epoch the cluster had time to recover for; and a final
// SIGTERM stops every daemon cleanly (exit 0), its leases handed back.
//
// Replay a run with FAILOVER_SEED=<seed>. Assertions are on outcomes; the schedule's pauses only
// decide which epochs are judged, from the moments the test actually disrupted the cluster.
import { heldForOperator } from '../../src/store/plan-status.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import type { Store } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { CANARY_API_KEY, configYaml, makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';
import { depth } from '../support/depth.js';
import { prng } from '../support/prng.js';
import { DaemonFleet, type Slot } from './fleet.js';
import { checkLedger, epochIndexAt, qualifyingEpochs, type Disruption, type EpochGeometry, type RecordedStep } from './ledger-check.js';

const SOL = 1_000_000_000n;
const SEED = Number(process.env.FAILOVER_SEED ?? 20251124);
const WALLETS = 12;
const DAEMONS = 3;
/** 12 a run; 20 with npm run test:deep (test/support/depth.ts). */
const DISRUPTIONS = depth('FAILOVER_DISRUPTIONS', { ci: 12, deep: 20 });
/** The shortest lease the config allows: renewed every second. */
const LEASE_MS = 3_000;
const POLL_MS = 1_000;
const EPOCH_MS = 3_000;
/** The sandbox's window for a signed request's ts: past it, a request never sent can never be applied. */
const TS_WINDOW_SEC = 10;
/**
 * A claim left in doubt by a disruption (recorded `sending`, its daemon killed or fenced) is judged
 * not applied only once its signed ts is older than ts_window + its margin (the window again, for
 * a window under a minute): until then it holds its wallet's claims (claim_in_doubt).
 */
const CLAIM_SETTLE_MS = 2 * TS_WINDOW_SEC * 1000;
/**
 * How long after a disruption ends every wallet is worked again, at worst: any claim in doubt
 * settled (CLAIM_SETTLE_MS), and the dead (or paused)
 * daemon's leases run out by the database's clock (one lease after its last renewal); a survivor's
 * next lease round (a third of a lease) sees them free; with a daemon (re)joining, wallets leave
 * their holder one round later (draining) and the joiner takes them at its next round (two more
 * thirds); then the next poll (one interval), plus a second for the cycle itself on a busy 2-core
 * machine.
 */
const SETTLE_MS = LEASE_MS + 3 * (LEASE_MS / 3) + POLL_MS + 1_000 + CLAIM_SETTLE_MS;
/** A quiet stretch that holds at least one whole epoch starting SETTLE_MS after its beginning. */
const QUIET_MS = SETTLE_MS + 2 * EPOCH_MS + 500;
/** Before every seventh disruption (and after the last), the cluster is left alone for QUIET_MS. */
const QUIET_BEFORE = new Set(Array.from({ length: Math.ceil(DISRUPTIONS / 7) - 1 }, (_, i) => 7 * (i + 1)));

const RULE = `  - name: compound
    when:
      pending_sol: { gte: 0.5 }
    do:
      - claim
      - deposit: { symbol: SOL2X, amount: "50%" }
`;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('failover under kill -9 and SIGSTOP', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  let fleet: DaemonFleet | undefined;
  let store: Store | undefined;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-failover-'));
    wallets = makeWallets(
      dir,
      Array.from({ length: WALLETS }, (_, i) => `w${i}`),
    );
    // Epochs start half a second off the poll's whole seconds, so a poll never races a rollover.
    const now = Date.now();
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      epochMs: EPOCH_MS,
      epochOrigin: Math.floor(now / 1000) * 1000 - EPOCH_MS + 500,
      tsWindowSec: TS_WINDOW_SEC,
      defaultAccrualLamportsPerSec: 0n,
      // A whole SOL a second: over the rule's threshold within half a second of every claim.
      wallets: wallets.map((w) => ({ address: w.address, pendingLamports: 0n, accrualLamportsPerSec: SOL, balanceLamports: 0n })),
    });
  });

  afterEach(async () => {
    await fleet?.destroy();
    await store?.close();
    await sandbox.close();
    cleanup();
  });

  it(`claims every wallet once per epoch through ${DISRUPTIONS} disruptions (seed ${SEED})`, { timeout: 300_000 }, async () => {
    const stateUrl = await createDatabase();
    const config = join(dir, 'autoclaim.yaml');
    writeFileSync(config, configYaml({ baseUrl: sandbox.url, wallets, rules: RULE, maxSolPerAction: '1000', apiExtra: `  ts_window: ${TS_WINDOW_SEC}s\n` }).replace('state:\n', `state:\n  lease: ${LEASE_MS / 1000}s\n`));
    // 3 s epochs are a calendar day each: the loopback sandbox's fast epochs, exempt from SPEC §2's calendar check.
    fleet = new DaemonFleet({ config, cwd: dir, env: { AUTOCLAIM_SANDBOX_EPOCHS: 'fast' }, stateUrl });
    const f = fleet;
    const random = prng(SEED);
    const between = (lo: number, hi: number) => lo + random() * (hi - lo);
    const disruptions: Disruption[] = [];
    const geometry: EpochGeometry = { origin: sandbox.world.epochOrigin, epochMs: sandbox.world.epochMs };

    const started = Date.now();
    await Promise.all(Array.from({ length: DAEMONS }, (_, i) => f.start(i)));
    disruptions.push({ from: started, to: Date.now(), what: 'start' });

    // The operator's hand: a deposit left in flight by a daemon that died (or was cut off) is
    // unknown, and by design holds that wallet's compounding until someone resolves it; so is a
    // claim the daemons held for an operator (claim_undetermined: an epoch rolled over while it was
    // in doubt, which 3 s epochs make common). The
    // ledger decides, as a block explorer would: applied if its signature is there; not applied
    // only once its ts is past the sandbox's window, when it can never be applied any more.
    store = await openPostgresStore(stateUrl, { logger: silentLogger() });
    const s = store;
    const resolved: number[] = [];
    let resolving = true;
    const resolver = (async () => {
      while (resolving) {
        for (const step of await s.unknownSteps()) {
          if ((step.kind === 'claim' && !heldForOperator(step)) || step.request === null) continue; // other claims reconcile themselves
          const signature = signatureOf(step.request.body);
          const applied = sandbox.ledger().some((e) => e.signature === signature);
          if (!applied && Date.now() / 1000 <= step.request.ts + TS_WINDOW_SEC + 1) continue;
          await s.resolve(step.id, applied, `failover test: ${applied ? 'in' : 'not in'} the sandbox ledger`);
          resolved.push(step.id);
          disruptions.push({ from: Date.now(), to: Date.now(), what: `resolve ${step.id}` });
        }
        await sleep(250);
      }
    })();

    // The chaos: each disruption runs on its own, so a second may start before the first is over;
    // one daemon is always left alone.
    const running = new Set<Promise<void>>();
    const busy = new Set<Slot>();
    const counts = { kill: 0, pause: 0, longPause: 0 };
    const track = (p: Promise<void>) => {
      running.add(p);
      const forget = () => void running.delete(p);
      p.then(forget, forget);
    };
    // A quiet stretch lasts QUIET_MS from the end of the last disruption, whenever that was: the
    // resolver's hand is one too, and it can come ~11 s after the kill that left a deposit unknown
    // (once its ts is past the sandbox's window), i.e. inside the stretch; a fixed sleep then left
    // the stretch without a whole qualifying epoch on a loaded machine (seen once in a full run).
    const quiet = async () => {
      await Promise.all(running);
      for (;;) {
        const left = Math.max(...disruptions.map((d) => d.to)) + QUIET_MS - Date.now();
        if (left <= 0) return;
        await sleep(left);
      }
    };
    await sleep(1_500);
    for (let n = 0; n < DISRUPTIONS; n++) {
      if (QUIET_BEFORE.has(n)) {
        await quiet();
      } else {
        await sleep(between(300, 1_500));
      }
      const target = await pickTarget(f, busy, random);
      const kill = random() < 0.55;
      const from = Date.now();
      busy.add(target);
      if (kill) {
        counts.kill++;
        const downMs = between(200, 2_000);
        track(
          (async () => {
            await f.kill(target);
            await sleep(downMs);
            await f.start(target.index);
            disruptions.push({ from, to: Date.now(), what: `kill ${target.index}` });
            busy.delete(target);
          })(),
        );
      } else {
        counts.pause++;
        const pausedMs = between(500, 5_000);
        if (pausedMs > LEASE_MS) counts.longPause++;
        f.pause(target);
        track(
          (async () => {
            await sleep(pausedMs);
            f.resume(target);
            disruptions.push({ from, to: Date.now(), what: `pause ${target.index} ${Math.round(pausedMs)} ms` });
            busy.delete(target);
          })(),
        );
      }
    }
    await quiet();

    const stopping = Date.now();
    const exits = await f.terminate();
    resolving = false;
    await resolver;

    const ledger = sandbox.ledger();
    const steps = await recordedSteps(s);
    const qualifying = qualifyingEpochs(geometry, disruptions, { from: started, to: stopping }, SETTLE_MS);
    const verdict = checkLedger({ ledger, steps, geometry, qualifying, addresses: wallets.map((w) => w.address), ops: ['claim', 'deposit'] });
    const events = f.events();
    const takeovers = events.filter((e) => e.event === 'lease.acquired' && typeof e.previous_owner === 'string' && e.previous_owner !== e.daemon).length;
    const summary = {
      seed: SEED,
      seconds: Math.round((Date.now() - started) / 1000),
      ...counts,
      processes: f.processes.length,
      claims: ledger.filter((e) => e.op === 'claim').length,
      deposits: ledger.filter((e) => e.op === 'deposit').length,
      epochs: epochIndexAt(geometry, stopping) - epochIndexAt(geometry, started),
      qualifying: qualifying.length,
      takeovers,
      lost: events.filter((e) => e.event === 'lease.lost').length,
      unknown: events.filter((e) => e.event === 'action.unknown').length,
      resolved: resolved.length,
    };
    console.info(`failover: ${JSON.stringify(summary)}`);
    // A wallet found missing is told by its own lines: its last ones but polls (turns, steps,
    // leases) say where its work stopped, which the first errors of the whole fleet do not.
    const missingAddresses = new Set(verdict.missing.map((m) => m.split(' ')[0]));
    const trail = wallets
      .filter((w) => missingAddresses.has(w.address))
      .map((w) => ({
        wallet: w.name,
        address: w.address,
        last: f.processes
          .flatMap((c, proc) => c.events().map((e): Record<string, unknown> => ({ ...e, proc })))
          .filter((e) => (e.wallet === w.name || e.address === w.address) && e.event !== 'poll.ok')
          .sort((a, b) => String(a.time).localeCompare(String(b.time)))
          .slice(-40)
          .map((e) => ({ time: e.time, proc: e.proc, event: e.event, epoch: e.epoch, step: e.step, reason: e.reason, msg: e.msg })),
      }));
    const context = JSON.stringify({ summary, disruptions, trail, errors: events.filter((e) => e.level === 'error' || e.event === 'wallet.failed').slice(0, 20) });

    expect(counts.kill + counts.pause).toBeGreaterThanOrEqual(DISRUPTIONS);
    expect(exits, context).toEqual(Array.from({ length: DAEMONS }, () => ({ code: 0, signal: null })));
    expect(verdict.unexplained, context).toEqual([]);
    expect(verdict.doubles, context).toEqual([]);
    // Each quiet stretch holds a whole epoch that qualifies, so this never judges nothing.
    expect(qualifying.length, context).toBeGreaterThanOrEqual(QUIET_BEFORE.size + 1);
    expect(verdict.missing, context).toEqual([]);
    // Wallets did change hands through takeovers, not only through clean hand-backs.
    expect(takeovers, context).toBeGreaterThan(0);
    // A clean stop hands every lease back and leaves the cluster.
    const left = await f.leasesBySlot();
    expect([...left.values()]).toEqual([]);
  });
});

/** A running, undisturbed daemon that holds leases (waits a little for one); else any undisturbed one. */
async function pickTarget(fleet: DaemonFleet, busy: ReadonlySet<Slot>, random: () => number): Promise<Slot> {
  const free = () => fleet.slots.filter((s) => !busy.has(s) && !s.dead && !s.paused);
  for (let tries = 0; ; tries++) {
    const held = await fleet.leasesBySlot();
    // One daemon is always left undisturbed.
    const candidates = busy.size < DAEMONS - 1 ? free().filter((s) => (held.get(s) ?? 0) > 0) : [];
    if (candidates.length > 0) return candidates[Math.floor(random() * candidates.length)] as Slot;
    if (tries >= 40 && busy.size < DAEMONS - 1 && free().length > 0) return free()[0] as Slot;
    await sleep(100);
  }
}

function signatureOf(body: string): string | undefined {
  if (body === '') return undefined; // recorded before its signer answered: nothing signed
  const parsed = JSON.parse(body) as { signature?: unknown };
  return typeof parsed.signature === 'string' ? parsed.signature : undefined;
}

/** Every signed step the daemons recorded, with each signature it was sent with. */
async function recordedSteps(store: Store): Promise<RecordedStep[]> {
  const out: RecordedStep[] = [];
  for (const plan of await store.listPlans({ limit: 1_000_000 })) {
    for (const step of plan.steps) {
      const requests = step.attempts > 1 ? (await store.stepAttempts(step.id)).map((a) => a.request) : [step.request];
      const signatures = requests.flatMap((r) => (r === null ? [] : [signatureOf(r.body)])).filter((x): x is string => x !== undefined);
      out.push({ stepId: step.id, address: plan.address, kind: step.kind, planEpoch: plan.epoch, signatures });
    }
  }
  return out;
}
