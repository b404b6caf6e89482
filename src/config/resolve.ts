// From what the schema accepted (snake_case, amounts as written) to the AppConfig every other part
// consumes (camelCase, lamports, milliseconds, absolute paths). Each conversion that can fail
// reports at its own path and leaves a harmless placeholder, so one bad amount does not hide the
// next problem; `broken` remembers which values are placeholders for the cross-field checks.
import { isAbsolute, resolve as resolvePath } from 'node:path';
import { AmountError, parseSol, type Lamports } from '../amount.js';
import bs58 from 'bs58';
import { DEFAULT_ENDPOINTS } from '../api/endpoints.js';
import { settleAfterMs } from '../api/ts-window.js';
import type {
  AmountSpec,
  ApiConfig,
  AppConfig,
  CmpOp,
  Condition,
  SignedEndpoint,
  Rule,
  SignedOp,
  StepSpec,
  WalletConfig,
} from '../domain.js';
import { SIGNED_OPS, type TransferOp } from '../domain.js';
import { formatPath } from '../json.js';
import { isLoopback } from '../loopback.js';
import { cronProblem, cronStepProblem, timezoneProblem } from './cron.js';
import { parseDuration } from './durations.js';
import { resolveChannels, webhookEvents } from './resolve-channels.js';
import { checkStateUrl } from './state-url.js';
import type { ConfigSource, IssueList, Path } from './positions.js';
import type { SetAside } from './salvage.js';
import type { RawConfig, RawRule, RawStep, RawWallet } from './schema.js';
import { keySource } from './resolve-keys.js';

const TRANSFER_OPS = SIGNED_OPS.filter((op): op is TransferOp => op !== 'claim');

export interface ResolveContext {
  source: ConfigSource;
  issues: IssueList;
  /** Absolute directory of the config file: paths inside it are relative to it. */
  configDir: string;
  /** Wallets from `firstIndex` on came from wallets_file: their key paths are relative to its `dir`. */
  walletsFile: { dir: string; firstIndex: number } | undefined;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Paths (formatted) whose value failed to convert; cross-checks skip comparisons with them. */
  broken: Set<string>;
  /** What the schema refused and was set aside (salvage.ts); checks skip it. */
  setAside: SetAside;
  /** Whether the command polls on the schedule (false for `once`): see LoadOptions.scheduled. */
  scheduled: boolean;
}

