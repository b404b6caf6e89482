// A COMMIT whose answer is lost on the wire (cluster review, helper 29): the PostgreSQL store's
// `sending` commit goes through a relay that cuts the client's connection at its COMMIT — after
// the server ran it (the answer is lost: it committed) or before the server saw it (the server
// rolls the transaction back). The store must tell which by reading back (in-doubt.ts), never
// assume: a `sending` that committed is reported recorded (the request may go out), one that did
// not is reported failed (nothing may go out). settleInDoubt was tested on its own before; this is
// the whole write path with the COMMIT cut on a real connection.
//
// The read-back compares what the transaction left with what is stored. Recording the signature
// (recordSigned) keeps the step `sending` with the same attempt: when it runs in the same
// millisecond as the `sending` it follows (an in-process key, a database on a local socket), only
// the request it writes tells the two apart. A cut before the server saw that COMMIT was read back
// as committed: the request went out while the database held it unsigned, which recovery (the
// wallet's next turn, or the daemon that takes it over) takes for never sent, and signs again.
import net from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, createDispatcher } from '../../src/api/client.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { StateError } from '../../src/errors.js';
import { PlanExecutor } from '../../src/executor/executor.js';
import { noFailpoints } from '../../src/executor/failpoints.js';
import { inProcessSigner } from '../../src/keys/backends/in-process.js';
import { generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import { startSandbox } from '../../src/sandbox/server.js';
import type { Store } from '../../src/store/port.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { UNSIGNED_BODY } from '../../src/store/rows.js';
import { apiConfig } from '../api/helpers.js';
import { CANARY_API_KEY } from '../e2e/helpers.js';
import { captureLog } from '../support/log.js';
import { createDatabase } from '../support/postgres.js';
import { fields } from './contract-adapters.js';
import { draft, request, T0 } from './fixtures.js';

type Cut = 'after' | 'before';

/** A relay that, once armed, cuts the client at the next COMMIT it sees: after the server answered it, or instead of passing it on. */
async function commitCutter(to: { host: string; port: number }) {
  let armed: Cut | undefined;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(to.port, to.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    let cutting: Cut | undefined;
    client.on('data', (b: Buffer) => {
      // The simple query protocol: 'Q', a length, the text. node-pg sends COMMIT so.
      if (armed !== undefined && b[0] === 0x51 && b.includes('COMMIT')) {
        cutting = armed;
        armed = undefined;
        client.destroy();
        if (cutting === 'before') upstream.destroy();
        else upstream.write(b);
        return;
      }
      upstream.write(b);
    });
    upstream.on('data', (b: Buffer) => {
      // The server's answer to the COMMIT it ran: dropped, as a connection lost then would.
      if (cutting === 'after') {
        upstream.destroy();
        return;
      }
      client.write(b);
    });
    client.on('close', () => {
      if (cutting !== 'after') upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    arm: (cut: Cut) => {
      armed = cut;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A store on a fresh database through a relay that can cut its COMMITs, and a direct connection to look with. */
async function cutWorld(clock: { now: () => number; monotonic: () => number }) {
  const url = await createDatabase();
  const target = new URL(url);
  const relay = await commitCutter({ host: target.hostname, port: Number(target.port) });
  cleanups.push(() => relay.close());
  const viaRelay = new URL(url);
  viaRelay.hostname = '127.0.0.1';
  viaRelay.port = String(relay.port);
  const log = captureLog();
  const store = await openPostgresStore(viaRelay.toString(), { logger: log.logger, clock });
  cleanups.push(() => store.close());
  const direct = new pg.Client(fields(url));
  await direct.connect();
  cleanups.push(() => direct.end());
  return { relay, log, store, direct };
}

describe('a COMMIT cut on the wire', () => {
  it.each(['after', 'before'] as const)('cut %s the server ran it: the store reports what the database holds', async (cut) => {
    const url = await createDatabase();
    const target = new URL(url);
    const relay = await commitCutter({ host: target.hostname, port: Number(target.port) });
    cleanups.push(() => relay.close());
    const viaRelay = new URL(url);
    viaRelay.hostname = '127.0.0.1';
    viaRelay.port = String(relay.port);
    const log = captureLog();
    const clock = { now: () => T0, monotonic: () => performance.now() };
    const store = await openPostgresStore(viaRelay.toString(), { logger: log.logger, clock });
    cleanups.push(() => store.close());
    const direct = new pg.Client(fields(url));
    await direct.connect();
    cleanups.push(() => direct.end());

    const plan = await store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' });
    const stepId = plan?.steps[0]?.id ?? 0;
    relay.arm(cut);
    let outcome: unknown;
    try {
      outcome = await store.markSending(stepId, request(), T0 + 1);
    } catch (err) {
      outcome = err;
    }
    const stored = (await direct.query<{ state: string; attempts: number }>('SELECT state, attempts FROM steps WHERE id = $1', [stepId])).rows[0];
    const said = log.events('state.commit_in_doubt');
    if (cut === 'after') {
      // It committed: reported recorded, so the request may go out, exactly once.
      expect(stored).toEqual({ state: 'sending', attempts: 1 });
      expect(outcome).toMatchObject({ id: stepId, state: 'sending', attempts: 1 });
      expect(said).toMatchObject([{ committed: true, write: 'markSending' }]);
    } else {
      // It did not: reported failed, so nothing goes out.
      expect(stored).toEqual({ state: 'planned', attempts: 0 });
      expect(outcome).toBeInstanceOf(StateError);
      expect((outcome as StateError).code).toBe('STATE_IO');
      expect(said).toMatchObject([{ committed: false, write: 'markSending' }]);
    }
  });

  it('a signature recorded in the millisecond of its `sending`, cut before the server saw the COMMIT: reported failed, the step still unsigned', async () => {
    const { relay, log, store, direct } = await cutWorld({ now: () => T0, monotonic: () => performance.now() });
    const plan = await store.insertPlan(draft(), { dry: false, now: T0, reason: 'r' });
    const stepId = plan?.steps[0]?.id ?? 0;
    await store.markSending(stepId, request({ body: UNSIGNED_BODY }), T0 + 1);
    relay.arm('before');
    let outcome: unknown;
    try {
      outcome = await store.recordSigned({ id: stepId, attempt: 1 }, request(), T0 + 1);
    } catch (err) {
      outcome = err;
    }
    // The server rolled it back: the step is `sending` without a signature, which recovery takes
    // for never sent. Reported recorded, the caller sends it.
    const stored = (await direct.query<{ state: string; request: string }>('SELECT state, request FROM steps WHERE id = $1', [stepId])).rows[0];
    expect(stored?.state).toBe('sending');
    expect(JSON.parse(stored?.request ?? '{}').body).toBe(UNSIGNED_BODY);
    expect(log.events('state.commit_in_doubt')).toMatchObject([{ committed: false, write: 'recordSigned' }]);
    expect(outcome).toBeInstanceOf(StateError);
    expect((outcome as StateError).code).toBe('STATE_IO');
  });

  it('a deposit whose signature record was cut so, and its answer after it, is sent once, not again after recovery', { timeout: 30_000 }, async () => {
    const SOL = 1_000_000_000n;
    // A machine on which recording `sending`, signing with a key in memory and recording the
    // signature take less than a millisecond: its clock reads the same through all three.
    const now = Date.now();
    const clock = { now: () => now, monotonic: () => performance.now() };
    const { relay, store } = await cutWorld(clock);
    const { secretKey64, address } = generateKeypair();
    const sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address, pendingLamports: 0n, accrualLamportsPerSec: 0n, balanceLamports: 5n * SOL }],
    });
    cleanups.push(() => sandbox.close());
    const config = apiConfig({ baseUrl: sandbox.url, readAttempts: 1, timeoutMs: 10_000 });
    const dispatcher = createDispatcher(config);
    cleanups.push(() => dispatcher.close());
    const logger = captureLog().logger;
    const client = new ApiClient({ config, apiKey: CANARY_API_KEY, dispatcher, limiter: new RateLimiter({ perMinute: 0, burst: 100, clock }), clock, logger });
    // The connection trouble that lost the signature's COMMIT lasts through the deposit's answer.
    let cutting = true;
    const armed = (): void => {
      if (cutting) relay.arm('before');
    };
    const worker: Store = Object.assign(Object.create(store) as Store, {
      recordSigned: (...a: Parameters<Store['recordSigned']>) => (armed(), store.recordSigned(...a)),
      markAcknowledged: (...a: Parameters<Store['markAcknowledged']>) => (armed(), store.markAcknowledged(...a)),
    });
    const executor = new PlanExecutor({
      store: worker,
      api: client,
      signers: new Map([[address, inProcessSigner(signerFromSeed(secretKey64.slice(0, 32)))]]),
      config: () => ({ rules: [], safety: { maxLamportsPerAction: 100n * SOL } }),
      clock,
      logger,
      failpoint: noFailpoints,
    });
    const epoch = new Date(now).toISOString().slice(0, 10);
    const plan = await store.insertPlan(
      { wallet: 'w', address, rule: '@send:top-up', epoch, seq: 0, steps: [{ kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'fixed', lamports: SOL } }], estimateLamports: SOL, manualId: 'top-up' },
      { dry: false, now, reason: 'r' },
    );
    const planId = plan?.id ?? 0;
    await executor.execute(planId).catch(() => undefined);
    cutting = false;

    // The wallet's next turn (or the daemon that takes it over): what was left in flight is
    // recovered (once the database is found reachable again), then the plan runs again.
    for (let tries = 0; ; tries++) {
      try {
        await store.recoverInFlight(now, address);
        break;
      } catch (err) {
        if (tries > 100) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    await executor.execute(planId).catch(() => undefined);
    // Before the read-back compared the request: two deposits of 1 SOL, the second signed afresh.
    const deposits = sandbox.ledger().filter((e) => e.op === 'deposit');
    expect(deposits.map((e) => e.amountLamports)).toEqual([SOL]);
  });
});
