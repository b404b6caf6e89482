// The rig for issue 11's regression tests ("trust no answer"): the real sandbox on loopback (its
// ledger is the truth), a real SQLite state in a temp dir, the real ApiClient, PlanExecutor and
// runWalletCycle, wired by the cycle rig (test/support/cycle-rig.ts). Two things are the test's own: time (our wall clock and the server's move when
// the test says), and a thin tap on the API port that counts every summary read (a hook may change
// the world right before a given read, as a server whose pending jumps would) and keeps every
// signed request handed to the wire.
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { RateLimiter } from '../../src/api/rate-limit.js';
import { generateKeypair } from '../../src/keys/signer.js';
import { signerFromSeed } from '../../src/keys/signer.js';
import type { Clock, Rule, SafetyConfig, WalletConfig } from '../../src/domain.js';
import { StateError } from '../../src/errors.js';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { startSandbox, type FaultSpec, type LedgerEntry, type Sandbox } from '../../src/sandbox/server.js';
import type { PlanWithSteps, SyncStore } from '../../src/store/index.js';
import { createEvents, type StepEvent } from '../../src/events.js';
import type { PreparedRequest } from '../../src/executor/ports.js';
import { inProcessSigner } from '../../src/keys/backends/in-process.js';
import type { WalletCycleResult } from '../../src/executor/wallet-cycle.js';
import { apiConfig } from '../api/helpers.js';
import { openCycleRig } from '../support/cycle-rig.js';
import { CANARY_API_KEY, parseEvents, tempDir } from '../e2e/helpers.js';

export const SOL = 1_000_000_000n;
export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

/** The rule the time tests judge: claim when 0.5 SOL is pending, deposit half of it; limits as given (once per epoch by default). */
export function cooldownRule(limits: Partial<Rule['limits']>): Rule {
  return {
    name: 'compound',
    id: 'compound',
    when: [{ field: 'pending_sol', op: 'gte', value: SOL / 2n }],
    do: [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'percent', ppm: 500_000 } }],
    limits: { oncePerEpoch: true, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined, ...limits },
  };
}

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
  /** The first call of this store write throws before committing: the process dies there (restart() is the next one). */
  diesAtFirst?: 'skipRemaining' | 'holdForOperator';
}

