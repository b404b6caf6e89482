// What the worker is built from and what it reports: its edges (passed in, never imported), the
// step events metrics and alerts subscribe to, and the shapes its parts hand each other.
import type { Clock, Rule, SafetyConfig, SignedEndpoint, SignedOp, StepState } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Failpoint } from './failpoints.js';
import type { ApiPort, Signer, WorkerStore } from './ports.js';

export interface WorkerDeps {
  store: WorkerStore;
  api: ApiPort;
  /** By wallet address: a wallet is its address, and a signer is only ever looked up by it. */
  signers: ReadonlyMap<string, Signer>;
  /** How each signed operation's answers read (applied / refused statuses); the current config's. Default: SPEC §2's sets. */
  endpoints?: () => Readonly<Record<SignedOp, Pick<SignedEndpoint, 'applied' | 'refused'>>>;
  /** By rule name; the current config's rules (a reload swaps the map). */
  rules: () => ReadonlyMap<string, Rule>;
  safety: () => SafetyConfig;
  /** See ApiConfig.claimSettleMs; the daemon passes the configured one. Absent: 0 (judge at once). */
  claimSettleMs?: () => number;
  /** Measures a claim's age for claim_settle; the daemon's decision clock, so an NTP step cannot fake it. Default: clock. */
  elapsedClock?: Clock;
  clock: Clock;
  logger: Logger;
  failpoint: Failpoint;
  /** Told when a step reaches a state worth counting (metrics, webhook); must not throw. */
  onStep?: (e: StepEvent) => void;
}

export interface StepEvent {
  kind: SignedOp;
  /** `anomaly`: the server claimed more than it could have (the step itself was still bounded). */
  state: StepState | 'deferred' | 'anomaly';
  wallet: string;
  plan: number;
  step: number;
  amountLamports?: bigint | undefined;
}

/** How one step ended for this run; anything but `acknowledged` stops the plan here for now. */
export type StepResult = 'acknowledged' | 'rejected' | 'failed' | 'unknown' | 'retry_later' | 'skipped' | 'blocked' | 'paused';

/** Why signing is paused: the server refused a request as invalid, so more of the same would fail too. */
export interface SigningPause {
  /** `all`: the API key was refused (401/403); `wallet`: this wallet's request (signature, timestamp, headers). */
  scope: 'all' | 'wallet';
  reason: string;
  since: number;
  step: number;
}
