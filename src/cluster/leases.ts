// The lease manager: which wallets this daemon may work, kept in PostgreSQL so that several daemons
// split a fleet between them and take over a dead one's wallets, and never two at once.
//
// Every tick (a third of the lease) it extends its daemons row and the leases it holds, reads the
// cluster, and moves toward its share (share.ts): takes free or expired wallets, hands back the
// excess. Expiry is the database's clock; what the daemon believes is bounded by its own monotonic
// clock: a lease counts only until the start of its last successful renewal plus the lease minus a
// margin, so a daemon paused (SIGSTOP, a long GC) stops believing in a lease before the database lets
// anyone else take it. The store's fence (tokenFor) checks the same owner and token in the
// database inside every plan and step write, so even a daemon that still believes cannot record
// `sending` once the lease is gone.
//
// A wallet moves through: acquired (its `acquired` handlers run, e.g. turning steps a dead owner
// left `sending` into `unknown`) → held (the daemon works it) → draining (the split gave it to
// another daemon: the daemon finishes the wallet's turn, the lease is still renewed) → handed back.
// A lease that lapses or is taken is `lost` at any point, and the wallet's work stops.
//
// Each round also checks this daemon's clock against the database's (clock-bound.ts: beyond
// cluster.max_clock_skew it signs nothing) and what the other daemons run (peers.ts, agreement.ts:
// daemons whose configs differ do not share wallets; the split is of the list all live daemons share),
// and the schema's version (schema-watch.ts: a daemon that finds a newer one steps aside).
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { DecisionClock } from '../executor/decision-clock.js';
import { publishedList } from './agreement.js';
import { ClockBound, measureSkew, type ClockRefusal } from './clock-bound.js';
import type { LeaseManagerOptions } from './lease-options.js';
import { LeaseListeners, type LeaseEvent, type LeaseListener, type LossReason } from './lease-events.js';
import { Peers, type ConfigConflict } from './peers.js';
import { SchemaWatch, type SchemaRefusal } from './schema-watch.js';
import { acquire, heartbeat, leave, readCluster, reap, release, renew, walletsDigest, type DaemonIdentity } from './sql.js';

export type { LeaseEvent, LeaseEventMap, LeaseListener, LossReason } from './lease-events.js';
export type { LeaseManagerOptions } from './lease-options.js';

/** What the PostgreSQL store's fence asks: whose writes these are, and the token held for a wallet. */
export interface LeaseFence {
  readonly owner: string;
  tokenFor(address: string): bigint | undefined;
}

interface Entry {
  token: bigint;
  /** Monotonic ms after which this daemon stops believing it holds the lease. */
  deadline: number;
  /** Its `acquired` handlers finished: the wallet may be worked. */
  recovered: boolean;
  /** An `acquired` handler failed: hand it back next tick. */
  failed: boolean;
  /** Set while draining: since when, and whether the `draining` handlers finished. */
  draining?: { since: number; done: boolean };
}

export class LeaseManager {
  readonly id: string;
  readonly leaseMs: number;
  /** How often `start()` ticks: a third of the lease. */
  readonly tickMs: number;
  readonly fence: LeaseFence;
  readonly marginMs: number;
  private readonly drainMs: number;
  private readonly reapAfterMs: number;
  private readonly host: string;
  private readonly pid: number;
  private readonly entries = new Map<string, Entry>();
  private readonly listeners: LeaseListeners;
  private readonly background = new Set<Promise<void>>();
  private live: readonly string[] = [];
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private watch: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly peers: Peers;
  private readonly clockBound: ClockBound;
  private readonly schema: SchemaWatch;
  /** The wallet list's digest at the last heartbeat that carried the list itself. */
  private publishedList: string | undefined;

