// The one cycle rig: the real product's poll path wired once for the reliability harnesses — a real
// SQLite state file (openStore), the real ApiClient over an undici dispatcher with its RateLimiter,
// a real PlanExecutor with the wallets' signers, and runWalletCycle with its CycleDeps. What stays
// each harness's own is handed in: its server (a dispatcher or the API config's base URL), its time
// (clocks and sleep), its faults (failpoint, a tap on the API port, a wrapped store) and its secrets
// (the redactor). `restart()` is what a new process on the same state file does.
import type { Dispatcher } from 'undici';
import { ApiClient, createDispatcher } from '../../src/api/client.js';
import { RateLimiter, type Sleep } from '../../src/api/rate-limit.js';
import type { ApiConfig, Clock, WalletConfig } from '../../src/domain.js';
import type { EventSink } from '../../src/events.js';
import type { Logger } from '../../src/log/logger.js';
import type { Redactor } from '../../src/log/redact.js';
import { openStore, type SyncStore } from '../../src/store/index.js';
import { createDecisionClock } from '../../src/executor/decision-clock.js';
import type { WorkerConfig } from '../../src/executor/deps.js';
import { PlanExecutor } from '../../src/executor/executor.js';
import { noFailpoints, type Failpoint } from '../../src/executor/failpoints.js';
import type { ApiPort, WalletSigner, WorkerStore } from '../../src/executor/ports.js';
import { runWalletCycle, type WalletCycleResult } from '../../src/executor/wallet-cycle.js';

export interface CycleRigOptions {
  /** The state file; opened now, reopened by restart(), closed by close(). */
  storePath: string;
  /** Wall clock of the client, the rate limiter, the executor and the cycle. */
  clock: Clock;
  /** The store's clock (the database's, with shared state). Default: `clock`. */
  storeClock?: Clock;
  /** A decision clock made from `clock` for each process (createDecisionClock), as the daemon does. Default: none, the cycle judges by `clock`. */
  decisionClock?: boolean;
  logger: Logger;
  /** The store scrubs what it keeps with it (as the daemon opens its store). */
  redactor?: Redactor;
  /** The client's scrub of every answer as it is read (as openApi wires redactor.redact). Default: none. */
  redact?: (text: string) => string;
  api: ApiConfig;
  apiKey?: string;
  /** The caller's dispatcher, closed by the caller. Default: one made from `api` (its base URL), closed by close(). */
  dispatcher?: Dispatcher;
  /** The rate limiter's waits and the client's read backoff (a fake clock moves with it). Default: real time. */
  sleep?: Sleep;
  /** The client's backoff jitter. Default: Math.random. */
  random?: () => number;
  /** By wallet address; read again at each restart (a caller may change it between processes). */
  signers: ReadonlyMap<string, WalletSigner>;
  /** The rules, safety and api settings the executor and the cycle read at each use. */
  settings: () => WorkerConfig;
  /** Default: noFailpoints. */
  failpoint?: Failpoint;
  /** The executor's event channel (step outcomes). */
  events?: EventSink;
  /** The API port the executor and the cycle see, built around each process's client (a tap). Default: the client. */
  tap?: (client: ApiClient) => ApiPort;
  /** The store the executor writes through, built around each opened store (a write made to fail). Default: the store. */
  workerStore?: (store: SyncStore) => WorkerStore;
  stillHolds?: (address: string) => boolean;
  /** The calendar checks' exemption (the sandbox's demo epochs). Default: none. */
  epochsExempt?: () => boolean;
}

export interface CycleRig {
  /** The open state store (a new object after restart()). */
  readonly store: SyncStore;
  /** This process's client. */
  readonly client: ApiClient;
  /** This process's rate limiter (the client's). */
  readonly limiter: RateLimiter;
  readonly executor: PlanExecutor;
  /** One wallet's turn: poll, decide, plan, execute. */
  cycle(wallet: WalletConfig): Promise<WalletCycleResult>;
  /** A new process on the same state file: the store reopened and its in-flight steps recovered, a new limiter, client, executor and decision clock. */
  restart(): void;
  /** Closes the store, and the dispatcher when the rig made it. */
  close(): Promise<void>;
}

interface Process {
  limiter: RateLimiter;
  client: ApiClient;
  api: ApiPort;
  executor: PlanExecutor;
  decisionClock: Clock | undefined;
}

export function openCycleRig(opts: CycleRigOptions): CycleRig {
  const { clock, logger, settings } = opts;
  const failpoint = opts.failpoint ?? noFailpoints;
  const ownDispatcher = opts.dispatcher === undefined ? createDispatcher(opts.api) : undefined;
  const dispatcher = opts.dispatcher ?? ownDispatcher!;
  const open = (): SyncStore => openStore(opts.storePath, { logger, clock: opts.storeClock ?? clock, ...(opts.redactor === undefined ? {} : { redactor: opts.redactor }) });
  let store = open();

  const startProcess = (): Process => {
    const limiter = new RateLimiter({ ...opts.api.rateLimit, clock, sleep: opts.sleep });
    const client = new ApiClient({
      config: opts.api,
      apiKey: opts.apiKey,
      dispatcher,
      limiter,
      clock,
      logger,
      sleep: opts.sleep,
      random: opts.random,
      redact: opts.redact,
    });
    const api = opts.tap?.(client) ?? client;
    // As the daemon wires it: the recheck before a signature judges by the turn's decision clock.
    const decisionClock = opts.decisionClock === true ? createDecisionClock(clock) : undefined;
    const executor = new PlanExecutor({
      elapsedClock: decisionClock,
      store: opts.workerStore?.(store) ?? store,
      stillHolds: opts.stillHolds,
      api,
      signers: opts.signers,
      config: settings,
      clock,
      logger,
      failpoint,
      events: opts.events,
    });
    return { limiter, client, api, executor, decisionClock };
  };
  let proc = startProcess();

  return {
    get store() {
      return store;
    },
    get client() {
      return proc.client;
    },
    get limiter() {
      return proc.limiter;
    },
    get executor() {
      return proc.executor;
    },
    cycle: (wallet) =>
      runWalletCycle(
        { api: proc.api, store, executor: proc.executor, config: settings, clock, decisionClock: proc.decisionClock, logger, failpoint, dry: false, epochsExempt: opts.epochsExempt },
        wallet,
      ),
    restart: () => {
      store.close();
      store = open();
      store.recoverInFlight();
      proc = startProcess();
    },
    close: async () => {
      store.close();
      await ownDispatcher?.close();
    },
  };
}
