import { inProcessSigner } from '../../src/keys/backends/in-process.js';
// The rig for issue 11's regression tests ("trust no answer"): the real sandbox on loopback (its
// ledger is the truth), a real SQLite state in a temp dir, the real ApiClient, PlanExecutor and
// runWalletCycle. Two things are the test's own: time (our wall clock and the server's move when
// the test says), and a thin tap on the API port that counts every summary read (a hook may change
// the world right before a given read, as a server whose pending jumps would) and keeps every
// signed request handed to the wire.
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ApiClient, createDispatcher } from '../../src/api/client.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { generateKeypair } from '../../src/keys/signer.js';
import { signerFromSeed } from '../../src/keys/signer.js';
import type { Clock, Rule, SafetyConfig, WalletConfig } from '../../src/domain.js';
import { StateError } from '../../src/errors.js';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { startSandbox, type FaultSpec, type LedgerEntry, type Sandbox } from '../../src/sandbox/server.js';
import { openStore, type PlanWithSteps, type SyncStore } from '../../src/store/index.js';
import { createDecisionClock } from '../../src/executor/decision-clock.js';
import { createEvents, type StepEvent } from '../../src/events.js';
import { PlanExecutor } from '../../src/executor/executor.js';
import type { ApiPort, PreparedRequest } from '../../src/executor/ports.js';
import { runWalletCycle, type WalletCycleResult } from '../../src/executor/wallet-cycle.js';
import { apiConfig } from '../api/helpers.js';
import { CANARY_API_KEY, parseEvents, tempDir } from '../e2e/helpers.js';

export const SOL = 1_000_000_000n;
export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

/** True time plus an offset each for our wall clock and the server's; monotonic follows true time. */
export class Timeline {
  private t = Date.UTC(2025, 5, 2, 6, 0, 0);
  private readonly t0 = this.t;
  ourOffset = 0;
  serverOffset = 0;
  /** The state store's clock (the database's, with shared state) against true time. */
  storeOffset = 0;
  readonly ours: Clock = { now: () => this.t + this.ourOffset, monotonic: () => this.t - this.t0 + 1_000 };
  readonly store: Clock = { now: () => this.t + this.storeOffset, monotonic: () => this.t - this.t0 + 1_000 };
  readonly server: Clock = { now: () => this.t + this.serverOffset, monotonic: () => this.t - this.t0 + 1_000 };
  advance(ms: number): void {
    this.t += ms;
  }
  /** An NTP step of our wall clock: monotonic time does not move. */
  stepOurWall(ms: number): void {
    this.ourOffset += ms;
  }
}

/** Log output kept as text, for parseEvents. */
export class Lines extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.text += chunk.toString();
    cb();
  }
}

export interface RigOptions {
  /** The wallet's rules, in config order. */
  rule: Rule | Rule[];
  pendingLamports: bigint;
  /** The wallet's SOL on the server: what a deposit that should not go out would be paid from. */
  balanceLamports?: bigint;
  maxLamportsPerAction?: bigint;
  /** The server's x-svc-ts window (default 300 s, the sandbox's). */
  tsWindowSec?: number;
  /** api.claim_settle (default 0: an unseen claim is judged not applied at once). */
  claimSettleMs?: number;
  /** api.ts_window as the worker reads it (default: none, no bound on a request's wait to go out). */
  tsWindowMs?: number;
  lifetimeLamports?: bigint;
  /** With shared state: whether this daemon still holds the wallet's lease (WorkerDeps.stillHolds). */
  stillHolds?: (address: string) => boolean;
  /** The store's markNotSent fails (as a fenced write does once the lease is gone). */
  markNotSentFails?: boolean;
}