export function resolveConfig(raw: RawConfig, absFile: string, ctx: ResolveContext): AppConfig {
  return {
    file: absFile,
    api: resolveApi(raw.api, ctx),
    state: resolveState(raw.state, ctx),
    cluster: { maxClockSkewMs: positiveDuration(raw.cluster.max_clock_skew, ['cluster', 'max_clock_skew'], ctx) },
    schedule: {
      poll: cron(raw.schedule.poll, ctx),
      jitterMs: duration(raw.schedule.jitter, ['schedule', 'jitter'], ctx),
      timezone: timezone(raw.schedule.timezone, ctx),
    },
    wallets: (raw.wallets ?? []).map((w, i) => resolveWallet(w, i, raw.rules, ctx)),
    rules: raw.rules.map((r, i) => resolveRule(r, i, ctx)),
    safety: {
      maxLamportsPerAction: positiveAmount(raw.safety.max_sol_per_action, ['safety', 'max_sol_per_action'], ctx),
      maxLamportsPerWalletPerDay:
        raw.safety.max_sol_per_wallet_per_day === undefined
          ? undefined
          : positiveAmount(raw.safety.max_sol_per_wallet_per_day, ['safety', 'max_sol_per_wallet_per_day'], ctx),
      ...(raw.safety.paused ? { paused: true } : {}),
    },
    sandbox: {
      epochMs: positiveDuration(raw.sandbox.epoch, ['sandbox', 'epoch'], ctx),
      // The simulator accrues per second; a per-minute rate that does not divide evenly loses
      // under a lamport a second, which is fine for a simulator.
      accrualLamportsPerSec: amount(raw.sandbox.accrual_sol_per_min, ['sandbox', 'accrual_sol_per_min'], ctx) / 60n,
    },
    metrics: { listen: listen(raw.metrics?.listen, ctx), perWallet: raw.metrics?.per_wallet ?? 'auto' },
    alerts: {
      staleAfterIntervals: raw.alerts.stale_after_intervals,
      unknownStepAfterMs: positiveDuration(raw.alerts.unknown_step_after, ['alerts', 'unknown_step_after'], ctx),
      ...(raw.alerts.unclaimed_after === undefined ? {} : { unclaimedAfterMs: positiveDuration(raw.alerts.unclaimed_after, ['alerts', 'unclaimed_after'], ctx) }),
      clockSkewMs: positiveDuration(raw.alerts.clock_skew, ['alerts', 'clock_skew'], ctx),
      ...(raw.alerts.runbook_base_url === undefined ? {} : { runbookBaseUrl: raw.alerts.runbook_base_url }),
      webhookEvents: webhookEvents(raw.alerts.webhook.events),
      webhookExpireMs: positiveDuration(raw.alerts.webhook.expire_after, ['alerts', 'webhook', 'expire_after'], ctx),
      webhookTimeoutMs: positiveDuration(raw.alerts.webhook.timeout, ['alerts', 'webhook', 'timeout'], ctx),
      webhookAllowLinkLocal: raw.alerts.webhook.allow_link_local,
      webhookMinSeverity: raw.alerts.webhook.min_severity,
      channels: resolveChannels(raw.alerts, ctx, { positiveDuration: (t, p) => positiveDuration(t, p, ctx), fromConfigDir: (p) => fromConfigDir(p, ctx) }),
    },
    log: { level: raw.log.level },
  };
}

// ------------------------------------------------------------------------------------------------
// api

function resolveApi(api: RawConfig['api'], ctx: ResolveContext): ApiConfig {
  const endpoints = {} as Record<SignedOp, SignedEndpoint>;
  for (const op of SIGNED_OPS) {
    endpoints[op] = { ...DEFAULT_ENDPOINTS[op], ...definedOnly(api.endpoints?.[op] ?? {}) };
  }
  const tsWindowMs = positiveDuration(api.ts_window, ['api', 'ts_window'], ctx);
  return {
    baseUrl: baseUrl(api.base_url, api.allow_insecure_http, ctx),
    headerPrefix: api.header_prefix.toLowerCase(),
    timeoutMs: api.timeout_ms,
    connectTimeoutMs: api.connect_timeout_ms,
    maxResponseBytes: api.max_response_bytes,
    connections: api.connections,
    rateLimit: { perMinute: api.rate_limit.per_minute, burst: api.rate_limit.burst },
    endpoints,
    signatureEncoding: api.signature_encoding,
    apiKeyFile: api.api_key_file === undefined ? undefined : fromConfigDir(api.api_key_file, ctx),
    authReads: api.auth_reads,
    readAttempts: api.read_attempts,
    tsWindowMs,
    claimSettleMs: api.claim_settle === undefined ? settleAfterMs(tsWindowMs) : duration(api.claim_settle, ['api', 'claim_settle'], ctx),
  };
}

