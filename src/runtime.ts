// Opens everything a `run` or `once` needs, in an order that fails early and cheaply: config →
// secrets → keys → lock → database → client. Nothing here runs at import time; every edge comes in.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Dispatcher } from 'undici';
import type { AppConfig, Clock } from './domain.js';
import { ConfigError, type ConfigIssue } from './errors.js';
import type { Logger } from './log/logger.js';
import type { Redactor } from './log/redact.js';
import { loadConfig, resolveApiKey, type LoadedSecrets, type LoadResult } from './config/index.js';
import { resolveStatePassword } from './config/secrets.js';
import type { Cluster } from './cluster/open.js';
import type { ApiClient } from './api/client.js';
import { RateLimiter } from './api/rate-limit.js';
import type { EventSink } from './events.js';
import { acquireLock, openStateStore, sqliteMigrationPending, type Lock, type Store } from './store/index.js';
import type { Sandbox } from './sandbox/server.js';
import { prepareDemoWorld } from './sandbox/demo.js';
import type { WalletSigner } from './executor/ports.js';
import { epochsExempt } from './executor/epoch-check.js';
import { closeSigners, connectSigners } from './keys/backends/index.js';

export interface RuntimeOptions {
  configPath: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  clock: Clock;
  logger: Logger;
  redactor: Redactor;
  /** Take the single-instance lock (run and once do; read-only commands don't). */
  lock: boolean;
  /**
   * With state.url: join the cluster's leases, every write fenced by them (run, once; the default).
   * False opens the shared store unfenced and leaseless: `send` only records a plan there, and the
   * daemon holding the wallet's lease sends it.
   */
  leases?: boolean;
  /** The process's event channel, handed to the API client (`request:done`). */
  events?: EventSink;
  /** False for `once`, which does not poll on the schedule (LoadOptions.scheduled). */
  scheduled?: boolean;
  /** The config's log.level becomes the logger's (CommandContext.configSetsLevel). */
  configSetsLevel?: boolean;
  /** A command's own refusal of the loaded config (it throws), before anything connects or listens. */
  admit?: (config: AppConfig) => void;
  /**
   * Awaited right before the SQLite state is migrated to this release's schema, which holds the
   * event loop for as long as it takes (`run` tells systemd the start takes longer: notify.ts).
   */
  beforeMigration?: () => Promise<void>;
}

export interface Runtime {
  config: AppConfig;
  store: Store;
  client: ApiClient;
  limiter: RateLimiter;
  dispatcher: Dispatcher;
  signers: Map<string, WalletSigner>;
  sandbox: Sandbox | undefined;
  lock: Lock | undefined;
  /** With `state.url`: the lease manager that splits the wallets among the daemons sharing it. */
  cluster: Cluster | undefined;
  close(): Promise<void>;
}

/**
 * Whether the runtime's epochs are the sandbox's fast demo ones (epochsExempt), judged by the config
 * as loaded: the runtime's own names the in-process sandbox by its loopback URL.
 */
export function runtimeEpochsExempt(runtime: Pick<Runtime, 'sandbox'>, config: AppConfig, env: NodeJS.ProcessEnv): boolean {
  return epochsExempt(runtime.sandbox === undefined ? config : { ...config, api: { baseUrl: 'sandbox' } }, env);
}

/** Loads and validates the config (without its keys); throws ConfigError with every issue. */
export function loadValidConfig(configPath: string, env: NodeJS.ProcessEnv, cwd: string, logger?: Logger): AppConfig {
  const result = loadConfig(configPath, { env, cwd });
  for (const w of result.warnings) logger?.warn({ event: 'config.warning', ...w }, w.message);
  if (result.config === undefined) throw new ConfigError(result.errors);
  return result.config;
}

/**
 * The whole start-up check, as `check` runs it: the config pipeline with its key step, so schema,
 * cross-field and key problems (wallet keys at their `key:`, the API key, the webhook secret)
 * come in one list. With the sandbox, the public demo keys are written first, under the demo key
 * folder only. Never throws for a problem in the config.
 */
