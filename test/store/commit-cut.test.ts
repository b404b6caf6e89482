// A COMMIT whose answer is lost on the wire (cluster review, helper 29): the PostgreSQL store's
// `sending` commit goes through a relay that cuts the client's connection at its COMMIT — after
// the server ran it (the answer is lost: it committed) or before the server saw it (the server
// rolls the transaction back). The store must tell which by reading back (in-doubt.ts), never
// assume: a `sending` that committed is reported recorded (the request may go out), one that did
// not is reported failed (nothing may go out). settleInDoubt was tested on its own before; this is
// the whole write path with the COMMIT cut on a real connection.
import net from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
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
});
