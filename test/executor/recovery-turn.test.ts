import { inProcessSigner } from '../../src/keys/backends/in-process.js';
// Recovery on every turn (issue 25, finding 6): a step left `sending` by a process that is gone,
// under a daemon that lives on (it held the wallet all along, or got its lease back), is turned
// unknown and reconciled at the wallet's next turn — not only at start-up or a takeover; and a step
// this very process is sending (a slow answer while another turn of the wallet runs) is left alone.
// Real code: runWalletCycle → PlanExecutor, a real SQLite file, the sandbox on loopback.
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ApiClient, createDispatcher } from '../../src/api/client.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import type { Rule, WalletConfig } from '../../src/domain.js';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { openStore, type SyncStore } from '../../src/store/index.js';
import { ClaimDoubtWatch } from '../../src/executor/claim-doubt.js';
import { PlanExecutor } from '../../src/executor/executor.js';
import type { FailpointName } from '../../src/executor/failpoints.js';
import { runWalletCycle } from '../../src/executor/wallet-cycle.js';
import { apiConfig } from '../api/helpers.js';
import { CANARY_API_KEY, parseEvents, tempDir } from '../e2e/helpers.js';
import { Lines } from '../reliability/trust-rig.js';

const SOL = 1_000_000_000n;
const realClock = { now: () => Date.now(), monotonic: () => performance.now() };
const rule: Rule = {
  name: 'claim',
  id: 'claim',
  when: [{ field: 'pending_sol', op: 'gte', value: SOL / 2n }],
  do: [{ kind: 'claim' }],
  limits: { oncePerEpoch: true, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
};

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function world() {
  const { dir, cleanup } = tempDir('autoclaim-recovery-turn-');
  cleanups.push(cleanup);
  const { secretKey64, address } = generateKeypair();
  const sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    defaultAccrualLamportsPerSec: 0n,
    wallets: [{ address, pendingLamports: SOL, accrualLamportsPerSec: 0n, balanceLamports: 0n }],
  });
  cleanups.push(() => sandbox.close());
  const out = new Lines();
  const logger = createLogger({ level: 'debug', redactor: new Redactor().add(CANARY_API_KEY), destination: out });
  const config = apiConfig({ baseUrl: sandbox.url, readAttempts: 1, timeoutMs: 10_000 });
  const dispatcher = createDispatcher(config);
  cleanups.push(() => dispatcher.close());
  const client = new ApiClient({ config, apiKey: CANARY_API_KEY, dispatcher, limiter: new RateLimiter({ perMinute: 0, burst: 100, clock: realClock }), clock: realClock, logger });
  const store: SyncStore = openStore(join(dir, 'autoclaim.db'), { logger, clock: realClock, redactor: new Redactor() });
  cleanups.push(() => store.close());
  const wallet: WalletConfig = { name: 'w', address, key: { file: 'unused.json' }, rules: [rule.name] };
  const signer = signerFromSeed(secretKey64.slice(0, 32));
  const settings = () => ({ rules: [rule], safety: { maxLamportsPerAction: 100n * SOL } });
  /** One process: its own executor (and so its own in-flight set). */
  const process = (failpoint: (name: FailpointName) => void = () => {}) => {
    const executor = new PlanExecutor({ store, api: client, signers: new Map([[address, inProcessSigner(signer)]]), config: settings, clock: realClock, logger, failpoint });
    const claimDoubt = new ClaimDoubtWatch();
    return {
      executor,
      cycle: () => runWalletCycle({ api: client, store, executor, config: settings, clock: realClock, logger, failpoint, dry: false, claimDoubt }, wallet),
    };
  };
  const claims = () => Object.values(sandbox.stats().byOp['claim'] ?? {}).reduce((a, b) => a + b, 0);
  return { sandbox, store, wallet, process, claims, events: () => parseEvents(out.text) };
}

it('a claim left `sending` by a process that vanished is recovered and reconciled at the live daemon’s next turn', async () => {
  const w = await world();
  // The vanished process: it recorded the claim `sending` and died before a byte went out.
  const gone = w.process((name) => {
    if (name === 'after_sending_committed') throw new Error('killed');
  });
  await expect(gone.cycle()).rejects.toThrow('killed');
  const [plan] = w.store.openPlans(w.wallet.address);
  const step = plan!.steps[0]!;
  expect(w.store.getPlan(plan!.id)!.steps[0]!.state).toBe('sending');

  // The daemon that lives on (it never restarts, so its start-up recovery never runs again).
  const daemon = w.process();
  await daemon.cycle();
  const after = w.store.getPlan(plan!.id)!.steps[0]!;
  expect(after.state).toBe('acknowledged');
  expect(w.events().filter((e) => e['event'] === 'action.unknown')).toMatchObject([{ step: step.id, recovered: 'turn', level: 'error' }]);
  expect(w.claims()).toBe(1); // the recovered claim was never sent; the reconciled one once
});

it('a claim this process is sending right now (a slow answer) is not turned unknown by another turn of its wallet', async () => {
  const w = await world();
  w.sandbox.addFault({ kind: 'latency', ms: 1_500, match: { op: 'claim' } });
  const daemon = w.process();
  const first = daemon.cycle();
  // Wait until the claim is recorded `sending` and out (the sandbox is holding its answer).
  for (let i = 0; ; i++) {
    const plan = w.store.openPlans(w.wallet.address)[0];
    if (plan?.steps[0]?.state === 'sending' && daemon.executor.inFlight().size === 1) break;
    if (i > 400) throw new Error('the claim never went out');
    await new Promise((r) => setTimeout(r, 5));
  }
  // Another turn of the same wallet while the answer is awaited.
  await daemon.cycle();
  const [plan] = w.store.openPlans(w.wallet.address);
  expect(plan!.steps[0]!.state).toBe('sending');
  await first;
  const settled = w.store.getPlan(plan!.id)!.steps[0]!;
  expect(settled.state).toBe('acknowledged');
  expect(w.events().filter((e) => e['event'] === 'action.unknown')).toEqual([]);
  expect(daemon.executor.inFlight().size).toBe(0);
  expect(w.claims()).toBe(1);
});
