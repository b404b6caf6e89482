// SQLite trouble (issue "Crash safety"): when the state file cannot record an intent — disk full,
// read-only, locked by someone else, corrupt — autoclaim sends nothing signed (fail closed) and
// says why. In-process: the real store, executor and wallet cycle, a real sandbox on loopback.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiClient, createDispatcher } from '../../src/api/client.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { checkAddress, loadKey } from '../../src/keys/keys.js';
import { loadConfig } from '../../src/config/index.js';
import { systemClock, type AppConfig } from '../../src/domain.js';
import { StateError } from '../../src/errors.js';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { openStore, type SyncStore } from '../../src/store/index.js';
import { PlanExecutor } from '../../src/executor/executor.js';
import type { Failpoint, FailpointName } from '../../src/executor/failpoints.js';
import type { WalletSigner } from '../../src/executor/ports.js';
import { inProcessSigner } from '../../src/keys/backends/in-process.js';
import { templatesOf } from '../../src/keys/message.js';
import type { InProcessKeySource } from '../../src/domain.js';
import { runWalletCycle, type WalletCycleResult } from '../../src/executor/wallet-cycle.js';
import { CANARY_API_KEY, runCli } from '../e2e/helpers.js';
import { crashWorld, readState, SOL, type CrashWorld } from './crash-harness.js';

// The store keeps its connection to itself; PRAGMAs such as max_page_count and query_only are per
// connection, so the test keeps a reference to every connection better-sqlite3 opens.
const connections = vi.hoisted(() => [] as unknown[]);
vi.mock('better-sqlite3', async (importOriginal) => {
  const mod = await importOriginal<{ default: typeof Database }>();
  class Tracked extends mod.default {
    constructor(...args: ConstructorParameters<typeof Database>) {
      super(...args);
      connections.push(this);
    }
  }
  return { ...mod, default: Tracked };
});

const RULES = {
  claim: `  - name: r
    when: { pending_sol: { gte: 0.5 } }
    do: [claim, { deposit: { symbol: SOL2X, amount: "50%" } }]
`,
  deposit: `  - name: r
    when: { pending_sol: { gte: 0.5 } }
    do: [{ deposit: { symbol: SOL2X, amount: 0.25 } }]
`,
  mint: `  - name: r
    when: { pending_sol: { gte: 0.5 } }
    do: [{ mint: { symbol: SOL5X, amount: 0.25 } }]
`,
};
type FirstOp = keyof typeof RULES;

interface Rig {
  world: CrashWorld;
  store: SyncStore;
  /** The store's own connection. */
  db: Database.Database;
  events: Array<Record<string, unknown>>;
  /** One poll → decide → act turn of the wallet; `hook` runs at each failpoint. */
  cycle(hook?: (name: FailpointName) => void): Promise<WalletCycleResult>;
  close(): Promise<void>;
}

async function openRig(first: FirstOp, opts: { busyTimeoutMs?: number } = {}): Promise<Rig> {
  const world = await crashWorld({ names: ['alpha'], rules: RULES[first] });
  // Deposits and mints that are not preceded by a claim spend what the wallet already holds.
  world.sandbox.world.setWallet(world.wallets[0]!.address, { balanceLamports: 1n * SOL });
  const loaded = loadConfig(world.config, { env: {}, cwd: world.dir });
  if (loaded.config === undefined) throw new Error(`test config invalid: ${JSON.stringify(loaded.errors)}`);
  const config: AppConfig = loaded.config;
  const events: Array<Record<string, unknown>> = [];
  const redactor = new Redactor().add(CANARY_API_KEY);
  const logger = createLogger({ level: 'info', redactor, pretty: false, destination: { write: (l: string) => void events.push(JSON.parse(l) as Record<string, unknown>) } });
  mkdirSync(dirname(world.statePath), { recursive: true, mode: 0o700 });
  const store = openStore(world.statePath, { logger, redactor, busyTimeoutMs: opts.busyTimeoutMs ?? 5000 });
  const db = connections.at(-1) as Database.Database;
  const dispatcher = createDispatcher(config.api);
  const client = new ApiClient({
    config: config.api,
    apiKey: CANARY_API_KEY,
    dispatcher,
    limiter: new RateLimiter({ ...config.api.rateLimit, clock: systemClock }),
    clock: systemClock,
    logger,
  });
  const wallet = config.wallets[0]!;
  const signer = loadKey(wallet.key as InProcessKeySource, { env: {}, baseDir: dirname(config.file), redactor });
  checkAddress(signer, wallet.address, wallet.name);
  const signers = new Map<string, WalletSigner>([[wallet.address, inProcessSigner(signer, templatesOf(config.api.endpoints))]]);
  return {
    world,
    store,
    db,
    events,
    cycle: (hook) => {
      const failpoint: Failpoint = (name) => hook?.(name);
      const deps = { store, api: client, signers, config: () => config, clock: systemClock, logger, failpoint };
      const executor = new PlanExecutor(deps);
      return runWalletCycle({ ...deps, executor, dry: false }, wallet);
    },
    close: async () => {
      store.close();
      await dispatcher.close();
      await world.close();
    },
  };
}