export function checkConfig(
  configPath: string,
  opts: { env: NodeJS.ProcessEnv; cwd: string; redactor: Redactor; logger: Logger; scheduled?: boolean | undefined },
): LoadResult {
  const { logger } = opts;
  return loadConfig(configPath, {
    env: opts.env,
    cwd: opts.cwd,
    scheduled: opts.scheduled,
    keys: { redactor: opts.redactor, prepareSandbox: (config) => prepareDemoWorld(config, { logger }) },
  });
}

/**
 * checkConfig for `run`, `once`, `send` and a reload: warnings logged, ConfigError with every issue.
 * Every key is derived and checked against its address here, before any request.
 */
export function loadCheckedConfig(
  configPath: string,
  opts: { env: NodeJS.ProcessEnv; cwd: string; redactor: Redactor; logger: Logger; scheduled?: boolean | undefined },
): { config: AppConfig; secrets: LoadedSecrets } {
  const result = checkConfig(configPath, opts);
  for (const w of result.warnings) opts.logger.warn({ event: 'config.warning', ...w }, w.message);
  if (result.config === undefined || result.secrets === undefined) throw new ConfigError(result.errors);
  return { config: result.config, secrets: result.secrets };
}

interface ApiHandle {
  /** The config with api.base_url resolved (the sandbox's real URL when it runs in-process). */
  config: AppConfig;
  client: ApiClient;
  limiter: RateLimiter;
  dispatcher: Dispatcher;
  sandbox: Sandbox | undefined;
  close(): Promise<void>;
}

/** The API client, and the in-process sandbox behind it when api.base_url is "sandbox". */
export async function openApi(
  config: AppConfig,
  opts: { env: NodeJS.ProcessEnv; clock: Clock; logger: Logger; redactor: Redactor; events?: EventSink },
): Promise<ApiHandle> {
  const { env, logger, redactor, clock } = opts;
  let apiKey = resolveApiKey(config, env, { credentialsDir: env.CREDENTIALS_DIRECTORY });
  redactor.add(apiKey);
  let sandbox: Sandbox | undefined;
  if (config.api.baseUrl === 'sandbox') {
    // The built-in simulator: demo keys are generated into the state folder, the API key is
    // random per process, and the world accrues on the real clock.
    const demo = prepareDemoWorld(config, { logger });
    apiKey ??= demo.apiKey;
    // Loaded only here: a daemon against a real API never needs the simulator's code in memory.
    const { startSandbox } = await import('./sandbox/server.js');
    redactor.add(apiKey);
    sandbox = await startSandbox({ ...demo.sandboxOptions, apiKey, clock, logger: logger.child({ component: 'sandbox' }) });
    config = { ...config, api: { ...config.api, baseUrl: sandbox.url } };
    logger.info({ event: 'sandbox.started', url: sandbox.url }, `built-in sandbox listening on ${sandbox.url}`);
  }
  // Loaded here, where the API is opened: `check`, `status`, `actions`, pause and resume read the
  // config and the state and never need undici's connection pool or the response schemas.
  const { ApiClient, createDispatcher } = await import('./api/client.js');
  const dispatcher = createDispatcher(config.api);
  const limiter = new RateLimiter({ ...config.api.rateLimit, clock });
  const client = new ApiClient({ config: config.api, apiKey, dispatcher, limiter, clock, logger, events: opts.events, redact: (text) => redactor.redact(text) });
  const started = sandbox;
  return {
    config,
    client,
    limiter,
    dispatcher,
    sandbox,
    close: async () => {
      await dispatcher.close();
      await started?.close();
    },
  };
}

/**
 * The state: the SQLite file under its single-instance lock, or (state.url) the PostgreSQL database
 * shared with other daemons, where leases take the lock's place.
 */