  constructor(private readonly opts: LeaseManagerOptions) {
    this.leaseMs = opts.leaseMs ?? 15_000;
    this.tickMs = this.leaseMs / 3;
    this.marginMs = opts.marginMs ?? this.leaseMs / 5;
    if (!(this.leaseMs > 0) || !(this.marginMs >= 0) || this.leaseMs - this.marginMs <= this.tickMs) {
      throw new RangeError(`lease ${this.leaseMs} ms with margin ${this.marginMs} ms would lapse before its next renewal (every ${this.tickMs} ms)`);
    }
    this.drainMs = opts.drainMs ?? this.leaseMs;
    this.reapAfterMs = opts.reapAfterMs ?? 3_600_000;
    this.host = opts.host ?? hostname();
    this.pid = opts.pid ?? process.pid;
    this.id = opts.id ?? `${this.host}/${this.pid}/${randomUUID().slice(0, 8)}`;
    this.fence = { owner: this.id, tokenFor: (address) => this.tokenFor(address) };
    this.listeners = new LeaseListeners(opts.logger);
    this.peers = new Peers(this.id, opts.logger);
    this.clockBound = new ClockBound(opts.maxClockSkewMs ?? 5_000, opts.logger, this.id);
    this.schema = new SchemaWatch(opts.knownSchema, opts.logger, this.id);
  }

  /** Why this daemon must not sign any more: a newer autoclaim migrated the shared schema (schema-watch.ts). */
  schemaRefusal(): SchemaRefusal | undefined {
    return this.schema.refusal();
  }

  /** Why this daemon must not sign now: its clock is out of cluster.max_clock_skew of the database's. */
  clockRefusal(): ClockRefusal | undefined {
    return this.clockBound.refusal();
  }

  /** Holds the daemon's decision clock (executor/decision-clock.ts) to the database's too, from the next round (clock-bound.ts). */
  holdDecisionClock(clock: Pick<DecisionClock, 'now' | 'follow'>): void {
    this.clockBound.decision = clock;
  }

  /** Live daemons running another config, as of the last round (they and this one leave the wallets they share). */
  configConflict(): ConfigConflict | undefined {
    return this.peers.conflict();
  }

  /** Subscribes; returns the unsubscribe. `acquired` and `draining` handlers are awaited (see LeaseEventMap). */
  on<K extends LeaseEvent>(name: K, listener: LeaseListener<K>): () => void {
    return this.listeners.on(name, listener);
  }

  /** The token to fence a write on this wallet with; undefined when not held or no longer believed. */
  tokenFor(address: string): bigint | undefined {
    const e = this.entries.get(address);
    if (e === undefined || e.failed || this.opts.clock.monotonic() >= e.deadline) return undefined;
    return e.token;
  }

  /** The wallets to work now: held, recovered, not draining, sorted. The daemon asks each cycle. */
  held(): string[] {
    const now = this.opts.clock.monotonic();
    return [...this.entries]
      .filter(([, e]) => e.recovered && !e.failed && e.draining === undefined && now < e.deadline)
      .map(([a]) => a)
      .sort();
  }

  /** The live daemons at the last tick, this one included (readiness: holding none while others live is standby). */
  liveDaemons(): readonly string[] {
    return this.live;
  }

  /** Enters the cluster: this daemon's row, so the others count it in their split at their next tick. */
  async register(): Promise<void> {
    await this.beat();
    this.opts.logger?.info({ event: 'cluster.joined', daemon: this.id, lease_ms: this.leaseMs }, 'joined the cluster');
  }

  /** One round: heartbeat, renew, read the cluster, hand back the excess, take this daemon's share. Ticks never overlap. */
  tick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.round().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * Ticks now and then every tickMs until release(); a failed tick is logged and the next one tried.
   * A tick that hangs (the database unreachable) must not hide a lease passing its local deadline:
   * a separate timer tells `lost` listeners then, whatever the tick is waiting for.
   */
  start(): void {
    this.watch ??= setInterval(() => this.dropPastDeadline(), this.tickMs);
    this.watch.unref();
    const loop = async (): Promise<void> => {
      try {
        await this.tick();
      } catch (err) {
        this.opts.logger?.warn({ event: 'lease.tick_failed', daemon: this.id, err }, 'lease tick failed; leases still believed until their local deadline');
      }
      if (!this.stopped) {
        this.timer = setTimeout(() => void loop(), this.tickMs);
        this.timer.unref();
      }
    };
    void loop();
  }

