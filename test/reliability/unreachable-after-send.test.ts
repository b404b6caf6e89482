// A connection that fails with EHOSTUNREACH or ENETUNREACH *after* the signed request went out is
// not a request that never reached the server. Linux reports an ICMP host or network unreachable on
// an established TCP connection only when it gives the connection up (retransmissions or keepalive
// probes exhausted: tcp_write_err takes the soft error, else ETIMEDOUT), so the error is read on the
// socket ("read EHOSTUNREACH") after every byte of the request may have been delivered and applied,
// its answer lost with the route. SPEC §2 re-sends only when the request provably never reached the
// server; a deposit never. Real sandbox (applies, then holds its answer), real client over undici,
// real SQLite state and signatures; the one thing made up is the error the kernel would have put on
// the client's socket, given to that socket once the sandbox's ledger shows the deposit applied.
import { connect as netConnect, type Socket } from 'node:net';
import { constants } from 'node:os';
import { dirname } from 'node:path';
import { Agent, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createDispatcher } from '../../src/api/client.js';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { systemClock, type AppConfig, type InProcessKeySource } from '../../src/domain.js';
import type { WalletSigner } from '../../src/executor/ports.js';
import { inProcessSigner } from '../../src/keys/backends/in-process.js';
import { checkAddress, loadKey } from '../../src/keys/keys.js';
import { templatesOf } from '../../src/keys/message.js';
import { Redactor } from '../../src/log/redact.js';
import { CANARY_API_KEY } from '../e2e/helpers.js';
import { captureLog } from '../support/log.js';
import { openCycleRig, type CycleRig } from '../support/cycle-rig.js';
import { openFaultWorld, RULES, SOL, type FaultWorld } from './faults-harness.js';

type UnreachableCode = 'EHOSTUNREACH' | 'ENETUNREACH' | 'ECONNREFUSED';

/** What Node's net module gives a socket whose read fails with this errno (libuv's UV_E…, syscall 'read'). */
function readErrno(code: UnreachableCode): NodeJS.ErrnoException {
  return Object.assign(new Error(`read ${code}`), { errno: -constants.errno[code], code, syscall: 'read' });
}

describe('a signed request whose connection fails as unreachable after it went out', () => {
  let world: FaultWorld | undefined;
  let rig: CycleRig | undefined;
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await rig?.close();
    for (const close of closers.splice(0)) await close();
    await world?.close();
    rig = undefined;
    world = undefined;
  });

  /** The real dispatcher, except that the deposit's POST goes over connections this test holds. */
  function depositSockets(config: AppConfig): { dispatcher: Dispatcher; sockets: Socket[]; posts: () => number } {
    const base = createDispatcher(config.api);
    const sockets: Socket[] = [];
    let posts = 0;
    const side = new Agent({
      connect: (opts, callback) => {
        const socket = netConnect({ host: opts.hostname, port: Number(opts.port) });
        socket.once('connect', () => {
          sockets.push(socket);
          callback(null, socket);
        });
        socket.once('error', (err) => callback(err, null));
      },
    });
    const path = `${new URL(config.api.baseUrl).pathname.replace(/\/$/, '')}${DEFAULT_ENDPOINTS.deposit.path}`;
    const dispatcher = base.compose((dispatch) => (opts, handler) => {
      if (opts.method !== 'POST' || opts.path !== path) return dispatch(opts, handler);
      posts += 1;
      return side.dispatch(opts, handler);
    });
    closers.push(async () => {
      await side.destroy();
      await base.close();
    });
    return { dispatcher, sockets, posts: () => posts };
  }

  // ECONNREFUSED too: an ICMP port unreachable (iptables' default REJECT) on a connection already up
  // is also kept as a soft error and reported when the kernel gives up.
  it.each(['EHOSTUNREACH', 'ENETUNREACH', 'ECONNREFUSED'] as const)('read %s after the deposit was applied: unknown, held, never sent again', async (code) => {
    world = await openFaultWorld({ rules: RULES.deposit, balanceLamports: 10n * SOL });
    const w = world;
    // Time enough for the sandbox to apply before the client's own deadline.
    const config: AppConfig = { ...w.config, api: { ...w.config.api, timeoutMs: 10_000 } };
    const { dispatcher, sockets, posts } = depositSockets(config);
    const redactor = new Redactor().add(CANARY_API_KEY);
    const log = captureLog('debug', redactor);
    const signers = new Map<string, WalletSigner>();
    for (const wc of config.wallets) {
      const key = loadKey(wc.key as InProcessKeySource, { env: {}, baseDir: dirname(config.file), redactor });
      checkAddress(key, wc.address, wc.name);
      signers.set(wc.address, inProcessSigner(key, templatesOf(config.api.endpoints)));
    }
    rig = openCycleRig({ storePath: config.state.path, clock: systemClock, logger: log.logger, redactor, api: config.api, apiKey: CANARY_API_KEY, dispatcher, signers, settings: () => config });
    const wallet = config.wallets[0]!;

    w.sandbox.addFault({ match: { op: 'deposit' }, kind: 'apply_then_hang' });
    const turn = rig.cycle(wallet);
    // The sandbox applied it and holds the answer; then the route goes and the kernel gives up.
    for (let i = 0; i < 500 && w.applied('deposit').length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(w.applied('deposit')).toHaveLength(1);
    sockets.at(-1)!.destroy(readErrno(code));
    await turn;

    const deposit = () => rig!.store.listPlans()[0]?.steps.find((s) => s.kind === 'deposit');
    // Before: taken as never sent, the same signed deposit went out again at once (the sandbox
    // refused it as a replayed signature, and the applied deposit was recorded rejected; a service
    // that does not refuse replays, which the real one is not documented to do, applies it twice).
    expect(posts()).toBe(1);
    expect(deposit()?.state).toBe('unknown');
    // The next turns (the route back): the deposit is held for an operator, not sent again.
    await rig.cycle(wallet);
    rig.restart();
    await rig.cycle(wallet);
    expect(w.applied('claim')).toHaveLength(1);
    expect(w.applied('deposit')).toHaveLength(1);
    expect(posts()).toBe(1);
    expect(deposit()?.state).toBe('unknown');
  });
});
