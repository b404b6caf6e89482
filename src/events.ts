// What happens in a process, named once, on two channels:
//
// - AutoclaimEventMap: the typed events the core emits and anyone subscribes to (metrics, the
//   webhook, alerts, readiness, the planner, tests), in the manner of graphile/worker's
//   WorkerEventMap behind a TypedEventEmitter. One emitter per process, created by the command
//   (run, once, send) and passed in like the clock and the logger, instead of callback options
//   threaded through constructors.
// - LOG_EVENTS: the `event` field of every log line (SPEC §5). The logger's type only takes these,
//   so a misspelt event is a compile error rather than a line no alert ever matches.
//
// The two are kept apart on purpose: log lines are for people and say more than a subscriber
// needs; events carry the values a subscriber computes with. Where both exist they are emitted at
// the same point. This file depends only on domain.ts, so every folder can import it.
//
// Failpoints (executor/failpoints.ts) are not events: most sit where nothing has happened that a
// subscriber could use (a step committed `sending`, no byte sent yet), and their one job is to
// kill the process there, which an emitter that catches what its listeners throw must not hide.
import type { PlanStatus, SignedOp, StepState, WalletConfig, WalletSummary } from './domain.js';

/**
 * What a refusal's words point at (executor/refusal.ts): missing or malformed headers (the prefix),
 * the timestamp refused as stale (the clock), a signature that does not verify (the message, the
 * encoding, the key), the API key, its permissions; `unknown` when the words say none of them.
 */
export type RefusalHint = 'headers' | 'clock' | 'signature' | 'key' | 'permission' | 'unknown';

/**
 * What the server said when it refused a signed request, as every notice, alert and `status --json`
 * names it: its error code, its message (scrubbed, one line), the HTTP status, its `x-request-id`.
 */
export interface ServerRefusal {
  code?: string | undefined;
  server_message?: string | undefined;
  http_status?: number | undefined;
  request_id?: string | undefined;
  hint?: RefusalHint | undefined;
}

/** A signed step reached a state worth counting (metrics) or telling a human (webhook). */
export interface StepEvent extends ServerRefusal {
  kind: SignedOp;
  /**
   * Where the step stands: a state of SPEC §2; `deferred` when it was provably not sent (a 429, or
   * not sent at all) and goes back to planned; `anomaly` when the server claimed more than it could
   * have (the step itself was still bounded by what was seen, and gets its own outcome too).
   */
  state: StepState | 'deferred' | 'anomaly';
  /** The wallet's configured name. */
  wallet: string;
  plan: number;
  step: number;
  /**
   * Acknowledged: what was moved (a claim: what it claimed, bounded). Anomaly: what the server said.
   * Otherwise what the step was to move, when it is known (a deposit's resolved amount).
   */
  amountLamports?: bigint | undefined;
  /** Deposit, mint, withdraw and burn: the vault or token's symbol. */
  symbol?: string | undefined;
  /** The transaction id the API answered with (the body's `tx`), when an answer carried one. */
  tx?: string | undefined;
  // Rejected and failed: the ServerRefusal fields, when the server answered.
}

/** Signing paused for every wallet or one (a request refused as invalid), with the server's words. */
export interface SigningPausedEvent extends ServerRefusal {
  scope: 'all' | 'wallet';
  /** The wallet's name whose request was refused (for `all`, the one that showed it). */
  wallet: string;
  address: string;
  since: number;
  reason: string;
  /** What to check, chosen from the hint. */
  fix: string;
}

/** One HTTP exchange with the API, answered or not. */
interface RequestEvent {
  method: string;
  /** The full URL, wallet address and query included: label it (operationOf) before it is a metric. */
  url: string;
  /** Undefined when no answer came (timeout, reset, refused connection). */
  status: number | undefined;
  seconds: number;
}

