// The wire-fault harness: a real sandbox, a real config file, a real SQLite state in a temp dir, and
// one `once` = recoverInFlight + runWalletCycle with a real PlanExecutor and ApiClient, built fresh
// each time as a new process would. Faults the sandbox cannot make (connection refused, DNS, connect
// timeout) are made by the client's dispatcher: the signed POST of one operation is routed to a
// closed loopback port, or to a made-up host whose name lookup fails or never answers. No real name
// is ever resolved.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import bs58 from 'bs58';
import { Agent } from 'undici';
import { createDispatcher } from '../../src/api/client.js';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { checkAddress, loadKey } from '../../src/keys/keys.js';
import { loadConfig } from '../../src/config/index.js';
import { systemClock, type AppConfig, type SignedOp, type StepState } from '../../src/domain.js';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { startSandbox, type LedgerEntry, type Sandbox } from '../../src/sandbox/server.js';
import type { AttemptRow, PlanWithSteps } from '../../src/store/index.js';
import type { WalletSigner } from '../../src/executor/ports.js';
import { inProcessSigner } from '../../src/keys/backends/in-process.js';
import { templatesOf } from '../../src/keys/message.js';
import type { InProcessKeySource } from '../../src/domain.js';
import { closedPort } from '../support/net.js';
import { openCycleRig, type CycleRig } from '../support/cycle-rig.js';
import { CANARY_API_KEY, configYaml, makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';

export const SOL = 1_000_000_000n;

/** Short client timeouts; every sandbox delay in the tests is far above them. */
export const TIMEOUT_MS = 400;
export const CONNECT_TIMEOUT_MS = 300;

/** Faults made on our side of the wire: the request provably never reaches the server. */
export type WireFault = 'refused' | 'dns' | 'connect_timeout';

/** Each op's rule: a claim alone, or a claim followed by a transfer of half of what was claimed. */
export const RULES: Record<'claim' | 'deposit' | 'mint', string> = {
  claim: `  - name: r
    when: { pending_sol: { gte: 0.5 } }
    do: [claim]
`,
  deposit: `  - name: r
    when: { pending_sol: { gte: 0.5 } }
    do:
      - claim
      - deposit: { symbol: SOL2X, amount: "50%" }
`,
  mint: `  - name: r
    when: { pending_sol: { gte: 0.5 } }
    do:
      - claim
      - mint: { symbol: SOL5X, amount: "50%" }
`,
};

export interface FaultWorld {
  dir: string;
  sandbox: Sandbox;
  wallet: TestWallet;
  config: AppConfig;
  /** This wallet's ledger entries of one operation. */
  applied(op: SignedOp): LedgerEntry[];
  close(): Promise<void>;
}

export async function openFaultWorld(opts: { rules: string; pendingLamports?: bigint; balanceLamports?: bigint }): Promise<FaultWorld> {
  const { dir, cleanup } = tempDir('autoclaim-faults-');
  const [wallet] = makeWallets(dir, ['w']) as [TestWallet];
  const sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    // A service without replay protection (SPEC §6 documents none): a signed request sent twice is
    // two entries in the ledger here, not a 409 the daemon reads as a refusal.
    replays: 'apply',
    defaultAccrualLamportsPerSec: 0n,
    wallets: [{ address: wallet.address, pendingLamports: opts.pendingLamports ?? SOL, accrualLamportsPerSec: 0n, balanceLamports: opts.balanceLamports ?? 0n }],
  });
  const file = join(dir, 'autoclaim.yaml');
  // The table is about reconciliation itself: judge a lost claim at once (the settle window that
  // guards against a server still holding it is tested in crash.test.ts).
  writeFileSync(file, configYaml({ baseUrl: sandbox.url, wallets: [wallet], rules: opts.rules, apiExtra: '  claim_settle: 0s\n' }));
  const loaded = loadConfig(file, { env: {}, cwd: dir });
  if (loaded.config === undefined) throw new Error(`test config invalid: ${JSON.stringify(loaded.errors)}`);
  const config: AppConfig = { ...loaded.config, api: { ...loaded.config.api, timeoutMs: TIMEOUT_MS, connectTimeoutMs: CONNECT_TIMEOUT_MS } };
  return {
    dir,
    sandbox,
    wallet,
    config,
    applied: (op) => sandbox.ledger().filter((e) => e.wallet === wallet.address && e.op === op),
    close: async () => {
      await sandbox.close();
      cleanup();
    },
  };
}

export interface OnceResult {
  events: Array<Record<string, unknown>>;
  plans: PlanWithSteps[];
  /** The state of this op's step in the newest plan. */
  state(op: SignedOp): StepState | undefined;
  /** Every attempt recorded for this op's step in the newest plan (one per signed request sent). */
  attempts(op: SignedOp): AttemptRow[];
  /** Signed POSTs that left the client (reached the dispatcher), by op. */
  posts: Record<SignedOp, number>;
}

const FAULT_HOST = 'autoclaim-fault.invalid';

/** An agent for made-up names: the lookup fails at once (DNS) or never answers (connect timeout). */
function unresolvableAgent(fault: 'dns' | 'connect_timeout'): Agent {
  const lookup = (hostname: string, _options: unknown, callback: (err: NodeJS.ErrnoException | null) => void) => {
    if (hostname !== FAULT_HOST) throw new Error(`the fault agent was asked to resolve ${hostname}`);
    if (fault === 'connect_timeout') return; // never answers: undici's connect timeout must fire
    const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    err.code = 'ENOTFOUND';
    err.syscall = 'getaddrinfo';
    callback(err);
  };
  return new Agent({ connect: { timeout: CONNECT_TIMEOUT_MS, lookup } as Agent.Options['connect'] });
}