function baseUrl(text: string, allowInsecureHttp: boolean, ctx: ResolveContext): string {
  if (text === 'sandbox') return text;
  const path = ['api', 'base_url'];
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    ctx.issues.error(path, 'expected an http(s) URL ending in the version prefix (e.g. https://host/v1)');
    return text;
  }
  if (url.username || url.password) {
    ctx.issues.error(path, 'credentials in the URL are a secret in the YAML; use $AUTOCLAIM_API_KEY or api.api_key_file');
  }
  // Asked of the text, not the parse: `v1?` and `v1#` parse with no query or fragment (both empty),
  // and the base is joined to each operation's path as text, so `v1#` sent every operation to /v1.
  if (/[?#]/.test(text)) ctx.issues.error(path, 'the base URL takes no query or fragment');
  // Every signed request carries the bearer: in clear text it may only stay on this machine. A
  // "private" network is not one the operator can vouch for (a café, a shared VPC, a compromised
  // neighbour), and a name that merely looks private (10.evil.example.com) resolves anywhere.
  // url.hostname is the host as the request will use it (0x7f000001 is 127.0.0.1 to both).
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    if (allowInsecureHttp) {
      ctx.issues.warn(
        path,
        `plain http to ${url.hostname}, which is not this machine, sends the API key and signatures unencrypted (allowed by api.allow_insecure_http); use https`,
      );
    } else {
      ctx.issues.error(
        path,
        `plain http is allowed only to this machine (127.0.0.0/8, ::1 or localhost), not ${url.hostname}: the API key and signatures would cross the network unencrypted; use https, or set api.allow_insecure_http: true`,
      );
    }
  }
  // Paths of operations start with "/", so a trailing one would double up.
  return text.replace(/\/+$/, '');
}

// ------------------------------------------------------------------------------------------------
// state, schedule, metrics

function resolveState(raw: RawConfig['state'], ctx: ResolveContext): AppConfig['state'] {
  const fromEnv = ctx.env.AUTOCLAIM_STATE_URL?.trim();
  const url = fromEnv !== undefined && fromEnv !== '' ? fromEnv : raw?.url;
  const where = fromEnv !== undefined && fromEnv !== '' ? '$AUTOCLAIM_STATE_URL (from the environment): ' : '';
  const check = url === undefined ? undefined : checkStateUrl(url);
  if (check !== undefined && 'error' in check) ctx.issues.error(['state', 'url'], `${where}${check.error}`);
  if (check !== undefined && 'warning' in check) ctx.issues.warn(['state', 'url'], `${where}${check.warning}`);
  const leaseMs = duration(raw?.lease ?? '15s', ['state', 'lease'], ctx);
  if (leaseMs < 3_000) ctx.issues.error(['state', 'lease'], 'must be at least 3s: a lease is renewed every third of it, and each renewal is a round trip to the database');
  const queryTimeoutMs = duration(raw?.query_timeout ?? '10s', ['state', 'query_timeout'], ctx);
  if (queryTimeoutMs < 500) ctx.issues.error(['state', 'query_timeout'], 'must be at least 500ms: shorter fails queries a busy database answers in time');
  return {
    path: statePath(raw?.path, ctx),
    url,
    passwordFile: raw?.password_file === undefined ? undefined : fromConfigDir(raw.password_file, ctx),
    leaseMs,
    queryTimeoutMs,
  };
}

function statePath(given: string | undefined, ctx: ResolveContext): string {
  if (given !== undefined) return fromConfigDir(given, ctx);
  // systemd's StateDirectory= may list several directories, colon-separated; the first is ours.
  const stateDir = ctx.env.STATE_DIRECTORY?.split(':')[0];
  if (stateDir) return resolvePath(stateDir, 'autoclaim.db');
  return resolvePath(ctx.cwd, 'var', 'autoclaim.db');
}

function cron(expr: string, ctx: ResolveContext): string {
  const problem = cronProblem(expr);
  if (problem !== undefined) ctx.issues.error(['schedule', 'poll'], `not a node-cron expression: ${problem}`);
  else {
    const step = cronStepProblem(expr);
    if (step !== undefined) ctx.issues.error(['schedule', 'poll'], step);
  }
  return expr;
}

function timezone(name: string | undefined, ctx: ResolveContext): string | undefined {
  if (name === undefined) return undefined;
  const problem = timezoneProblem(name);
  if (problem !== undefined) ctx.issues.error(['schedule', 'timezone'], problem);
  return problem === undefined ? name : undefined;
}