  /**
   * A clean stop: no more ticks, every lease handed back at once and this daemon's row deleted, so
   * the others take its wallets at their next tick instead of a lease later. Call it after the
   * wallets' work has stopped.
   */
  async release(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.watch);
    // A tick in flight is given a moment to finish (its acquisitions are then handed back too);
    // one stuck on an unreachable database is not waited for.
    if (this.running !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.tickMs)));
      await Promise.race([this.running.catch(() => undefined), waited]);
      clearTimeout(timer);
    }
    const gone = [...this.entries];
    this.entries.clear();
    await release(this.opts.db, this.id);
    await leave(this.opts.db, this.id);
    for (const [address, e] of gone) this.listeners.emit('released', { address, token: e.token, why: 'stop' });
    this.opts.logger?.info({ event: 'cluster.left', daemon: this.id, released: gone.length }, 'left the cluster, leases handed back');
  }

  /**
   * Waits for the `acquired` handlers started so far (tests, and a stop that wants recoveries done).
   * Not for `draining` ones: those wait on the daemon's own work, and are bounded by drainMs.
   */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  /**
   * The heartbeat, with the wallet list when it changed since it was last carried, and the clock
   * check on the database's clock read in the same round trip.
   */
  private async beat(): Promise<void> {
    const addresses = publishedList(this.opts.addresses(), this.opts.terms?.());
    const wallets = walletsDigest(addresses);
    const send = wallets !== this.publishedList;
    const self: DaemonIdentity = { id: this.id, host: this.host, pid: this.pid, wallets, config: this.configDigest(), addresses: send ? addresses : undefined };
    const now = this.opts.clock.now ?? Date.now;
    const t0 = now();
    const d0 = this.clockBound.decision?.now();
    const m0 = this.opts.clock.monotonic();
    const answer = await heartbeat(this.opts.db, self, this.leaseMs);
    const rtt = this.opts.clock.monotonic() - m0;
    this.clockBound.observe(measureSkew(t0, rtt, answer.dbNowMs), t0, d0 === undefined ? undefined : measureSkew(d0, rtt, answer.dbNowMs));
    this.publishedList = answer.listMissing ? undefined : wallets;
    this.schema.observe(answer.schemaVersion, t0);
  }

  /** A newer schema: every lease dropped now and handed back, and the row deleted; each later round does it again, with no heartbeat. */
  private async stepAside(): Promise<void> {
    for (const address of [...this.entries.keys()]) this.lose(address, 'schema_newer');
    this.live = [];
    await release(this.opts.db, this.id);
    await leave(this.opts.db, this.id);
  }

  private readonly configDigest = (): string => this.opts.config?.() ?? 'unset';

  private async round(): Promise<void> {
    const { db } = this.opts;
    this.dropPastDeadline();
    if (this.schema.refusal() === undefined) await this.beat();
    if (this.schema.refusal() !== undefined) return this.stepAside();
    if (this.stopped) {
      // release() left the cluster while this heartbeat was out, which may have put the row back.
      await leave(db, this.id);
      return;
    }

    const asked = [...this.entries].filter(([, e]) => !e.failed).map(([address, e]) => ({ address, token: e.token }));
    const t0 = this.opts.clock.monotonic();
    const renewed = await renew(db, this.id, asked, this.leaseMs);
    const view = await readCluster(db);
    const byAddress = new Map(view.leases.map((l) => [l.address, l]));
    for (const { address, token } of asked) {
      const e = this.entries.get(address);
      if (e === undefined || e.token !== token) continue; // changed while the renewal was out
      if (renewed.has(address)) {
        e.deadline = t0 + this.leaseMs - this.marginMs;
        continue;
      }
      const now = byAddress.get(address);
      this.lose(address, now?.owner === this.id || now?.owner === undefined ? 'expired' : 'taken');
    }

    await this.handBackFailed();

    this.live = view.daemons.filter((d) => d.live).map((d) => d.id);
    const owners = new Map<string, string>();
    for (const l of view.leases) if (l.valid && l.owner !== undefined) owners.set(l.address, l.owner);
    const plan = await this.peers.plan(db, view, { config: this.configDigest(), addresses: this.opts.addresses(), terms: this.opts.terms?.() }, { now: this.opts.clock.monotonic(), leaseMs: this.leaseMs });
    const mine = plan.mine;

    this.drain(mine);
    await this.handBackDrained();
    // Leases the database says are this daemon's but that it no longer believes in (a local
    // deadline passed, an answer lost) and that are not in its share: handed back, not left to expire.
    const stray = [...owners].filter(([a, o]) => o === this.id && !this.entries.has(a) && !mine.has(a)).map(([a]) => a);
    await release(db, this.id, stray);

    const wanted = [...mine].filter((a) => !this.entries.has(a) && (owners.get(a) ?? this.id) === this.id && plan.mayAcquire(a));
    const t1 = this.opts.clock.monotonic();
    const acquired = await acquire(db, this.id, wanted, this.leaseMs);
    if (this.stopped) {
      // release() ran while this was out: what it has just taken goes back too.
      await release(db, this.id, acquired.map((g) => g.address));
      return;
    }
    for (const got of acquired) {
      this.entries.set(got.address, { token: got.token, deadline: t1 + this.leaseMs - this.marginMs, recovered: false, failed: false });
      this.opts.logger?.info(
        { event: 'lease.acquired', daemon: this.id, address: got.address, token: got.token.toString(), previous_owner: got.previousOwner },
        'lease acquired',
      );
      this.recover(got.address, got.token, got.previousOwner);
    }
    await reap(db, this.reapAfterMs);
  }

  /** Leases whose local deadline passed are not believed any more, whatever the database says. */
  private dropPastDeadline(): void {
    const now = this.opts.clock.monotonic();
    for (const [address, e] of this.entries) if (!e.failed && now >= e.deadline) this.lose(address, 'deadline');
  }

  private lose(address: string, why: LossReason): void {
    const e = this.entries.get(address);
    if (e === undefined) return;
    this.entries.delete(address);
    this.opts.logger?.warn({ event: 'lease.lost', daemon: this.id, address, token: e.token.toString(), why }, 'lease lost; the wallet’s work stops');
    this.listeners.emit('lost', { address, token: e.token, why });
  }

  /** Runs the `acquired` handlers in the background (a slow recovery must not delay renewals). */
  private recover(address: string, token: bigint, previousOwner: string | undefined): void {
    this.track(
      this.listeners.runAll('acquired', { address, token, previousOwner }).then(
        () => {
          const e = this.entries.get(address);
          if (e?.token === token) e.recovered = true;
        },
        (err: unknown) => {
          const e = this.entries.get(address);
          if (e?.token !== token) return;
          e.failed = true;
          this.opts.logger?.error(
            { event: 'lease.recovery_failed', daemon: this.id, address, token: token.toString(), err },
            'a newly acquired wallet could not be recovered; its lease is handed back and taken again later',
          );
          this.listeners.emit('lost', { address, token, why: 'recovery_failed' });
        },
      ),
    );
  }

  private async handBackFailed(): Promise<void> {
    const failed = [...this.entries].filter(([, e]) => e.failed);
    if (failed.length === 0) return;
    for (const [address] of failed) this.entries.delete(address);
    await release(this.opts.db, this.id, failed.map(([a]) => a));
    for (const [address, e] of failed) this.listeners.emit('released', { address, token: e.token, why: 'recovery_failed' });
  }

  /** Wallets out of this daemon's share start draining; a draining wallet back in it is simply kept. */
  private drain(mine: ReadonlySet<string>): void {
    const now = this.opts.clock.monotonic();
    for (const [address, e] of this.entries) {
      if (e.failed) continue;
      if (mine.has(address)) {
        e.draining = undefined;
        continue;
      }
      if (e.draining !== undefined) continue;
      const state = { since: now, done: false };
      e.draining = state;
      this.opts.logger?.info({ event: 'lease.draining', daemon: this.id, address, token: e.token.toString() }, 'wallet moves to another daemon');
      if (this.listeners.count('draining') === 0) {
        state.done = true;
        continue;
      }
      const settle = (): void => {
        state.done = true;
      };
      void this.listeners.runAll('draining', { address, token: e.token }).then(settle, settle);
    }
  }

  private async handBackDrained(): Promise<void> {
    const now = this.opts.clock.monotonic();
    const ready = [...this.entries].filter(([, e]) => e.draining !== undefined && (e.draining.done || now - e.draining.since >= this.drainMs));
    if (ready.length === 0) return;
    for (const [address] of ready) this.entries.delete(address);
    await release(this.opts.db, this.id, ready.map(([a]) => a));
    for (const [address, e] of ready) {
      this.opts.logger?.info({ event: 'lease.released', daemon: this.id, address, token: e.token.toString() }, 'lease handed back');
      this.listeners.emit('released', { address, token: e.token, why: 'rebalance' });
    }
  }

  private track(p: Promise<void>): void {
    this.background.add(p);
    void p.finally(() => this.background.delete(p));
  }
}