/**
 * The client's dispatcher: the real one, except that the signed POST of `faultOp` goes where it
 * cannot arrive while `wireFault` is set. Counts every signed POST handed to it.
 */
async function faultyDispatcher(
  config: AppConfig,
  wireFault: WireFault | undefined,
  faultOp: SignedOp,
  posts: Record<SignedOp, number>,
  readsFailAfter: SignedOp | undefined,
) {
  const base = createDispatcher(config.api);
  // Once the signed request of `readsFailAfter` has gone out, every read is refused.
  const deadReads = readsFailAfter === undefined ? undefined : { agent: new Agent(), origin: `http://127.0.0.1:${await closedPort()}`, on: false };
  const target = new URL(config.api.baseUrl);
  let side: Agent | undefined;
  let origin = '';
  if (wireFault === 'refused') {
    side = new Agent({ connect: { timeout: CONNECT_TIMEOUT_MS } });
    origin = `http://127.0.0.1:${await closedPort()}`;
  } else if (wireFault !== undefined) {
    side = unresolvableAgent(wireFault);
    origin = `http://${FAULT_HOST}:${target.port}`;
  }
  const opOf = (path: string): SignedOp | undefined =>
    (Object.keys(DEFAULT_ENDPOINTS) as SignedOp[]).find((op) => path === `${target.pathname.replace(/\/$/, '')}${DEFAULT_ENDPOINTS[op].path}`);
  const dispatcher = base.compose((dispatch) => (opts, handler) => {
    const op = opts.method === 'GET' ? undefined : opOf(opts.path);
    if (op !== undefined) posts[op] += 1;
    if (deadReads !== undefined) {
      if (op === readsFailAfter) deadReads.on = true;
      else if (opts.method === 'GET' && deadReads.on) return deadReads.agent.dispatch({ ...opts, origin: deadReads.origin }, handler);
    }
    if (side !== undefined && op === faultOp) return side.dispatch({ ...opts, origin }, handler);
    return dispatch(opts, handler);
  });
  return {
    dispatcher: dispatcher,
    close: async () => {
      await base.close();
      await side?.destroy();
      await deadReads?.agent.destroy();
    },
  };
}

/** One `once` for the world's wallet, as a freshly started process would run it. */
export async function runOnce(
  world: FaultWorld,
  opts: { wireFault?: WireFault; faultOp?: SignedOp; readsFailAfter?: SignedOp } = {},
): Promise<OnceResult> {
  const { config } = world;
  const lines: Array<Record<string, unknown>> = [];
  const redactor = new Redactor().add(CANARY_API_KEY);
  const logger = createLogger({ level: 'debug', redactor, pretty: false, destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
  const posts: Record<SignedOp, number> = { claim: 0, deposit: 0, mint: 0, withdraw: 0, burn: 0 };
  const wire = await faultyDispatcher(config, opts.wireFault, opts.faultOp ?? 'claim', posts, opts.readsFailAfter);
  let rig: CycleRig | undefined;
  try {
    const signers = new Map<string, WalletSigner>();
    for (const w of config.wallets) {
      const signer = loadKey(w.key as InProcessKeySource, { env: {}, baseDir: dirname(config.file), redactor });
      checkAddress(signer, w.address, w.name);
      signers.set(w.address, inProcessSigner(signer, templatesOf(config.api.endpoints)));
    }
    rig = openCycleRig({
      storePath: config.state.path,
      clock: systemClock,
      logger,
      redactor,
      api: config.api,
      apiKey: CANARY_API_KEY,
      dispatcher: wire.dispatcher,
      signers,
      settings: () => config,
    });
    const { store } = rig;
    store.recoverInFlight();
    for (const wallet of config.wallets) await rig.cycle(wallet);
    const plans = store.listPlans();
    const stepOf = (op: SignedOp) => plans[0]?.steps.find((s) => s.kind === op);
    const attempts = new Map<SignedOp, AttemptRow[]>();
    for (const op of ['claim', 'deposit', 'mint'] as const) {
      const step = stepOf(op);
      attempts.set(op, step === undefined ? [] : store.stepAttempts(step.id));
    }
    return { events: lines, plans, state: (op) => stepOf(op)?.state, attempts: (op) => attempts.get(op) ?? [], posts };
  } finally {
    await wire.close();
    await rig?.close();
    assertNoSecret(world, lines);
  }
}

/** The canary API key and the wallet's secret key are in no log line and no byte of the state. */
function assertNoSecret(world: FaultWorld, lines: Array<Record<string, unknown>>): void {
  const secrets = [CANARY_API_KEY, bs58.encode(world.wallet.secretKey64), Buffer.from(world.wallet.secretKey64).toString('hex')];
  const stateDir = dirname(world.config.state.path);
  const texts = [JSON.stringify(lines), ...readdirSync(stateDir).map((f) => readFileSync(join(stateDir, f)).toString('latin1'))];
  for (const secret of secrets) {
    if (texts.some((t) => t.includes(secret))) throw new Error('a secret reached a log line or the state database');
  }
}