/** A bare port (9464 or "9464") is this host only: 127.0.0.1:PORT. */
function listen(given: number | string | undefined, ctx: ResolveContext): string | undefined {
  if (given === undefined) return undefined;
  const text = typeof given === 'number' || /^[0-9]+$/.test(given) ? `127.0.0.1:${given}` : given;
  const colon = text.lastIndexOf(':');
  const port = Number(text.slice(colon + 1));
  if (port < 1 || port > 65535) ctx.issues.error(['metrics', 'listen'], 'the port must be between 1 and 65535');
  // The host is bound as written: a name other than localhost is looked up, so it may be anything.
  if (!isLoopback(text.slice(0, colon))) {
    ctx.issues.warn(['metrics', 'listen'], 'the metrics endpoint has no authentication and listens beyond this host');
  }
  return text;
}

// ------------------------------------------------------------------------------------------------
// wallets

function resolveWallet(w: RawWallet, i: number, rules: RawRule[], ctx: ResolveContext): WalletConfig {
  // A key path is relative to the file that names it.
  const side = ctx.walletsFile;
  const dir = side !== undefined && i >= side.firstIndex ? side.dir : ctx.configDir;
  return {
    name: w.name,
    address: address(w.address, ['wallets', i, 'address'], ctx),
    key: keySource(w.key, dir),
    rules: w.rules ?? rules.map((r) => r.name),
    // Only when off: a default config resolves (and digests, cluster/agreement.ts) as before.
    ...(w.enabled ? {} : { enabled: false }),
  };
}

function address(text: string, path: Path, ctx: ResolveContext): string {
  const bytes = bs58.decodeUnsafe(text);
  if (bytes?.length !== 32) {
    ctx.issues.error(path, `not a public key: base58 that decodes to 32 bytes${bytes ? ` (this is ${bytes.length})` : ''}`);
    // No key can match it: the key check loads the key but does not compare addresses.
    ctx.broken.add(formatPath(path));
  }
  return text;
}

// ------------------------------------------------------------------------------------------------
// rules

function resolveRule(r: RawRule, i: number, ctx: ResolveContext): Rule {
  const base: Path = ['rules', i];
  const limits = r.limits;
  return {
    name: r.name,
    id: r.id ?? r.name,
    ...(r.enabled ? {} : { enabled: false }),
    when: conditions(r.when ?? {}, [...base, 'when'], ctx),
    do: r.do.map((s, j) => step(s, [...base, 'do', j], ctx)),
    limits: {
      oncePerEpoch: limits.once_per_epoch,
      cooldownMs: limits.cooldown === undefined ? undefined : duration(limits.cooldown, [...base, 'limits', 'cooldown'], ctx),
      maxPlansPerDay: limits.max_plans_per_day,
      maxLamportsPerDay:
        limits.max_sol_per_day === undefined
          ? undefined
          : positiveAmount(limits.max_sol_per_day, [...base, 'limits', 'max_sol_per_day'], ctx),
    },
  };
}

const OPERATOR_EXAMPLE: Record<string, string> = {
  pending_sol: '{ gte: 0.5 }',
  lifetime_sol: '{ gte: 10 }',
  rank: '{ lte: 10 }',
  tier: '{ in: [gold, platinum] }',
};

function conditions(when: NonNullable<RawRule['when']>, base: Path, ctx: ResolveContext): Condition[] {
  const out: Condition[] = [];
  for (const [field, ops] of Object.entries(when)) {
    if (ops === undefined) continue;
    const at = [...base, field];
    const entries = Object.entries(ops).filter(([, v]) => v !== undefined);
    if (entries.length === 0) ctx.issues.error(at, `no operator: write e.g. ${OPERATOR_EXAMPLE[field] ?? '{ eq: ... }'}`);
    for (const [op, value] of entries) {
      const p = [...at, op];
      if (field === 'pending_sol' || field === 'lifetime_sol') {
        if (op === 'in') {
          const list = value as (number | string)[];
          out.push({ field, op, value: list.map((v, k) => amount(v, [...p, k], ctx)) });
        } else {
          out.push({ field, op: op as CmpOp, value: amount(value as number | string, p, ctx) });
        }
      } else if (field === 'rank') {
        if (op === 'in') out.push({ field, op, value: value as number[] });
        else out.push({ field, op: op as CmpOp, value: value as number });
      } else if (field === 'tier') {
        if (op === 'in') out.push({ field, op, value: value as string[] });
        else out.push({ field, op: op as 'eq' | 'ne', value: value as string });
      }
    }
  }
  return out;
}