/** Every event the core emits, and what a listener is handed. Listeners run synchronously, in order. */
export interface AutoclaimEventMap {
  /** A wallet's summary was read and recorded (beside the `poll.ok` line). `at`: wall clock, ms. */
  'poll:ok': { wallet: WalletConfig; summary: WalletSummary; at: number };
  /** A wallet's summary could not be read, or did not parse (beside `poll.failed`); the failure was recorded. */
  'poll:failed': { wallet: WalletConfig; error: unknown; at: number };
  /** A plan was committed (`plan.recorded`), or in a dry run would have been (`plan.dry`, nothing recorded as open). */
  'plan:recorded': { wallet: string; plan: number; rule: string; epoch: string; dry: boolean };
  /** A plan ran its remaining steps; `status` is where it stands after (open and blocked are not endings). */
  'plan:settled': { wallet: string; plan: number; rule: string; status: PlanStatus };
  /** A step's outcome was recorded (or, for `anomaly`, judged); see StepEvent. */
  'step:outcome': StepEvent;
  /**
   * A wallet's signer answered (or did not) for a step (SPEC §7): `signed` (and verified),
   * `refused` (by the backend, its policy, or the daemon's check of its answer: `code`), or
   * `unanswered` (the deadline passed or the backend was unavailable: the step went back to planned),
   * with what the backend said (`detail`, never a secret) when it did not sign.
   */
  'signer:answered': { backend: string; wallet: string; outcome: 'signed' | 'refused' | 'unanswered'; code?: string; detail?: string; seconds: number };
  /** An HTTP exchange finished, for latency and status metrics. */
  'request:done': RequestEvent;
  /** Every wallet of a scheduled cycle had its turn (not emitted by `once`). `at`: wall clock, ms. */
  'cycle:done': { at: number; wallets: number };
  /** A reload (SIGHUP) starts: the config file is about to be read again. */
  'config:reloading': { at: number };
  /** Signing paused after the server refused a request itself as invalid (beside `signing.paused`). */
  'signing:paused': SigningPausedEvent;
  /** Pauses lifted (a reload that changed the signing settings): the alert of each resolves. */
  'signing:resumed': { lifted: number; at: number };
  /** A reload ended: applied, or refused with every issue (as `config.invalid` lists them). */
  'config:reloaded': { ok: true } | { ok: false; issues: readonly string[] };
}

export type AutoclaimEventName = keyof AutoclaimEventMap;
type AutoclaimListener<K extends AutoclaimEventName> = (payload: AutoclaimEventMap[K]) => void;

/** The process's event channel. The core only emits; the service parts and tests only subscribe. */
export interface AutoclaimEvents {
  /** Subscribes; returns the unsubscribe. */
  on<K extends AutoclaimEventName>(name: K, listener: AutoclaimListener<K>): () => void;
  off<K extends AutoclaimEventName>(name: K, listener: AutoclaimListener<K>): void;
  /** Calls each listener in subscription order. Never throws: a listener that throws is logged and skipped. */
  emit<K extends AutoclaimEventName>(name: K, payload: AutoclaimEventMap[K]): void;
}

/** What the core is handed: it tells, it never listens. */
export type EventSink = Pick<AutoclaimEvents, 'emit'>;

/** Where a listener's failure is reported; a Logger is one. Structural, so this file imports no logger. */
export interface ListenerFailureLog {
  error(fields: { event: 'events.listener_failed'; name: AutoclaimEventName; err: unknown }, msg: string): void;
}

/**
 * The emitter: a few lines rather than node:events, because no listener may throw into the core
 * (a metrics bug must not fail a wallet's turn, let alone a step between its record and its send),
 * and because one listener's failure must not keep the others from hearing the event.
 */
export function createEvents(opts: { logger?: ListenerFailureLog } = {}): AutoclaimEvents {
  // Copy on write: a listener that subscribes or unsubscribes while an event is delivered changes
  // the next delivery, not this one.
  const listeners = new Map<AutoclaimEventName, ReadonlyArray<(payload: never) => void>>();
  const off = <K extends AutoclaimEventName>(name: K, listener: AutoclaimListener<K>): void => {
    const current = listeners.get(name);
    if (current === undefined) return;
    const i = current.indexOf(listener);
    if (i < 0) return;
    const next = [...current.slice(0, i), ...current.slice(i + 1)];
    if (next.length === 0) listeners.delete(name);
    else listeners.set(name, next);
  };
  return {
    on(name, listener) {
      listeners.set(name, [...(listeners.get(name) ?? []), listener]);
      return () => off(name, listener);
    },
    off,
    emit(name, payload) {
      const current = listeners.get(name) as ReadonlyArray<AutoclaimListener<typeof name>> | undefined;
      if (current === undefined) return;
      for (const listener of current) {
        try {
          listener(payload);
        } catch (err) {
          try {
            opts.logger?.error({ event: 'events.listener_failed', name, err }, `a listener of ${name} threw; the others still ran`);
          } catch {
            // The log itself failed: nothing more can be said, and the core must go on.
          }
        }
      }
    },
  };
}

