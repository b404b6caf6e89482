// What a daemon does with its leases: work only the wallets it holds, recover a wallet taken over
// before its first turn, and let a wallet handed to another daemon finish its turn first.
//
// Nothing exactly-once rests on this file: the store fences every plan and step write by the lease
// (owner and token, in the same transaction), so a daemon that works a wallet it no longer holds
// fails at its next write, before it can record `sending` and so before it can send. This file
// keeps daemons from trying.
import type { AppConfig, Clock, WalletConfig } from '../domain.js';
import { StateError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/port.js';
import type { DecisionClock } from '../executor/decision-clock.js';
import { recoverInFlight } from '../executor/recovery.js';
import { configDigest, walletTerms } from './agreement.js';
import type { Cluster } from './open.js';

export class ClusterWork {
  /** The turn in progress per address, so a draining wallet's lease is handed back after it. */
  private readonly turns = new Map<string, Promise<unknown>>();
  private readonly logger: Logger;

  constructor(
    private readonly cluster: Cluster,
    deps: { store: Pick<Store, 'recoverInFlight'>; clock: Clock; logger: Logger; inFlight?: () => ReadonlySet<number>; decisionClock?: Pick<DecisionClock, 'now' | 'follow'> },
  ) {
    this.logger = deps.logger;
    const { manager } = cluster;
    // The rules' clock dates plans every daemon reads: held to the database's as the wall clock is.
    const { decisionClock } = deps;
    if (decisionClock !== undefined) manager.holdDecisionClock(decisionClock);
    // A wallet taken from a dead (or cut-off) owner may have a request of its in flight: its steps
    // left `sending` become unknown for us, as after a restart, before the wallet's first turn —
    // except this process's own: a lease lost and taken back while an answer is awaited.
    // Bounded by a lease: a recovery stuck on a silent database fails, the lease is handed back and
    // the wallet taken again later, rather than held by a daemon that never works it.
    manager.on('acquired', async ({ address }) => {
      await withinMs(manager.leaseMs, `the recovery of wallet ${address}`, recoverInFlight(deps, address, { except: deps.inFlight?.() }));
    });
    manager.on('draining', async ({ address }) => {
      await this.turns.get(address)?.catch(() => undefined);
    });
  }

  /** The wallets to split among the live daemons, and the settings they must agree on (at start and each reload). */
  configure(config: Pick<AppConfig, 'wallets' | 'rules' | 'safety' | 'api' | 'cluster'>): void {
    const { manager } = this.cluster;
    // Each wallet's own settings go with it: hosts that list it under other terms leave it to neither.
    this.cluster.setAddresses(
      config.wallets.map((w) => w.address),
      new Map(config.wallets.map((w) => [w.address, walletTerms(w, config.rules)])),
    );
    this.cluster.setConfig(
      configDigest({
        rules: config.rules,
        safety: config.safety,
        lease: { leaseMs: manager.leaseMs, marginMs: manager.marginMs },
        maxClockSkewMs: config.cluster.maxClockSkewMs,
        claimSettleMs: config.api.claimSettleMs,
      }),
    );
  }

  /**
   * Why no wallet may be signed for now: the clock is out of bounds of the database's, or a newer
   * autoclaim migrated the shared schema (schema-watch.ts); undefined when signing may go on.
   */
  signingGate(): { source: 'clock' | 'schema'; reason: string; since: number } | undefined {
    const { manager } = this.cluster;
    const schema = manager.schemaRefusal();
    if (schema !== undefined) return { source: 'schema', reason: schema.reason, since: schema.since };
    const clock = manager.clockRefusal();
    return clock === undefined ? undefined : { source: 'clock', reason: clock.reason, since: clock.since };
  }

  /**
   * Registers and takes a first share (recovered) before anything is polled; `keepTicking` for
   * `run`. A first round that fails (a query timed out behind a lock a paused daemon holds, the
   * database busy) is, for `run`, what any later round's failure is: logged, and tried again on
   * the manager's timer — the daemon starts holding nothing and takes its share at the next round,
   * rather than exiting. `once` has no next round: it says so.
   */
  async join(keepTicking: boolean): Promise<void> {
    const { manager } = this.cluster;
    await manager.register();
    try {
      await manager.tick();
    } catch (err) {
      if (!keepTicking) throw err;
      this.logger.warn({ event: 'lease.tick_failed', err }, 'first lease round failed; starting with no wallets, the next round is tried in a moment');
    }
    await manager.settled();
    if (keepTicking) manager.start();
  }

  /** Of these wallets, the ones this daemon holds now (recovered, not draining). */
  mine(wallets: readonly WalletConfig[]): WalletConfig[] {
    const held = new Set(this.cluster.manager.held());
    return held.size === 0 ? [] : wallets.filter((w) => held.has(w.address));
  }

  /** Whether a turn of this wallet may start (cheap: no sort, no database). */
  holds(address: string): boolean {
    return this.cluster.manager.tokenFor(address) !== undefined;
  }

  /**
   * Runs a wallet's turn, remembered until it ends. A turn stopped by the fence (the lease went to
   * another daemon between the check and a write) is not a failure of the wallet: it ends, logged.
   */
  run<T>(address: string, turn: () => Promise<T>): Promise<T | undefined> {
    const p = turn().catch((err: unknown) => {
      if (!(err instanceof StateError) || err.code !== 'STATE_LEASE_LOST') throw err;
      this.logger.warn({ event: 'lease.fenced', address, err: err.message }, "wallet's turn stopped: its lease is no longer this daemon's, and the write was refused");
      return undefined;
    });
    this.turns.set(address, p);
    const forget = () => {
      if (this.turns.get(address) === p) this.turns.delete(address);
    };
    p.then(forget, forget);
    return p;
  }
}

/** `p`, or a rejection once `ms` have passed (p is then left to finish on its own: its writes are fenced). */
async function withinMs<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const overdue = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StateError('STATE_IO', `${what} did not finish within ${ms} ms`)), ms);
    timer.unref();
  });
  p.catch(() => undefined);
  try {
    return await Promise.race([p, overdue]);
  } finally {
    clearTimeout(timer);
  }
}