export interface Rig {
  time: Timeline;
  sandbox: Sandbox;
  store: SyncStore;
  wallet: WalletConfig;
  /** Called right before the n-th summary read (1-based, counted over the rig's life). */
  beforeRead: ((n: number) => void) | undefined;
  /** Called right before the n-th signed request (1-based) is handed to the client. */
  beforeSend: ((n: number) => void) | undefined;
  /** The one rate limiter; its waits move the timeline (a sleep of n ms is n ms of true time). */
  limiter: RateLimiter;
  /** Every signed request handed to the client, in order. */
  sent: PreparedRequest[];
  steps: StepEvent[];
  cycle(): Promise<WalletCycleResult>;
  /** A new process on the same state file: a fresh executor (no in-memory timestamps) and decision clock. */
  restart(): void;
  fault(spec: FaultSpec): void;
  setPending(lamports: bigint): void;
  ledger(op?: LedgerEntry['op']): LedgerEntry[];
  plans(): PlanWithSteps[];
  events(name?: string): Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function openRig(opts: RigOptions): Promise<Rig> {
  const { dir, cleanup } = tempDir('autoclaim-trust-');
  const time = new Timeline();
  const { secretKey64, address } = generateKeypair();
  const sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    clock: time.server,
    tsWindowSec: opts.tsWindowSec ?? 300,
    defaultAccrualLamportsPerSec: 0n,
    wallets: [{ address, pendingLamports: opts.pendingLamports, accrualLamportsPerSec: 0n, balanceLamports: opts.balanceLamports ?? 0n, lifetimeLamports: opts.lifetimeLamports ?? 0n }],
  });
  const out = new Lines();
  const redactor = new Redactor().add(CANARY_API_KEY);
  const logger = createLogger({ level: 'debug', redactor, destination: out });
  const config = apiConfig({ baseUrl: sandbox.url, readAttempts: 1, claimSettleMs: opts.claimSettleMs ?? 0 });
  const dispatcher = createDispatcher(config);
  const limiter = new RateLimiter({
    perMinute: 0,
    burst: 100,
    clock: time.ours,
    sleep: (ms) => {
      time.advance(ms);
      return Promise.resolve();
    },
  });
  const client = new ApiClient({
    config,
    apiKey: CANARY_API_KEY,
    dispatcher,
    limiter,
    clock: time.ours,
    logger,
  });
  const store = openStore(join(dir, 'autoclaim.db'), { logger, clock: time.store, redactor });
  const rules = Array.isArray(opts.rule) ? opts.rule : [opts.rule];
  const wallet: WalletConfig = { name: 'w', address, key: { file: 'unused.json' }, rules: rules.map((r) => r.name) };
  const safety: SafetyConfig = { maxLamportsPerAction: opts.maxLamportsPerAction ?? 100n * SOL };
  const signer = signerFromSeed(secretKey64.slice(0, 32));
  let reads = 0;
  const rig: Rig = {
    time,
    sandbox,
    store,
    wallet,
    beforeRead: undefined,
    beforeSend: undefined,
    limiter,
    sent: [],
    steps: [],
    cycle: async () => cycle(),
    restart: () => restart(),
    fault: (spec) => void sandbox.addFault(spec),
    setPending: (lamports) => void sandbox.world.setWallet(address, { pendingLamports: lamports }),
    ledger: (op) => sandbox.ledger().filter((e) => e.wallet === address && (op === undefined || e.op === op)),
    plans: () => store.listPlans({}).filter((p) => !p.dry).sort((a, b) => a.id - b.id),
    events: (name) => parseEvents(out.text).filter((e) => name === undefined || e['event'] === name),
    close: async () => {
      await dispatcher.close();
      await sandbox.close();
      store.close();
      cleanup();
    },
  };
  // The tap: the real client underneath, every call passed through unchanged.
  const api: ApiPort = {
    walletSummary: async (a) => {
      reads += 1;
      rig.beforeRead?.(reads);
      return client.walletSummary(a);
    },
    unsigned: (input, nowMs) => client.unsigned(input, nowMs),
    seal: (unsigned, signature) => client.seal(unsigned, signature),
    send: async (prepared, gate) => {
      rig.sent.push(prepared);
      rig.beforeSend?.(rig.sent.length);
      return client.send(prepared, gate);
    },
  };
  const workerStore: SyncStore = opts.markNotSentFails === true
    ? new Proxy(store, {
        get: (target, prop, receiver) =>
          prop === 'markNotSent'
            ? () => {
                throw new StateError('STATE_LEASE_LOST', 'lease on the wallet lost: not held by this daemon');
              }
            : (Reflect.get(target, prop, receiver) as unknown),
      })
    : store;
  let executor: PlanExecutor;
  let decisionClock: Clock;
  const settings = () => ({ rules, safety, api: { claimSettleMs: opts.claimSettleMs ?? 0, tsWindowMs: opts.tsWindowMs } });
  const events = createEvents({ logger });
  events.on('step:outcome', (e) => void rig.steps.push(e));
  const restart = () => {
    executor = new PlanExecutor({
      store: workerStore,
      stillHolds: opts.stillHolds,
      api,
      signers: new Map([[address, inProcessSigner(signer)]]),
      config: settings,
      clock: time.ours,
      logger,
      failpoint: () => {},
      events,
    });
    decisionClock = createDecisionClock(time.ours);
  };
  const cycle = () =>
    runWalletCycle(
      { api, store, executor, config: settings, clock: time.ours, decisionClock, logger, failpoint: () => {}, dry: false },
      wallet,
    );
  restart();
  return rig;
}