/** No signed request reached the sandbox at all: none applied, none even answered. */
function expectNothingSigned(rig: Rig): void {
  const byOp = rig.world.sandbox.stats().byOp;
  expect(rig.world.sandbox.ledger()).toEqual([]);
  expect([byOp.claim, byOp.deposit, byOp.mint]).toEqual([undefined, undefined, undefined]);
}

/**
 * Disk full: the file may not grow by a single page, and the last pages of the steps table are
 * packed with filler rows (a dry plan's skipped steps), so recording a request — which grows the
 * step's row — needs a page the disk no longer has. SQLite answers SQLITE_FULL, as on a full disk.
 */
function fillDisk(db: Database.Database): void {
  db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true }))}`);
  const now = Date.now();
  const plan = db
    .prepare(
      `INSERT INTO plans (wallet, address, rule, epoch, seq, dry, status, estimate_lamports, reason, created_at, updated_at)
       VALUES ('filler', 'filler', 'filler', '1970-01-01', 0, 1, 'dry', '0', 'filler', ?, ?) RETURNING id`,
    )
    .get(now, now) as { id: number };
  const step = db.prepare(
    `INSERT INTO steps (plan_id, idx, kind, state, error, created_at, updated_at) VALUES (?, ?, 'claim', 'skipped', ?, ?, ?)`,
  );
  let idx = 0;
  for (const size of [256, 32, 1]) {
    for (;;) {
      try {
        step.run(plan.id, idx++, 'x'.repeat(size), now, now);
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_FULL') throw err;
        break;
      }
    }
  }
}

/** Other connections holding the write lock, closed after each test. */
const holders: Database.Database[] = [];

const FAULTS: Record<string, { arm: (rig: Rig) => void; problem: RegExp; busyTimeoutMs?: number }> = {
  'disk full': { arm: (rig) => fillDisk(rig.db), problem: /database or disk is full/ },
  // A file system remounted read-only under a running daemon: the open connection can no longer write.
  'read-only file': { arm: (rig) => rig.db.pragma('query_only = 1'), problem: /readonly database/ },
  // Another process holds the write lock for longer than the store waits.
  'locked database': {
    arm: (rig) => {
      const other = new Database(rig.world.statePath);
      other.exec('BEGIN EXCLUSIVE');
      holders.push(other);
    },
    problem: /database is locked/,
    busyTimeoutMs: 100,
  },
};
const DISARM: Record<string, (rig: Rig) => void> = {
  'disk full': (rig) => rig.db.pragma('max_page_count = 1000000'),
  'read-only file': (rig) => rig.db.pragma('query_only = 0'),
  'locked database': () => {
    for (const h of holders.splice(0)) h.close();
  },
};
let rig: Rig | undefined;
afterEach(async () => {
  for (const h of holders.splice(0)) h.close();
  await rig?.close();
  rig = undefined;
});

describe.each(Object.keys(FAULTS))('%s when recording an intent', (fault) => {
  const { arm, problem, busyTimeoutMs } = FAULTS[fault]!;

  it.each<FirstOp>(['claim', 'deposit', 'mint'])('stops the %s before anything is signed and sent, with state.write_failed', async (first) => {
    const r = (rig = await openRig(first, { busyTimeoutMs }));
    // The plan is recorded; the trouble starts before its first step can be recorded as `sending`.
    const turn = await r
      .cycle((name) => {
        if (name === 'after_plan_recorded') arm(r);
      })
      .then((result) => result.statuses, (err: unknown) => err);
    expectNothingSigned(r);
    const failed = r.events.filter((e) => e.event === 'state.write_failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 'error', wallet: 'alpha', kind: first });
    expect(String(failed[0]!.err)).toMatch(problem);
    expect(String(failed[0]!.msg)).toMatch(new RegExp(`could not record the ${first} before sending it; nothing was sent`));
    expect(r.events.some((e) => e.event === 'action.sent')).toBe(false);
    // The turn ends with the plan still open, or — when the plan's closing write fails the same
    // way — with that StateError, which the scheduler logs as wallet.failed.
    if (Array.isArray(turn)) expect(turn).toEqual(['open']);
    else expect(turn).toMatchObject({ name: 'StateError', code: 'STATE_IO', message: expect.stringMatching(problem) as unknown });
    const recorded = readState(r.world.statePath);
    const real = new Set(recorded.plans.map((p) => p.id)); // not the dry filler plan
    expect(recorded.steps.filter((s) => real.has(s.planId) && s.kind === first).map((s) => s.state)).toEqual(['planned']);

    // Once the file is writable again the same plan goes ahead, exactly once.
    DISARM[fault]!(r);
    await r.cycle();
    const ops = r.world.sandbox.ledger().map((e) => e.op);
    expect(ops).toEqual(first === 'claim' ? ['claim', 'deposit'] : [first]);
    const state = readState(r.world.statePath);
    expect(state.integrity).toBe('ok');
    expect(state.plans.filter((p) => p.wallet === 'alpha').map((p) => p.status)).toEqual(['done']);
  });
});

describe('trouble before the plan is recorded', () => {
  it('a locked database stops the turn at its first write: no plan, nothing signed, a StateError naming the lock', async () => {
    const r = (rig = await openRig('claim', { busyTimeoutMs: 100 }));
    FAULTS['locked database']!.arm(r);
    const turn = r.cycle();
    await expect(turn).rejects.toBeInstanceOf(StateError);
    await expect(turn).rejects.toThrow(/database is locked/);
    expectNothingSigned(r);
    DISARM['locked database']!(r);
    expect(readState(r.world.statePath).plans).toEqual([]);
  });
});

describe('a state file that cannot be opened', () => {
  const once = async (world: CrashWorld) => runCli(['once', '--config', world.config], { cwd: world.dir });

  it('a corrupt file is refused at open: exit 1, one line naming the file, no stack, no request', async () => {
    const world = await crashWorld({ names: ['alpha'], rules: RULES.claim });
    try {
      mkdirSync(dirname(world.statePath), { recursive: true, mode: 0o700 });
      writeFileSync(world.statePath, Buffer.alloc(8192, 0x5a), { mode: 0o600 });
      expect(() => openStore(world.statePath, { logger: createLogger({ redactor: new Redactor(), destination: { write: () => {} } }) })).toThrow(
        expect.objectContaining({ code: 'STATE_CORRUPT' }),
      );
      const r = await once(world);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/state database .*autoclaim\.db is not a SQLite database or is corrupt/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(world.sandbox.stats().total).toBe(0);
    } finally {
      await world.close();
    }
  });

  it('a read-only file is refused at open: exit 1, one line saying so, no request', async () => {
    const world = await crashWorld({ names: ['alpha'], rules: RULES.claim });
    try {
      expect((await once(world)).code).toBe(0); // a real state file, with a plan done
      world.sandbox.advanceEpoch();
      world.sandbox.world.setWallet(world.wallets[0]!.address, { pendingLamports: 2n * SOL });
      const before = world.sandbox.stats().total;
      chmodSync(world.statePath, 0o400);
      const r = await once(world);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/state database .*autoclaim\.db is read-only \(mode 0400\)/);
      expect(world.sandbox.stats().total).toBe(before);
      expect(world.sandbox.ledger()).toHaveLength(2);
    } finally {
      await world.close();
    }
  });
});