async function openState(
  config: AppConfig,
  opts: RuntimeOptions & { closers: Array<() => Promise<void> | void> },
): Promise<{ store: Store; lock: Lock | undefined; cluster: Cluster | undefined }> {
  const { env, logger, redactor, clock, closers } = opts;
  const url = config.state.url;
  if (url !== undefined) {
    const password = resolveStatePassword(config, env, { credentialsDir: env.CREDENTIALS_DIRECTORY });
    redactor.add(password);
    if (opts.leases === false) {
      // `send` beside running daemons, which may be of the release before this one: it leaves an
      // older schema to their restart (Upgrades review, helper 31).
      const store = await openStateStore(config.state, { logger, clock, password, redactor, upgrade: false });
      closers.push(() => store.close());
      return { store, lock: undefined, cluster: undefined };
    }
    const { openCluster } = await import('./cluster/open.js');
    const { store, cluster } = await openCluster({
      url,
      password,
      leaseMs: config.state.leaseMs,
      queryTimeoutMs: config.state.queryTimeoutMs,
      maxClockSkewMs: config.cluster.maxClockSkewMs,
      logger,
      clock,
      redactor,
    });
    // Closed in reverse: the store first, so no write of it outlives the leases that fence it;
    // then the leases are handed back.
    closers.push(() => cluster.close());
    closers.push(() => store.close());
    return { store, lock: undefined, cluster };
  }
  let lock: Lock | undefined;
  if (opts.lock) {
    lock = acquireLock(config.state.path);
    closers.push(() => lock?.release());
  }
  if (opts.beforeMigration !== undefined && sqliteMigrationPending(config.state.path)) {
    logger.info({ event: 'state.migrating', file: config.state.path }, "migrating the state database to this release's schema; the start waits for it");
    await opts.beforeMigration();
  }
  const store = await openStateStore(config.state, { logger, clock, redactor, lock });
  closers.push(() => store.close());
  return { store, lock, cluster: undefined };
}

/**
 * Connects every remote signer (start and `check`): each must answer and its key derive the
 * wallet's address. What does not, as the config issues that stop a start.
 */
export async function connectWalletSigners(config: AppConfig, signers: ReadonlyMap<string, WalletSigner>): Promise<ConfigIssue[]> {
  const problems = await connectSigners(signers.values());
  const where = (address: string): number => config.wallets.findIndex((w) => w.address === address);
  return problems.map((p) => ({ file: config.file, line: 0, col: 0, path: `wallets[${where(p.address)}].key`, message: `wallet ${p.address}: the ${p.backend} signer: ${p.message}` }));
}

export async function openRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const { env, logger, redactor, clock } = opts;
  // Keys with the config: a wallet whose key does not load must stop the start before anything listens.
  const { config: loaded, secrets } = loadCheckedConfig(opts.configPath, { env, cwd: opts.cwd, redactor, logger, scheduled: opts.scheduled });
  // Before any part makes its child logger: a pino child keeps the level it was made with.
  if (opts.configSetsLevel === true) logger.level = loaded.log.level;
  const signers = secrets.signers;
  try {
    opts.admit?.(loaded);
  } catch (err) {
    await closeSigners(signers.values());
    throw err;
  }
  // Every remote backend answers, and its key is the configured address's, before anything listens.
  const problems = await connectWalletSigners(loaded, signers);
  if (problems.length > 0) {
    await closeSigners(signers.values());
    throw new ConfigError(problems);
  }

  const closers: Array<() => Promise<void> | void> = [];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c();
    closers.length = 0;
  };
  try {
    mkdirSync(dirname(loaded.state.path), { recursive: true, mode: 0o700 });
    const state = await openState(loaded, { ...opts, closers });
    const api = await openApi(loaded, { env, clock, logger, redactor, events: opts.events });
    closers.push(() => api.close());
    closers.push(() => closeSigners(signers.values()));
    return { ...api, ...state, signers, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