function step(s: RawStep, path: Path, ctx: ResolveContext): StepSpec {
  if (s === 'claim') return { kind: 'claim' };
  const kind = TRANSFER_OPS.find((op) => op in s);
  const t = kind === undefined ? undefined : (s as Partial<Record<TransferOp, { symbol: string; amount: number | string }>>)[kind];
  if (kind === undefined || t === undefined) throw new Error(`unreachable: a step the schema accepted has no known kind`);
  return { kind, symbol: t.symbol, amount: stepAmount(t.amount, [...path, kind, 'amount'], ctx) };
}

function stepAmount(value: number | string, path: Path, ctx: ResolveContext): AmountSpec {
  if (value === 'all') return { kind: 'all' };
  if (typeof value === 'string' && value.endsWith('%')) {
    const [whole = '0', frac = ''] = value.slice(0, -1).split('.');
    const ppm = Number(whole) * 10_000 + Number(frac.padEnd(4, '0'));
    if (!(ppm > 0 && ppm <= 1_000_000)) {
      ctx.issues.error(path, `${value} is out of range: a percent of the claim is more than 0% and at most 100%`);
      ctx.broken.add(formatPath(path));
    }
    return { kind: 'percent', ppm };
  }
  return { kind: 'fixed', lamports: positiveAmount(value, path, ctx) };
}

// ------------------------------------------------------------------------------------------------
// values

/** Lamports, exactly, from the text the operator wrote; a YAML float is never trusted. */
function amount(value: number | string, path: Path, ctx: ResolveContext): Lamports {
  const text = typeof value === 'string' ? value : (ctx.source.scalarSource(path) ?? String(value));
  try {
    return parseSol(text);
  } catch (err) {
    if (!(err instanceof AmountError)) throw err;
    ctx.broken.add(formatPath(path));
    const why = err.message.includes('finer')
      ? 'is finer than one lamport (SOL has at most 9 decimals)'
      : err.message.includes('u64')
        ? 'is more SOL than can exist'
        : 'is not a decimal SOL amount';
    ctx.issues.error(path, `${text.trim()} ${why}`);
    return 0n;
  }
}

function positiveAmount(value: number | string, path: Path, ctx: ResolveContext): Lamports {
  const lamports = amount(value, path, ctx);
  if (lamports === 0n && !ctx.broken.has(formatPath(path))) {
    ctx.issues.error(path, 'must be more than 0');
    ctx.broken.add(formatPath(path));
  }
  return lamports;
}

function duration(text: string, path: Path, ctx: ResolveContext): number {
  const ms = parseDuration(text);
  if (ms === undefined) {
    ctx.issues.error(path, `${text} is longer than a year`);
    ctx.broken.add(formatPath(path));
    return 0;
  }
  return ms;
}

function positiveDuration(text: string, path: Path, ctx: ResolveContext): number {
  const ms = duration(text, path, ctx);
  if (ms === 0 && !ctx.broken.has(formatPath(path))) ctx.issues.error(path, 'must be longer than 0');
  return ms;
}

function fromConfigDir(p: string, ctx: ResolveContext): string {
  return fromDir(p, ctx.configDir);
}

function fromDir(p: string, dir: string): string {
  return isAbsolute(p) ? p : resolvePath(dir, p);
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
