// What the worker is built from and what it reports: its edges (passed in, never imported), the
// event channel its step outcomes go out on, and the shapes its parts hand each other.
import type { Clock, Rule, SafetyConfig, SignedEndpoint, SignedOp, WalletConfig } from '../domain.js';
import type { EventSink, ServerRefusal } from '../events.js';
import type { Logger } from '../log/logger.js';
import type { Failpoint } from './failpoints.js';
import type { ApiPort, WalletSigner, WorkerStore } from './ports.js';

export interface WorkerDeps {
  store: WorkerStore;
  api: ApiPort;
  /** By wallet address: a wallet is its address, and a signer is only ever looked up by it. */
  signers: ReadonlyMap<string, WalletSigner>;
  /** How long a signer may take (signing-guard.ts DEFAULT_SIGN_DEADLINE_MS); past it the step goes back to planned, unsent. */
  signDeadlineMs?: number;
  /** The current config (rules, safety, how answers read), read at each use. */
  config: () => WorkerConfig;
  /** The daemon's decision clock (limits' windows), so an NTP step cannot fake them. Default: clock. */
  elapsedClock?: Clock;
  clock: Clock;
  logger: Logger;
  failpoint: Failpoint;
  /** The process's event channel: each step outcome goes out as `step:outcome` (metrics, webhook). */
  events?: EventSink;
  /**
   * With shared state: whether this daemon still holds the wallet's lease, asked once more after
   * `sending` is committed and right before the request goes out. A daemon paused between the two
   * (GC, SIGSTOP) may have lost the wallet meanwhile, and the new owner may already have judged
   * the step; the fence stops a lapsed daemon from recording, this stops it from sending what it
   * recorded before it lapsed. Absent: always (one daemon per state file).
   */
  stillHolds?: (address: string) => boolean;
  /**
   * With shared state: why no wallet may be signed for now, whatever the server said — this
   * machine's clock is out of cluster.max_clock_skew of the database's (cluster/clock-bound.ts).
   * Asked wherever a pause is (pausedFor), so the step stays planned and nothing is spent; it
   * lifts by itself when the condition clears (a reload does not lift it). Also the kill switch
   * (kill-switch.ts), per address; `undefined` asks about every wallet at once. Absent: never.
   */
  signingGate?: (address: string | undefined) => SigningPause | undefined;
  /**
   * Settles when the rules in force have their ids carried from the journal (a reload's,
   * daemon.ts): the recheck before a signature finds a plan's rule by id only after it, or a rule
   * kept across a reload would look gone and its plan be skipped. None when absent.
   */
  ruleIdsSettled?: () => Promise<boolean>;
}

export type { StepEvent } from '../events.js';

/**
 * The part of the config the worker reads. It asks `config()` at each use rather than holding a
 * copy, so a reload (which swaps what `config()` returns) reaches every reader at its next use.
 * An AppConfig is one; tests hand in only what they set.
 */
export interface WorkerConfig {
  rules: Rule[];
  /** The wallets and the rules each runs: a rule taken off a wallet's list stops its plans there. Absent: not checked. */
  wallets?: ReadonlyArray<Pick<WalletConfig, 'name' | 'address' | 'rules'>>;
  safety: SafetyConfig;
  api?: {
    /** How each signed operation's answers read (applied / refused statuses). Default: SPEC §2's sets. */
    endpoints?: Readonly<Record<SignedOp, Pick<SignedEndpoint, 'applied' | 'refused'>>>;
    /** See ApiConfig.claimSettleMs: judged by the store's clock (store.clockNow). Absent: 0 (judge at once). */
    claimSettleMs?: number;
    /** See ApiConfig.tsWindowMs: bounds how long a signed request may wait to go out. Absent: no bound. */
    tsWindowMs?: number;
  };
  /** alerts.clock_skew: |server − ours| above this is logged as `clock.skew` (default 30 s). */
  alerts?: { clockSkewMs?: number; unknownStepAfterMs?: number };
}

/** How one step ended for this run; anything but `acknowledged` stops the plan here for now. */
export type StepResult = 'acknowledged' | 'rejected' | 'failed' | 'unknown' | 'retry_later' | 'skipped' | 'blocked' | 'paused';

/** Why signing is paused: the server refused a request as invalid, so more of the same would fail too. */
export interface SigningPause {
  /** `all`: the API key was refused (401/403); `wallet`: this wallet's request (signature, timestamp, headers). */
  scope: 'all' | 'wallet';
  reason: string;
  since: number;
  /**
   * What holds signing: the server's refusal (the default), the cluster's clock bound, a shared
   * schema newer than this code (cluster/schema-watch.ts), or the kill switch (kill-switch.ts),
   * under which a wallet's turn still decides, in dry mode.
   */
  source?: 'refusal' | 'clock' | 'schema' | 'kill_switch';
  /** The step whose refusal paused signing; undefined for a gate (the clock) rather than a refusal. */
  step?: number;
  /** What the server said (code, message, status, request id) and what its words point at. */
  refusal?: ServerRefusal;
  /** What to check, chosen from the refusal's words (executor/refusal.ts). */
  fix?: string;
}
