// Drives the real product against the hostile server, one Sequence at a time: the real ApiClient
// over undici, the real SQLite store (on tmpfs when there is one), the real PlanExecutor and
// runWalletCycle (test/support/cycle-rig.ts). One server, dispatcher, state file and redactor serve a
// whole test file; each sequence gets fresh wallet keypairs (so its state is isolated by address),
// its own API key, its own fake clock, and its own cycle rig: the store opened on the file for the
// sequence, a new client and executor per simulated process. Every log line is captured, and the
// rows the sequence added to the state file are read back as text for the secret check.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import bs58 from 'bs58';
import { createDispatcher } from '../../src/api/client.js';
import { generateKeypair } from '../../src/keys/signer.js';
import { loadKey } from '../../src/keys/keys.js';
import type { ApiConfig, Rule, SafetyConfig, StepSpec, WalletConfig } from '../../src/domain.js';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { openStore, type AttemptRow, type PlanWithSteps } from '../../src/store/index.js';
import type { Failpoint, FailpointName } from '../../src/executor/failpoints.js';
import type { WalletSigner } from '../../src/executor/ports.js';
import { inProcessSigner } from '../../src/keys/backends/in-process.js';
import { apiConfig } from '../api/helpers.js';
import { openCycleRig } from '../support/cycle-rig.js';
import { FakeClock } from '../support/clock.js';
import { buildApiKey, type Sequence } from './hostile-grammar.js';
import { startHostileServer } from './hostile-server.js';
import { DAY_MS, type Applied, type WalletSecrets } from './hostile-types.js';
import { SecretWindows } from './hostile-secrets.js';

/** Sequences between two scans of the state file's raw bytes (then a fresh file is started). */
const ROTATE_EVERY = 150;
/** 2025-06-01, the fake clocks' first day. */
const FIRST_DAY = Date.UTC(2025, 5, 1) / DAY_MS;

/** Thrown by an armed failpoint: the simulated process stops there, as if killed. */
class CrashSignal extends Error {}

export interface WalletOutcome {
  address: string;
  names: string[];
  ledger: readonly Applied[];
  transcript: readonly string[];
  refusals: readonly string[];
  plans: PlanWithSteps[];
  attempts: Map<number, AttemptRow[]>;
}

export interface Outcome {
  seq: Sequence;
  rule: Rule;
  safety: SafetyConfig;
  wallets: WalletOutcome[];
  /** Every log line of the sequence, as written (after the logger's own redaction). */
  lines: string[];
  /** Text of every row the sequence added to the state file. */
  stateText: string;
  secrets: SecretWindows;
  /** A cycle that threw (runWalletCycle must never throw for API trouble). */
  crashes: string[];
}

export interface HostileHarness {
  run(seq: Sequence): Promise<Outcome>;
  /** Pieces of secrets found in the raw bytes of a state file (.db, -wal, -shm), with the sequence they came from. */
  fileLeaks: string[];
  /** Scans the current state file's raw bytes now (and starts a fresh one). */
  scanFiles(): void;
  sequencesRun(): number;
  close(): Promise<void>;
}

export function ruleOf(seq: Sequence): Rule {
  const c = seq.config;
  const r = c.rule;
  const steps: StepSpec[] =
    r.kind === 'claim_only'
      ? [{ kind: 'claim' }]
      : r.kind === 'deposit_pct'
        ? [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'percent', ppm: r.pct * 10_000 } }]
        : r.kind === 'deposit_all'
          ? [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'all' } }]
          : r.kind === 'mint_fixed'
            ? [{ kind: 'claim' }, { kind: 'mint', symbol: 'SOL5X', amount: { kind: 'fixed', lamports: r.lamports } }]
            : [{ kind: 'mint', symbol: 'SOL5X', amount: { kind: 'fixed', lamports: r.lamports } }];
  return {
    name: 'r',
    id: 'r',
    when: [{ field: 'pending_sol', op: 'gte', value: c.threshold }],
    do: steps,
    limits: { oncePerEpoch: c.oncePerEpoch, cooldownMs: c.cooldownMs, maxPlansPerDay: c.maxPlansPerDay, maxLamportsPerDay: c.maxPerDay },
  };
}