export interface Rig {
  time: Timeline;
  sandbox: Sandbox;
  /** The open state store (a new object after restart()). */
  readonly store: SyncStore;
  wallet: WalletConfig;
  /** Called right before the n-th summary read (1-based, counted over the rig's life). */
  beforeRead: ((n: number) => void) | undefined;
  /** Called right before the n-th signed request (1-based) is handed to the client. */
  beforeSend: ((n: number) => void) | undefined;
  /** This process's rate limiter; its waits move the timeline (a sleep of n ms is n ms of true time). */
  readonly limiter: RateLimiter;
  /** Every signed request handed to the client, in order. */
  sent: PreparedRequest[];
  steps: StepEvent[];
  cycle(): Promise<WalletCycleResult>;
  /** A new process on the same state file: the store reopened and recovered, a fresh client, executor (no in-memory timestamps) and decision clock. */
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
    // A service without replay protection (SPEC §6 documents none): a signed request sent twice is
    // two entries in the ledger here, not a 409 the daemon reads as a refusal.
    replays: 'apply',
    clock: time.server,
    tsWindowSec: opts.tsWindowSec ?? 300,
    defaultAccrualLamportsPerSec: 0n,
    wallets: [{ address, pendingLamports: opts.pendingLamports, accrualLamportsPerSec: 0n, balanceLamports: opts.balanceLamports ?? 0n, lifetimeLamports: opts.lifetimeLamports ?? 0n }],
  });
  const out = new Lines();
  const redactor = new Redactor().add(CANARY_API_KEY);
  const logger = createLogger({ level: 'debug', redactor, destination: out });
  const config = apiConfig({ baseUrl: sandbox.url, readAttempts: 1, claimSettleMs: opts.claimSettleMs ?? 0 });
  const rules = Array.isArray(opts.rule) ? opts.rule : [opts.rule];
  const wallet: WalletConfig = { name: 'w', address, key: { file: 'unused.json' }, rules: rules.map((r) => r.name) };
  const safety: SafetyConfig = { maxLamportsPerAction: opts.maxLamportsPerAction ?? 100n * SOL };
  const signer = signerFromSeed(secretKey64.slice(0, 32));
  const steps: StepEvent[] = [];
  const events = createEvents({ logger });
  events.on('step:outcome', (e) => void steps.push(e));
  let reads = 0;
  const sent: PreparedRequest[] = [];
  const hooks: Pick<Rig, 'beforeRead' | 'beforeSend'> = { beforeRead: undefined, beforeSend: undefined };
  let died = false;
  const cycles = openCycleRig({
    storePath: join(dir, 'autoclaim.db'),
    clock: time.ours,
    storeClock: time.store,
    decisionClock: true,
    logger,
    redactor,
    api: config,
    apiKey: CANARY_API_KEY,
    sleep: (ms) => {
      time.advance(ms);
      return Promise.resolve();
    },
    signers: new Map([[address, inProcessSigner(signer)]]),
    settings: () => ({ rules, safety, api: { claimSettleMs: opts.claimSettleMs ?? 0, tsWindowMs: opts.tsWindowMs } }),
    failpoint: () => {},
    events,
    stillHolds: opts.stillHolds,
    // The tap: the real client underneath, every call passed through unchanged.
    tap: (client) => ({
      walletSummary: async (a) => {
        reads += 1;
        hooks.beforeRead?.(reads);
        return client.walletSummary(a);
      },
      unsigned: (input, nowMs) => client.unsigned(input, nowMs),
      clockSkewMs: () => client.clockSkewMs(),
      seal: (unsigned, signature) => client.seal(unsigned, signature),
      send: async (prepared, gate) => {
        sent.push(prepared);
        hooks.beforeSend?.(sent.length);
        return client.send(prepared, gate);
      },
    }),
    workerStore: (store) => {
      if (opts.diesAtFirst !== undefined && !died) {
        const write = opts.diesAtFirst;
        return new Proxy(store, {
          get: (target, prop, receiver) => {
            if (prop !== write || died) return Reflect.get(target, prop, receiver) as unknown;
            return () => {
              died = true;
              throw new Error(`the process died before ${write} committed`);
            };
          },
        });
      }
      return opts.markNotSentFails === true
        ? new Proxy(store, {
            get: (target, prop, receiver) =>
              prop === 'markNotSent'
                ? () => {
                    throw new StateError('STATE_LEASE_LOST', 'lease on the wallet lost: not held by this daemon');
                  }
                : (Reflect.get(target, prop, receiver) as unknown),
          })
        : store;
    },
  });
  return {
    time,
    sandbox,
    get store() {
      return cycles.store;
    },
    get beforeRead() {
      return hooks.beforeRead;
    },
    set beforeRead(hook) {
      hooks.beforeRead = hook;
    },
    get beforeSend() {
      return hooks.beforeSend;
    },
    set beforeSend(hook) {
      hooks.beforeSend = hook;
    },
    get limiter() {
      return cycles.limiter;
    },
    sent,
    steps,
    wallet,
    cycle: () => cycles.cycle(wallet),
    restart: () => cycles.restart(),
    fault: (spec) => void sandbox.addFault(spec),
    setPending: (lamports) => void sandbox.world.setWallet(address, { pendingLamports: lamports }),
    ledger: (op) => sandbox.ledger().filter((e) => e.wallet === address && (op === undefined || e.op === op)),
    plans: () => cycles.store.listPlans({}).filter((p) => !p.dry).sort((a, b) => a.id - b.id),
    events: (name) => parseEvents(out.text).filter((e) => name === undefined || e['event'] === name),
    close: async () => {
      await cycles.close();
      await sandbox.close();
      cleanup();
    },
  };
}
