// What the lease manager tells its listeners (the daemon's work, metrics), and how: `acquired` and
// `draining` handlers are awaited in order (the first failure rejects), `lost` and `released` are
// notifications (a listener that throws is logged, the others still hear it).
import type { Logger } from '../log/logger.js';

/** Why a lease stopped being this daemon's without it handing the lease back. */
export type LossReason =
  /** It expired in the database before it was renewed (the daemon was paused, or cut off). */
  | 'expired'
  /** Another daemon holds it now. */
  | 'taken'
  /** No renewal succeeded before the local deadline (the database unreachable, or the process paused). */
  | 'deadline'
  /** An `acquired` handler failed: the wallet was never worked, and its lease is handed back. */
  | 'recovery_failed'
  /** A newer autoclaim migrated the shared schema: this daemon steps aside (schema-watch.ts). */
  | 'schema_newer';

export interface LeaseEventMap {
  /** Taken, with its new token. Handlers run before the wallet is in `held()`; a failing one hands it back. */
  acquired: { address: string; token: bigint; previousOwner: string | undefined };
  /** Left `held()` because another daemon's share has it. Handlers run before the lease is handed back. */
  draining: { address: string; token: bigint };
  /** Handed back: after draining (`rebalance`), on a clean stop (`stop`), or after a failed recovery. */
  released: { address: string; token: bigint; why: 'rebalance' | 'stop' | 'recovery_failed' };
  /** No longer this daemon's: stop the wallet's work now (tokenFor already answers undefined). */
  lost: { address: string; token: bigint; why: LossReason };
}

export type LeaseEvent = keyof LeaseEventMap;
export type LeaseListener<K extends LeaseEvent> = (e: LeaseEventMap[K]) => void | Promise<void>;

export class LeaseListeners {
  private readonly listeners: { [K in LeaseEvent]: Array<LeaseListener<K>> } = { acquired: [], draining: [], released: [], lost: [] };

  constructor(private readonly logger: Logger | undefined) {}

  /** Subscribes; returns the unsubscribe. */
  on<K extends LeaseEvent>(name: K, listener: LeaseListener<K>): () => void {
    const list = this.listeners[name] as Array<LeaseListener<K>>;
    list.push(listener);
    return () => {
      const i = list.indexOf(listener);
      if (i >= 0) list.splice(i, 1);
    };
  }

  count(name: LeaseEvent): number {
    return this.listeners[name].length;
  }

  /** Every listener of an awaited event, in order; the first failure rejects. */
  async runAll<K extends 'acquired' | 'draining'>(name: K, e: LeaseEventMap[K]): Promise<void> {
    for (const listener of [...this.listeners[name]] as Array<LeaseListener<K>>) await listener(e);
  }

  /** Tells the listeners of a notification; one that throws (or rejects) is logged, the others still hear it. */
  emit<K extends 'lost' | 'released'>(name: K, e: LeaseEventMap[K]): void {
    for (const listener of [...this.listeners[name]] as Array<LeaseListener<K>>) {
      const failed = (err: unknown): void => {
        this.logger?.error({ event: 'events.listener_failed', name: `lease:${name}`, err }, `a listener of lease ${name} threw`);
      };
      try {
        void Promise.resolve(listener(e)).catch(failed);
      } catch (err) {
        failed(err);
      }
    }
  }
}
