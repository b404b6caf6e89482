// The shapes every part of autoclaim agrees on. The config loader turns YAML into these (amounts
// already in lamports, durations in milliseconds); everything downstream consumes only these.
import type { Lamports } from './amount.js';

export type { Lamports } from './amount.js';

/** Every edge that tells time is passed in, so tests can move the clock. */
export interface Clock {
  /** Wall-clock Unix milliseconds (what goes in `x-svc-ts`, what a human reads). */
  now(): number;
  /** Monotonic milliseconds since an arbitrary origin; never steps back. */
  monotonic(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
};

// ---------------------------------------------------------------------------------------------
// Configuration, resolved

/** Every signed operation, in the order they are documented. */
export const SIGNED_OPS = ['claim', 'deposit', 'mint', 'withdraw', 'burn'] as const;
export type SignedOp = (typeof SIGNED_OPS)[number];
/** The operations that move a given amount of a symbol: body and signed message as deposit. */
export type TransferOp = Exclude<SignedOp, 'claim'>;
export type SignatureEncoding = 'base58' | 'base64' | 'hex';

export interface EndpointConfig {
  method: 'POST' | 'PUT';
  /** Relative to api.base_url, e.g. "/rewards/claim". */
  path: string;
  /** Message template, e.g. "{wallet}|{symbol}|{amount}|{ts}". */
  message: string;
}

/** A signed operation's endpoint and how its answers are read (SPEC §2: the body decides). */
export interface SignedEndpoint extends EndpointConfig {
  /** 2xx answer statuses meaning "applied" (compared case-insensitively); see executor/answer.ts. */
  applied: readonly string[];
  /** 2xx answer statuses meaning "refused"; a status in neither set is unknown. */
  refused: readonly string[];
}

export interface ApiConfig {
  /** Ends in the version prefix, e.g. http://127.0.0.1:8787/v1; "sandbox" starts the simulator in-process. */
  baseUrl: string;
  headerPrefix: string; // default "x-svc"
  timeoutMs: number; // headers and body timeout
  connectTimeoutMs: number;
  maxResponseBytes: number;
  connections: number;
  rateLimit: { perMinute: number; burst: number };
  endpoints: Record<SignedOp, SignedEndpoint>;
  signatureEncoding: SignatureEncoding;
  apiKeyFile: string | undefined;
  /** Send the bearer on GETs too when an API key is set (default true). */
  authReads: boolean;
  /** How many times a GET is tried in all (1 = no retry). */
  readAttempts: number;
  /** api.ts_window: how far from the service's clock a signed timestamp is still accepted. */
  tsWindowMs: number;
  /**
   * A lost claim answer is judged "not applied" only once the claim's signed timestamp is this old
   * by the store's clock: until then a copy of it may still be applied, and re-sending would claim
   * twice. Default (api.claim_settle unset): ts_window + TS_WINDOW_MARGIN_MS (api/ts-window.ts).
   */
  claimSettleMs: number;
}

/** A key held in the daemon's memory (keys/keys.ts). */
export type InProcessKeySource = { file: string } | { env: string } | { credential: string };
/** An Ed25519 key in an HSM or token, reached through PKCS#11 (keys/backends/pkcs11.ts). */
export interface Pkcs11KeyConfig {
  module: string;
  /** The token's label: not a secret. */
  token: string;
  label?: string;
  /** CKA_ID in hex. */
  id?: string;
  pinEnv?: string;
  pinCredential?: string;
  sessions: number;
}
/** A Vault transit ed25519 key (keys/backends/vault.ts). */
export interface VaultKeyConfig {
  address: string;
  mount: string;
  key: string;
  namespace?: string;
  tokenEnv?: string;
  tokenFile?: string;
  tokenCredential?: string;
}
/** An AWS KMS ECC_NIST_EDWARDS25519 key (keys/backends/aws-kms.ts). */
export interface KmsKeyConfig {
  keyId: string;
  region: string;
  endpoint?: string;
}
/** A key of the signer service (SPEC §7), over its unix socket. */
export interface SignerServiceKeyConfig {
  socket: string;
  key: string;
}
export type KeySource =
  | InProcessKeySource
  | { pkcs11: Pkcs11KeyConfig }
  | { vault: VaultKeyConfig }
  | { aws_kms: KmsKeyConfig }
  | { signer: SignerServiceKeyConfig };

export interface WalletConfig {
  name: string;
  address: string;
  key: KeySource;
  /** Names of the rules that apply to this wallet (all rules when the YAML omits the list). */
  rules: string[];
  /** wallets[].enabled: false = polled and decided in dry mode, never signed for (the kill switch). Absent: true. */
  enabled?: boolean;
}

export type CmpOp = 'gt' | 'gte' | 'lt' | 'lte' | 'eq' | 'ne';
type AmountField = 'pending_sol' | 'lifetime_sol';

export type Condition =
  | { field: AmountField; op: CmpOp; value: Lamports }
  | { field: AmountField; op: 'in'; value: Lamports[] }
  | { field: 'rank'; op: CmpOp; value: number }
  | { field: 'rank'; op: 'in'; value: number[] }
  | { field: 'tier'; op: 'eq' | 'ne'; value: string }
  | { field: 'tier'; op: 'in'; value: string[] };

/** How much a deposit or mint moves. Percent and "all" are of what this plan's claim claimed. */
export type AmountSpec =
  | { kind: 'fixed'; lamports: Lamports }
  /** Parts per million of the claimed lamports ("12.5%" = 125000), rounded down to the lamport. */
  | { kind: 'percent'; ppm: number }
  | { kind: 'all' };

export type StepSpec = { kind: 'claim' } | { kind: TransferOp; symbol: string; amount: AmountSpec };

export interface RuleLimits {
  oncePerEpoch: boolean;
  cooldownMs: number | undefined;
  /** Plans of this rule for this wallet in any rolling 24 hours. */
  maxPlansPerDay: number | undefined;
  /** Lamports claimed by this rule for this wallet in any rolling 24 hours. */
  maxLamportsPerDay: Lamports | undefined;
}

export interface Rule {
  /** A label for logs and `actions`. */
  name: string;
  /**
   * What the rule's plans and every limit of it are keyed by (SPEC §2: a rule's limits survive its
   * renaming): `id:` in the config, else its name, or the id of the rule it replaced with the same
   * steps (config/rule-ids.ts). Always set once resolved.
   */
  id: string;
  when: Condition[];
  do: StepSpec[];
  limits: RuleLimits;
  /** rules[].enabled: false = decided in dry mode only. Absent: true. */
  enabled?: boolean;
}

export interface SafetyConfig {
  /** A step moving more than this is refused and logged. */
  maxLamportsPerAction: Lamports;
  /**
   * safety.max_sol_per_wallet_per_day: what one address's plans, every rule together, may count for
   * in any 24 h (each plan as a rule's max_sol_per_day counts it); none when undefined.
   */
  maxLamportsPerWalletPerDay?: Lamports | undefined;
  /** safety.paused: the kill switch. Every wallet polled, decided in dry mode, nothing signed. Absent: false. */
  paused?: boolean;
}

export interface AppConfig {
  /** The file it came from (absolute), for messages. */
  file: string;
  api: ApiConfig;
  /**
   * `url` (PostgreSQL, shared by several daemons) replaces the SQLite file at `path` when set; the
   * demo keys still live beside `path`. `leaseMs` is how long a daemon holds a wallet unrenewed.
   */
  state: { path: string; url: string | undefined; passwordFile: string | undefined; leaseMs: number; queryTimeoutMs: number };
  /**
   * With state.url: `maxClockSkewMs` is how far this machine's clock may be from the database's
   * (measured at every lease round) before the daemon stops signing (cluster/clock-bound.ts).
   */
  cluster: { maxClockSkewMs: number };
  /** `timezone`: IANA name the cron fields are read in; undefined = the process's local time. */
  schedule: { poll: string; jitterMs: number; timezone: string | undefined };
  wallets: WalletConfig[];
  rules: Rule[];
  safety: SafetyConfig;
  sandbox: SandboxOptionsConfig;
  /** `perWallet`: metrics.per_wallet (auto = per-wallet series up to 100 wallets). */
  metrics: { listen: string | undefined; perWallet: 'auto' | boolean };
  alerts: AlertsConfig;
  log: { level: string };
}

interface AlertsConfig {
  /** A wallet with no successful poll for this many intervals is stale. */
  staleAfterIntervals: number;
  /** An unknown step open longer than this raises an alert. */
  unknownStepAfterMs: number;
  /** alerts.unclaimed_after: pending grown with no claim applied for this long is told; off when undefined. */
  unclaimedAfterMs?: number;
  /** Server Date vs our clock beyond this is warned about (x-svc-ts would be refused). */
  clockSkewMs: number;
  /** alerts.runbook_base_url as written (service/runbook.ts makes it a base, or finds one when absent). */
  runbookBaseUrl?: string;
  /** What the webhook (if one is set up) is sent: alerts.webhook.events, shorthands expanded. */
  webhookEvents: WebhookCategory[];
  /** alerts.webhook.expire_after: an undelivered failure notice is dropped after this. */
  webhookExpireMs: number;
  /** alerts.webhook.timeout: one POST's overall deadline. */
  webhookTimeoutMs: number;
  /** alerts.webhook.allow_link_local: a link-local (metadata) webhook address is accepted. */
  webhookAllowLinkLocal: boolean;
  /** alerts.webhook.min_severity: notices below it are not posted to the webhook. */
  webhookMinSeverity: Severity;
  /** alerts.channels: Slack, Discord, Telegram, e-mail and PagerDuty, beside the webhook. */
  channels: ChannelConfig[];
}

/** How much a notice matters, lowest first; a channel's min_severity filters on it. */
export const SEVERITIES = ['info', 'warning', 'error', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const CHANNEL_TYPES = ['slack', 'discord', 'telegram', 'email', 'pagerduty'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** One entry of alerts.channels. Secrets are sources (env, file, credential), never values. */
export type ChannelConfig = {
  /** The outbox's channel column and the logs' `channel`: `name`, else the type. Unique. */
  name: string;
  minSeverity: Severity;
  events: WebhookCategory[];
  /** One request's deadline (alerts.webhook.timeout unless the entry sets its own). */
  timeoutMs: number;
  allowLinkLocal: boolean;
} & (
  | { type: 'slack' | 'discord'; url: InProcessKeySource }
  | { type: 'telegram'; token: InProcessKeySource; chatId: string; apiUrl: string }
  | { type: 'pagerduty'; routingKey: InProcessKeySource; url: string }
  | { type: 'email'; host: string; port: number; from: string; to: string[]; username: string | undefined; password: InProcessKeySource | undefined; caFile: string | undefined }
);

/** The kinds of webhook notification an operator can choose (alerts.webhook.events). */
export const WEBHOOK_CATEGORIES = ['rejected', 'failed', 'unknown', 'anomaly', 'config_invalid', 'stale', 'unknown_step', 'epoch_refused', 'acknowledged'] as const;
export type WebhookCategory = (typeof WEBHOOK_CATEGORIES)[number];

/** Options for the in-process simulator when api.base_url is "sandbox". */
interface SandboxOptionsConfig {
  epochMs: number;
  /** Lamports each demo wallet accrues per second. */
  accrualLamportsPerSec: Lamports;
}

// ---------------------------------------------------------------------------------------------
// What the API tells us, parsed at the edge

export interface VaultBreakdown {
  vault: string;
  volume: string | null; // decimal text as sent; not used for decisions
  score: string | null;
}

export interface WalletSummary {
  address: string;
  /** "YYYY-MM-DD" */
  epoch: string;
  pendingLamports: Lamports;
  lifetimeLamports: Lamports | null;
  rank: number | null;
  tier: string | null;
  breakdown: VaultBreakdown[];
  /** The response as parsed (numbers kept as their exact text), stored for the record. */
  raw: unknown;
}

export interface LeaderboardEntry {
  rank: number;
  address: string;
  score: string | null;
  totalRewardsLamports: Lamports | null;
}

// ---------------------------------------------------------------------------------------------
// Plans and steps (SPEC §2)

/**
 * `rejected`: the server refused the action itself (nothing to claim, no balance, vault paused).
 * `failed`: it refused the *request* (signature, timestamp, headers, auth): the setup is wrong, not
 * the action, so a failed plan does not count for any limit and the rule may fire again once the
 * setup is fixed (SPEC §2) — unless a step of it was applied before (rules/limits.ts countsForLimits).
 */
export type StepState = 'planned' | 'sending' | 'acknowledged' | 'rejected' | 'failed' | 'unknown' | 'skipped';
export type PlanStatus = 'open' | 'done' | 'rejected' | 'failed' | 'blocked' | 'dry';

/** What the rules engine returns: a plan to be recorded before anything is signed. */
export interface PlanDraft {
  /** The wallet's configured name: a label for logs and `actions`. */
  wallet: string;
  /** What the plan is keyed by: a wallet is its address (SPEC §2). */
  address: string;
  rule: string;
  epoch: string;
  /**
   * Slot within (wallet, rule, epoch): always 0 with once_per_epoch; otherwise the count of
   * earlier plans in this epoch. UNIQUE(address, rule, epoch, seq, dry) makes a second plan for the same
   * decision impossible even if two decisions race.
   */
  seq: number;
  steps: StepSpec[];
  /** What this plan expects to claim (the pending amount at decision time). */
  estimateLamports: Lamports;
  /** A one-off `autoclaim send --id ID`: at most one plan per id, ever (UNIQUE). */
  manualId?: string;
}

/** A recorded plan, as the rules engine needs it for limits. */
export interface PlanHistoryEntry {
  /** The plan's id; the worker's re-check before signing leaves the plan itself out by it. */
  id?: number;
  rule: string;
  epoch: string;
  seq: number;
  createdAt: number; // wall ms
  dry: boolean;
  status: PlanStatus;
  /**
   * What it counts for against the daily caps: lamports claimed (acknowledged) or, while open,
   * estimated, plus its fixed amounts (rules/amounts.ts planDayLamports).
   */
  lamports: Lamports;
  /** A step of it was applied or may have been (acknowledged, sending, unknown): a failed plan with one still counts. */
  spent?: boolean;
  /** Wall ms its last request that went out (or may have) was started: it counts in the rolling day from then too. */
  movedAt?: number;
}

/** Why a rule fired or did not; becomes a rule.fired / rule.skipped log event. */
export interface Decision {
  /** The rule's name (a label). */
  rule: string;
  /** The rule's id, what its plan is keyed by; absent for a name no rule has (unknown_rule). */
  ruleId?: string;
  fired: boolean;
  /** Machine-readable: "condition", "once_per_epoch", "cooldown", "max_plans_per_day", "max_sol_per_day", "max_sol_per_action", "fired". */
  reason: string;
  /** Human-readable, e.g. "pending_sol 0.4 < gte 0.5". */
  detail: string;
}
