// The daemon tests' shared set-up: a config over the in-process sandbox (one rule that claims, a
// schedule that never fires by itself, so each test drives its own cycles and reloads), and a real
// runtime and daemon on it, their JSON log lines kept in memory.
import { Daemon } from '../../src/daemon.js';
import { systemClock, type Clock } from '../../src/domain.js';
import type { AutoclaimEvents } from '../../src/events.js';
import type { Logger } from '../../src/log/logger.js';
import type { Redactor } from '../../src/log/redact.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { captureLog, type CapturedLog } from '../support/log.js';

export interface ConfigWallet {
  name: string;
  address: string;
  /** Relative to the config; default ./keys/NAME.json, where makeWallets writes it. */
  keyFile?: string;
}

/**
 * The config, every path relative to it. `api` is added under `api:` (indented lines); the rule
 * claims whatever is pending above `threshold` SOL, once an epoch (a day). Wallet i's `key:` is
 * on line 10 + 3i.
 */
export function sandboxYaml(wallets: ConfigWallet[], opts: { threshold?: string; api?: string } = {}): string {
  const list = wallets.map((w) => `  - name: ${w.name}\n    address: ${w.address}\n    key: { file: ${w.keyFile ?? `./keys/${w.name}.json`} }\n`).join('');
  return `api:
  base_url: sandbox
${opts.api ?? ''}state:
  path: ./state/autoclaim.db
schedule:
  poll: "0 0 1 1 *"
wallets:
${list}rules:
  - name: sweep
    when:
      pending_sol: { gte: ${opts.threshold ?? '0.01'} }
    do:
      - claim
safety:
  max_sol_per_action: 100
sandbox:
  epoch: 1d
`;
}

export interface InProcess {
  runtime: Runtime;
  daemon: Daemon;
  redactor: Redactor;
  log: CapturedLog;
  /** Stops the daemon and closes the runtime (the caller removes its directory). */
  stop(): Promise<void>;
}

/** A runtime and a daemon for the config at `configPath`, run from `dir` with an empty environment. */
export async function startInProcess(opts: {
  dir: string;
  configPath: string;
  level?: string;
  /** The process's event channel, made on the test's logger (for tests that listen to it). */
  events?: (logger: Logger) => AutoclaimEvents;
  /** Wallet turns at once (the daemon's default when absent). */
  concurrency?: number;
  /** The clock of the runtime, the sandbox and the daemon (the system's when absent). */
  clock?: Clock;
}): Promise<InProcess> {
  const log = captureLog(opts.level ?? 'debug');
  const { logger, redactor } = log;
  const events = opts.events?.(logger);
  const common = { configPath: opts.configPath, env: {}, cwd: opts.dir, clock: opts.clock ?? systemClock, logger, redactor };
  const runtime = await openRuntime({ ...common, lock: true, ...(events ? { events } : {}) });
  const daemon = new Daemon({ ...common, runtime, dry: false, failpoint: () => {}, ...(events ? { events } : {}), ...(opts.concurrency === undefined ? {} : { concurrency: opts.concurrency }) });
  return {
    runtime,
    daemon,
    redactor,
    log,
    stop: async () => {
      await daemon.stop(1000);
      await runtime.close();
    },
  };
}