export async function openHostileHarness(label: string): Promise<HostileHarness> {
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), `autoclaim-hostile-${label}-`));
  const server = await startHostileServer();
  const base: ApiConfig = apiConfig({ baseUrl: server.url, timeoutMs: 300, connectTimeoutMs: 300, connections: 4 });
  const dispatcher = createDispatcher(base);
  // One redactor for the file, as one daemon has one for its whole fleet; every sequence's secrets join it.
  const redactor = new Redactor();
  let lines: string[] = [];
  const logger = createLogger({ level: 'debug', redactor, pretty: false, destination: { write: (l: string) => void lines.push(l) } });

  let generation = 0;
  let path = '';
  let inspector: Database.Database;
  /** Per table with row ids: the statements that read its newest row id and the rows after one. */
  let tableReads: Array<{ name: string; max: Database.Statement; since: Database.Statement }> | undefined;
  let sinceRotation = new SecretWindows();
  let sequencesSinceRotation = 0;
  const fileLeaks: string[] = [];
  let runs = 0;
  /** A crash the sequence asked for: the failpoint and how many more times it may be reached first. */
  let armed: { point: FailpointName; left: number } | undefined;
  const failpoint: Failpoint = (name) => {
    if (armed?.point !== name) return;
    armed.left -= 1;
    if (armed.left > 0) return;
    armed = undefined;
    throw new CrashSignal(`simulated crash at ${name}`);
  };

  const openGeneration = (): void => {
    generation += 1;
    path = join(dir, `state-${generation}.db`);
    // Created here so that the inspector can open it; each sequence's rig opens it again.
    openStore(path, { logger, clock: new FakeClock(FIRST_DAY * DAY_MS, 1_000_000), redactor }).close();
    inspector = new Database(path, { readonly: true });
    tableReads = undefined;
  };
  /** Scans the raw bytes of the state files for every secret of the sequences since the last scan, then starts a new file. */
  const rotate = (): void => {
    inspector.close();
    for (const suffix of ['', '-wal', '-shm', '-journal']) {
      if (!existsSync(path + suffix)) continue;
      const text = readFileSync(path + suffix).toString('latin1');
      const hit = sinceRotation.find(text);
      if (hit !== undefined) fileLeaks.push(`${path}${suffix} holds ${hit}`);
    }
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
    sinceRotation = new SecretWindows();
    sequencesSinceRotation = 0;
    openGeneration();
  };
  openGeneration();

  const tables = () => {
    tableReads ??= (inspector.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE '%WITHOUT ROWID%'").all() as Array<{ name: string }>).map(({ name }) => ({
      name,
      max: inspector.prepare(`SELECT COALESCE(MAX(rowid), 0) AS m FROM "${name}"`),
      since: inspector.prepare(`SELECT * FROM "${name}" WHERE rowid > ?`),
    }));
    return tableReads;
  };
  /** Row ids before the sequence, so that only its own rows are read back afterwards. */
  const maxRowids = (): Map<string, number> => new Map(tables().map((t) => [t.name, Number((t.max.get() as { m: number }).m)]));
  const rowsSince = (before: Map<string, number>): string =>
    tables()
      .flatMap((t) => (t.since.all(before.get(t.name) ?? 0) as Array<Record<string, unknown>>).map((row) => Object.values(row).map(String).join('\n')))
      .join('\n');

  const run = async (seq: Sequence): Promise<Outcome> => {
    runs += 1;
    if (sequencesSinceRotation >= ROTATE_EVERY) rotate();
    lines = [];
    const clock = new FakeClock(FIRST_DAY * DAY_MS + seq.startOffsetMs, 1_000_000);
    const before = maxRowids();
    const apiKey = buildApiKey(seq.apiKey);
    redactor.add(apiKey); // as openApi does with the configured key
    const rule = ruleOf(seq);
    const safety: SafetyConfig = { maxLamportsPerAction: seq.config.maxPerAction };
    const secrets = new SecretWindows();
    secrets.add('api key', apiKey);

    const wallets: Array<{ config: WalletConfig; names: string[] }> = [];
    const signers = new Map<string, WalletSigner>();
    seq.wallets.forEach((ws, i) => {
      const { secretKey64, address } = generateKeypair();
      const seed = secretKey64.subarray(0, 32);
      const ws58: WalletSecrets = {
        apiKey,
        seed58: bs58.encode(seed),
        secret58: bs58.encode(secretKey64),
        seedHex: Buffer.from(seed).toString('hex'),
        secretArray: JSON.stringify([...secretKey64]),
        seedB64: Buffer.from(seed).toString('base64'),
      };
      secrets.add(`wallet ${i} seed (base58)`, ws58.seed58);
      secrets.add(`wallet ${i} secret key (base58)`, ws58.secret58);
      secrets.add(`wallet ${i} seed (hex)`, ws58.seedHex);
      secrets.add(`wallet ${i} seed (number array)`, `[${[...seed].join(',')}`);
      secrets.add(`wallet ${i} seed (base64)`, ws58.seedB64);
      // The public half of the number-array form, from the comma that joins it to the seed.
      secrets.addPublic(`,${[...secretKey64.subarray(32)].join(',')}]`);
      // The product's own key loading registers the key material with the redactor, as at start-up.
      const env = { HOSTILE_KEY: ws58.secret58 };
      const signer = loadKey({ env: 'HOSTILE_KEY' }, { env, baseDir: dir, redactor });
      const name = `s${runs}w${i}`;
      wallets.push({ config: { name, address, key: { env: 'HOSTILE_KEY' }, rules: ['r'] }, names: [name] });
      signers.set(address, inProcessSigner(signer));
      server.register({ address, secrets: ws58, now: () => clock.now(), pending: ws.pending, script: ws.script, timeoutMs: seq.config.timeoutMs });
    });

    const config: ApiConfig = { ...base, timeoutMs: seq.config.timeoutMs };
    const rig = openCycleRig({
      storePath: path,
      clock,
      logger,
      redactor,
      // The redactor scrubs each answer as it is read, as openApi wires the product's client.
      redact: (t) => redactor.redact(t),
      api: config,
      apiKey,
      dispatcher,
      sleep: (ms) => {
        clock.advance(ms);
        return Promise.resolve();
      },
      random: () => 0.5,
      signers,
      settings: () => ({ rules: [rule], safety }),
      failpoint,
    });

    const crashes: string[] = [];
    let renames = 0;
    const mark = (line: string): void => {
      for (const w of wallets) server.mark(w.config.address, line);
    };
    const restart = (rename: boolean): void => {
      // A new process: the store reopened, in-flight steps recovered, a new client and executor.
      rig.restart();
      mark(rename ? 'restart, wallets renamed' : 'restart');
      if (rename) {
        renames += 1;
        for (const w of wallets) {
          w.config = { ...w.config, name: `${w.names[0]}-renamed${renames}` };
          w.names.push(w.config.name);
        }
      }
    };
    let outcomes: WalletOutcome[];
    try {
      for (const ev of seq.events) {
        if (ev.kind === 'restart') {
          restart(ev.rename);
          continue;
        }
        if (ev.kind === 'crash') {
          armed = { point: ev.point, left: ev.nth };
          continue;
        }
        clock.advance(ev.advanceMs);
        mark(`cycle at ${new Date(clock.now()).toISOString()}`);
        let killed = false;
        for (const w of wallets) {
          try {
            await rig.cycle(w.config);
          } catch (err) {
            if (err instanceof CrashSignal) {
              mark(err.message);
              killed = true;
              break; // the process is gone: no other wallet runs in it
            }
            crashes.push(`cycle of ${w.config.name} threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
          }
        }
        if (killed) restart(false);
      }
      armed = undefined;

      outcomes = wallets.map((w) => {
        const world = server.world(w.config.address);
        const plans = rig.store.listPlans({ address: w.config.address, limit: 10_000 }).filter((p) => p.address === w.config.address);
        const attempts = new Map<number, AttemptRow[]>();
        for (const p of plans) for (const s of p.steps) attempts.set(s.id, rig.store.stepAttempts(s.id));
        server.forget(w.config.address);
        return { address: w.config.address, names: w.names, ledger: world.ledger, transcript: world.transcript, refusals: world.refusals, plans, attempts };
      });
    } finally {
      await rig.close();
    }
    const stateText = rowsSince(before);
    sinceRotation.merge(secrets, `sequence #${runs} (wallets ${wallets.map((w) => w.config.address).join(', ')})`);
    sequencesSinceRotation += 1;
    return { seq, rule, safety, wallets: outcomes, lines, stateText, secrets, crashes };
  };

  return {
    run,
    fileLeaks,
    scanFiles: rotate,
    sequencesRun: () => runs,
    close: async () => {
      rotate();
      inspector.close();
      await dispatcher.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