/** For code built without a channel (tests, one-off tools): emits to nobody. */
export const noEvents: EventSink = { emit: () => {} };

/**
 * The `event` of every log line, grouped by where it is written. A new line's name goes here first;
 * the logger's type (log/logger.ts) accepts nothing else.
 */
export const LOG_EVENTS = [
  // a wallet's turn (executor/wallet-cycle.ts, scheduler/)
  'poll.ok',
  'poll.failed',
  'poll.overlap',
  'epoch.new',
  'amount.rounded',
  // a rule replaced by one with the same steps takes its id, or not when more than one could be meant (rules/rule-ids.ts)
  'rule.renamed',
  'rule.rename_ambiguous',
  'rule.ids_failed',
  'rule.fired',
  'rule.skipped',
  'plan.recorded',
  'plan.dry',
  'plan.duplicate',
  'plan.skipped',
  'plan.cancelled',
  'wallet.failed',
  'cycle.done',
  // a step (executor/executor.ts, outcome.ts, signing-guard.ts; `actions resolve`)
  'action.sent',
  'action.acknowledged',
  'action.rejected',
  'action.refused',
  'action.failed',
  'action.unknown',
  'action.deferred',
  'action.blocked',
  'action.reconciled',
  'action.reconcile_deferred',
  'action.claim_undetermined',
  'action.claim_accrued',
  'action.claim_unproved',
  'action.anomaly',
  'action.resolved',
  'signing.paused',
  'signing.reconfigured',
  'clock.skew',
  'clock.skew_resolved',
  'clock.decision_reset',
  'clock.decisions_held_back',
  // the API client (api/)
  'api.response',
  'api.retry',
  'api.rate_limited',
  // the process (daemon.ts, cli/)
  'daemon.started',
  'daemon.stop_requested',
  'daemon.stopping',
  'once.started',
  'once.done',
  'config.warning',
  'config.invalid',
  'config.reloaded',
  'config.restart_needed',
  'events.listener_failed',
  // the CLI's requests to a running daemon (service/control.ts): pause, resume, poll now
  'signing.kill_switch_on',
  'signing.kill_switch_off',
  'poll.requested',
  'control.write_failed',
  // the state file (store/)
  'state.created',
  'state.migrating',
  'state.migrated',
  'state.permissions',
  'state.replaced',
  'state.write_failed',
  'state.checkpoint_failed',
  'state.mark_failed',
  'state.checkpoint_partial',
  // the PostgreSQL state's connection (store/postgres/)
  'state.unreachable',
  'state.reachable',
  'state.commit_in_doubt',
  'state.durability',
  // the cluster's leases (cluster/)
  'cluster.joined',
  'cluster.left',
  'cluster.wallets_differ',
  'cluster.wallets_agree',
  'cluster.config_differs',
  'cluster.config_agrees',
  'cluster.schema_newer',
  'lease.acquired',
  'lease.draining',
  'lease.released',
  'lease.lost',
  'lease.fenced',
  'lease.recovery_failed',
  'lease.tick_failed',
  // around `run` (service/)
  'health.listening',
  'health.report_failed',
  'health.request_failed',
  'health.server_error',
  'metrics.exposed',
  'metrics.setup_failed',
  'alerts.failed',
  'alert.opened',
  'alert.closed',
  'notify.failed',
  'notify.transport',
  'notify.unsupported',
  'notify.webhook_dropped',
  'notify.webhook_expired',
  'notify.webhook_failed',
  'notify.webhook_sent',
  'notify.channels_reloaded',
  // the signer service (signer/) and the daemon's client of it (keys/backends/signer-service.ts)
  'signer.started',
  'signer.stopped',
  'signer.signed',
  'signer.refused',
  'signer.journal_failed',
  'signer.backend_failed',
  'signer.connection_failed',
  'signer.batch_failed',
  // the built-in simulator (sandbox/)
  'sandbox.started',
  'sandbox.stopped',
  'sandbox.aborted',
  'sandbox.error',
  'sandbox.fault',
  'sandbox.request',
  'sandbox.demo_key_skipped',
  'sandbox.demo_key_written',
] as const;

export type LogEvent = (typeof LOG_EVENTS)[number];
