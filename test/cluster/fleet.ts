// A few `autoclaim run` daemons as real processes on one PostgreSQL state, for tests that kill,
// pause and restart them: each slot is one daemon at a time (a restart is a new process, with a
// new daemon id), and every process a slot ever ran is kept for its log and exit.
import pg from 'pg';
import { readCluster } from '../../src/cluster/sql.js';
import { spawnCli, type Child } from '../e2e/helpers.js';

export interface Slot {
  index: number;
  /** The slot's current process. */
  child: Child;
  /** Paused by SIGSTOP and not yet continued. */
  paused: boolean;
  /** Killed and not yet restarted. */
  dead: boolean;
}

export class DaemonFleet {
  readonly slots: Slot[] = [];
  /** Every process any slot ran, in start order. */
  readonly processes: Child[] = [];
  private readonly sql: pg.Pool;

  constructor(private readonly opts: { config: string; cwd: string; env: NodeJS.ProcessEnv; stateUrl: string }) {
    this.sql = new pg.Pool({ connectionString: opts.stateUrl, max: 2 });
  }

  /** Starts a daemon in a new slot, or a new process in a dead slot; resolves once it has joined and started. */
  async start(index = this.slots.length): Promise<Slot> {
    const child = spawnCli(['run', '--config', this.opts.config], { cwd: this.opts.cwd, env: { ...this.opts.env, AUTOCLAIM_STATE_URL: this.opts.stateUrl } });
    this.processes.push(child);
    const slot: Slot = { index, child, paused: false, dead: false };
    this.slots[index] = slot;
    // Joined, first share taken and recovered, scheduler running.
    await child.waitFor((e) => e.event === 'daemon.started', 30_000);
    return slot;
  }

  /** kill -9, and waits until the process is gone. */
  async kill(slot: Slot): Promise<void> {
    slot.dead = true;
    slot.child.proc.kill('SIGKILL');
    await slot.child.exited;
  }

  pause(slot: Slot): void {
    slot.paused = true;
    slot.child.proc.kill('SIGSTOP');
  }

  resume(slot: Slot): void {
    slot.paused = false;
    slot.child.proc.kill('SIGCONT');
  }

  /** Valid leases per slot, as the database sees them now (a lease of a process gone counts for nobody). */
  async leasesBySlot(): Promise<Map<Slot, number>> {
    const view = await readCluster(this.sql);
    const byPid = new Map(this.slots.filter((s) => !s.dead).map((s) => [s.child.proc.pid, s]));
    const out = new Map<Slot, number>();
    for (const l of view.leases) {
      if (!l.valid || l.owner === undefined) continue;
      // Daemon ids are host/pid/random (cluster/leases.ts).
      const slot = byPid.get(Number(l.owner.split('/').at(-2)));
      if (slot !== undefined) out.set(slot, (out.get(slot) ?? 0) + 1);
    }
    return out;
  }

  /** SIGTERM to every live daemon (continued first if paused); each one's exit. */
  async terminate(): Promise<Array<{ code: number | null; signal: NodeJS.Signals | null }>> {
    const live = this.slots.filter((s) => !s.dead);
    for (const s of live) {
      if (s.paused) this.resume(s);
      s.child.proc.kill('SIGTERM');
    }
    return Promise.all(live.map((s) => s.child.exited));
  }

  /** Whatever is left (a failed test): continued and killed, and the pool closed. */
  async destroy(): Promise<void> {
    for (const c of this.processes) {
      if (c.proc.exitCode !== null || c.proc.signalCode !== null) continue;
      c.proc.kill('SIGCONT');
      c.proc.kill('SIGKILL');
    }
    await Promise.all(this.processes.map((c) => c.exited));
    await this.sql.end();
  }

  /** Every process's log events, in start order. */
  events(): Array<Record<string, unknown>> {
    return this.processes.flatMap((c) => c.events());
  }
}
