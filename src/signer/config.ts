// signer.yaml: the signer service's own config (SPEC §7). Its templates and policy are its own, so
// a compromised daemon can neither choose the bytes signed nor raise a cap. Read through the same
// YAML steps as autoclaim's config (load.ts readYamlData): every problem at file:line:col, in one pass.
import { dirname, isAbsolute, resolve } from 'node:path';
import bs58 from 'bs58';
import { z } from 'zod';
import { AmountError, formatSol, parseSol, type Lamports } from '../amount.js';
import { DEFAULT_ENDPOINTS, TEMPLATE_VARIABLES, runTogether, templateVariables } from '../api/endpoints.js';
import { parseDuration } from '../config/durations.js';
import { readYamlData } from '../config/load.js';
import type { IssueList, Path } from '../config/positions.js';
import { FILE_LIMITS } from '../config/read-bounded.js';
import { readTextFile } from '../config/read-text.js';
import { keySource } from '../config/resolve-keys.js';
import { KeySource } from '../config/schema-keys.js';
import { checkStateUrl } from '../config/state-url.js';
import { Duration, name, SolAmount } from '../config/schema-fields.js';
import { errorMap, reportSchemaProblems } from '../config/zod-issues.js';
import { SIGNED_OPS, type KeySource as KeySourceConfig, type SignedOp } from '../domain.js';
import type { ConfigIssue } from '../errors.js';
import { KeyError } from '../errors.js';
import { connectSigners, openSigner } from '../keys/backends/index.js';
import type { MessageTemplates } from '../keys/message.js';
import type { WalletSigner } from '../keys/port.js';
import type { Redactor } from '../log/redact.js';

const Policy = z.strictObject({
  ops: z.array(z.enum(SIGNED_OPS)).min(1).describe('operations this key may sign'),
  symbols: z.array(z.string().min(1)).optional().describe('symbols a deposit, mint, withdraw or burn may name (required with any of them)'),
  max_sol_per_action: SolAmount.optional().describe('largest amount one signature may carry (required with an op that moves an amount)'),
  max_sol_per_day: SolAmount.optional().describe('what this wallet’s signatures may carry in any 24 hours, by the signer’s clock (required with an op that moves an amount)'),
});

const KeyEntry = z.strictObject({
  name: name('key').describe('the name the daemon asks for (key: { signer: { key } })'),
  address: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, { error: 'expected a base58 public key' }),
  key: KeySource,
  policy: Policy,
});

const Templates = z.strictObject(Object.fromEntries(SIGNED_OPS.map((op) => [op, z.string().min(1).optional()])) as Record<SignedOp, z.ZodOptional<z.ZodString>>);

export const SignerConfigSchema = z.strictObject({
  socket: z.string().min(1).describe('unix socket path, e.g. /run/autoclaim-signer/signer.sock'),
  state: z.strictObject({
    path: z.string().min(1).optional().describe('the signature journal, SQLite on this machine (or state.url)'),
    url: z
      .string()
      .min(1)
      .optional()
      .describe('the signature journal on PostgreSQL, shared by a cluster of signers so their caps hold together: postgres://user@host:port/db; no password here: PGPASSWORD, state.password_file or the credential state_password'),
    password_file: z.string().min(1).optional().describe('mode-0600 file holding the PostgreSQL password (with state.url)'),
    query_timeout: Duration.default('10s').describe('deadline of every PostgreSQL query (with state.url); a batch gets three'),
    mark_file: z
      .string()
      .min(1)
      .optional()
      .describe('with state.url: a file on this signer’s disk keeping the newest signature it journalled; a journal below it (restored, its tables dropped) is refused at start'),
  }),
  max_ts_skew: Duration.default('30s').describe('how far a request’s ts may be from this machine’s clock'),
  epochs: z.enum(['calendar', 'any']).default('calendar').describe('calendar: a claim’s epoch must be a real date within a day of this machine’s UTC date; any: only for the sandbox’s fast epochs'),
  templates: Templates.default({}).describe('message templates per op; defaults are the daemon’s'),
  keys: z.array(KeyEntry).min(1),
});

export interface SignerPolicy {
  ops: ReadonlySet<SignedOp>;
  symbols: ReadonlySet<string>;
  maxLamportsPerAction: Lamports;
  maxLamportsPerDay: Lamports;
}

export interface SignerKeyConfig {
  name: string;
  address: string;
  key: KeySourceConfig;
  policy: SignerPolicy;
}

export interface SignerConfig {
  file: string;
  socket: string;
  /** The SQLite journal; undefined with stateUrl. */
  statePath: string | undefined;
  /** The PostgreSQL journal (state.url), shared by a cluster's signers. */
  stateUrl: string | undefined;
  statePasswordFile: string | undefined;
  /** state.mark_file: the PostgreSQL journal's mark on this machine (a SQLite journal's is beside it). */
  stateMarkFile: string | undefined;
  queryTimeoutMs: number;
  maxTsSkewMs: number;
  epochs: 'calendar' | 'any';
  templates: MessageTemplates;
  keys: SignerKeyConfig[];
}

export interface SignerLoadResult {
  config: SignerConfig | undefined;
  errors: ConfigIssue[];
  warnings: ConfigIssue[];
  /** With loadKeys, for a config without errors: the signers by key name (remote ones not yet connected: connectSignerKeys). */
  signers?: Map<string, WalletSigner>;
}

interface SignerLoadOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Load every key and check its address (start-up and --check). */
  loadKeys?: { redactor: Redactor };
}

export function loadSignerConfig(file: string, opts: SignerLoadOptions): SignerLoadResult {
  const absFile = resolve(opts.cwd, file);
  const text = readTextFile(absFile, { what: 'signer config file', maxBytes: FILE_LIMITS.configFile, notFoundHint: 'give one with --config' });
  if (typeof text !== 'string') return { config: undefined, errors: [{ file, line: 0, col: 0, path: '', message: text.problem }], warnings: [] };
  const read = readYamlData(text, file);
  if (read.issues === undefined) return { config: undefined, errors: read.errors, warnings: [] };
  const { issues } = read;
  if (read.data === undefined) return done(issues);
  const parsed = SignerConfigSchema.safeParse(read.data, { error: errorMap });
  if (!parsed.success) {
    reportSchemaProblems(issues, parsed.error.issues, read.data, [], [], z.toJSONSchema(SignerConfigSchema, { io: 'input' }));
    return done(issues);
  }
  const config = resolveSigner(parsed.data, absFile, issues);
  if (issues.errors.length > 0 || opts.loadKeys === undefined) return done(issues, config);
  // Through the same backends as the daemon's wallets (keys/backends): an in-process key is loaded
  // and checked against its address now, a remote one's secret read now and its key by connectSignerKeys.
  const signers = new Map<string, WalletSigner>();
  config.keys.forEach((k, i) => {
    try {
      signers.set(k.name, openSigner(k.key, k.address, k.name, { env: opts.env, baseDir: dirname(absFile), redactor: opts.loadKeys!.redactor, templates: config.templates }));
    } catch (err) {
      if (!(err instanceof KeyError)) throw err;
      issues.error(['keys', i, 'key'], `key ${k.name}: ${err.message}`);
    }
  });
  return done(issues, config, signers);
}

/**
 * Connects every remote key (PKCS#11, Vault, KMS) as the daemon does at start: each must answer and
 * its public key derive the configured address. What does not, as config issues (exit 78).
 */
export async function connectSignerKeys(config: SignerConfig, signers: ReadonlyMap<string, WalletSigner>): Promise<ConfigIssue[]> {
  const problems = await connectSigners(signers.values());
  return problems.map((p) => {
    const i = config.keys.findIndex((k) => k.address === p.address);
    return { file: config.file, line: 0, col: 0, path: `keys[${i}].key`, message: `key ${config.keys[i]?.name ?? '?'}: the ${p.backend} backend: ${p.message}` };
  });
}

function done(issues: IssueList, config?: SignerConfig, signers?: Map<string, WalletSigner>): SignerLoadResult {
  const { errors, warnings } = issues.sorted();
  if (errors.length > 0) return { config: undefined, errors, warnings };
  return signers === undefined ? { config, errors, warnings } : { config, errors, warnings, signers };
}

type RawSigner = z.output<typeof SignerConfigSchema>;

function resolveSigner(raw: RawSigner, absFile: string, issues: IssueList): SignerConfig {
  const dir = dirname(absFile);
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(dir, p));
  const maxTsSkewMs = parseDuration(raw.max_ts_skew) ?? 0;
  if (maxTsSkewMs <= 0 || maxTsSkewMs > 10 * 60_000) issues.error(['max_ts_skew'], 'must be more than 0 and at most 10m');
  const templates = Object.fromEntries(SIGNED_OPS.map((op) => [op, raw.templates[op] ?? DEFAULT_ENDPOINTS[op].message])) as Record<SignedOp, string>;
  for (const op of SIGNED_OPS) checkTemplate(op, templates[op], raw.templates[op] !== undefined, issues);
  const names = new Map<string, number>();
  const addresses = new Map<string, number>();
  const keys = raw.keys.map((k, i) => {
    const at: Path = ['keys', i];
    const firstName = names.get(k.name);
    if (firstName !== undefined) issues.error([...at, 'name'], `key name ${k.name} is already used by keys[${firstName}]`);
    else names.set(k.name, i);
    // Two entries for one address would each have their own caps: together, twice the policy.
    const firstAddress = addresses.get(k.address);
    if (firstAddress !== undefined) issues.error([...at, 'address'], `this address is already keys[${firstAddress}]; one entry per wallet, or its caps would count twice`);
    else addresses.set(k.address, i);
    if (bs58.decodeUnsafe(k.address)?.length !== 32) issues.error([...at, 'address'], 'not a public key: base58 that decodes to 32 bytes');
    // A signer service behind a signer service would answer to another policy than this file's.
    if ('signer' in k.key) issues.error([...at, 'key', 'signer'], 'the signer service holds keys itself: give the key (file, env, credential) or its backend (pkcs11, vault, aws_kms), not another signer service');
    const key: KeySourceConfig = keySource(k.key, dir);
    const policy = resolvePolicy(k.policy, [...at, 'policy'], issues);
    sameMessageOps(policy, templates, [...at, 'policy', 'ops'], issues);
    return { name: k.name, address: k.address, key, policy };
  });
  const { path, url, password_file: passwordFile } = raw.state;
  if ((path === undefined) === (url === undefined)) issues.error(['state'], 'give exactly one of path (a SQLite journal on this machine) or url (a PostgreSQL journal a cluster of signers shares)');
  const check = url === undefined ? undefined : checkStateUrl(url);
  if (check !== undefined && 'error' in check) issues.error(['state', 'url'], check.error);
  if (check !== undefined && 'warning' in check) issues.warn(['state', 'url'], check.warning);
  if (passwordFile !== undefined && url === undefined) issues.error(['state', 'password_file'], 'only with state.url');
  const markFile = raw.state.mark_file;
  if (markFile !== undefined && url === undefined) issues.error(['state', 'mark_file'], 'only with state.url: a SQLite journal keeps its mark beside it (<path>.mark)');
  // A claim's epoch is what one-claim-per-epoch counts: unchecked, a client names a new date for each.
  if (raw.epochs === 'any') issues.warn(['epochs'], 'any: a client may have a claim signed for every date it names, one per date, not one a day; meant for the sandbox’s fast epochs only (calendar, the default, holds an epoch to within a day of this machine’s date)');
  const queryTimeoutMs = parseDuration(raw.state.query_timeout) ?? 0;
  if (queryTimeoutMs < 500) issues.error(['state', 'query_timeout'], 'must be at least 500ms: shorter fails queries a busy database answers in time');
  return {
    file: absFile,
    socket: abs(raw.socket),
    statePath: path === undefined ? undefined : abs(path),
    stateUrl: url,
    statePasswordFile: passwordFile === undefined ? undefined : abs(passwordFile),
    stateMarkFile: markFile === undefined ? undefined : abs(markFile),
    queryTimeoutMs,
    maxTsSkewMs,
    epochs: raw.epochs,
    templates,
    keys,
  };
}

function checkTemplate(op: SignedOp, template: string, given: boolean, issues: IssueList): void {
  const path: Path = ['templates', op];
  const vars = templateVariables(template);
  const unknown = vars.filter((v) => !(TEMPLATE_VARIABLES as readonly string[]).includes(v));
  if (unknown.length > 0) issues.error(path, `unknown placeholder {${unknown[0]}}; known: ${TEMPLATE_VARIABLES.map((v) => `{${v}}`).join(' ')}`);
  if (op === 'claim' && (vars.includes('symbol') || vars.includes('amount'))) issues.error(path, 'a claim has no symbol or amount to sign');
  // A template that does not sign what the policy checks would let one signature stand for another action.
  if (given && !vars.includes('wallet')) issues.error(path, 'must sign {wallet}');
  if (given && !vars.includes('ts')) issues.error(path, 'must sign {ts}');
  if (given && op !== 'claim' && (!vars.includes('amount') || !vars.includes('symbol'))) issues.error(path, 'must sign {symbol} and {amount}');
  // The policy checks the action it parsed; the server reads the text back its own way.
  for (const pair of runTogether(template)) issues.error(path, `${pair} run together, so one message is more than one action (ETH2 5 and ETH 25 both sign "ETH25") and the caps cannot hold; put a separator such as | between them`);
  const shared = sharedSeparators(template.replaceAll('{op}', op));
  if (shared !== undefined) issues.error(path, `${shared}: its separator can be part of the values beside it, so one message is more than one action (ETH 2.5 and ETH.2 5 both sign "ETH.2.5") and the caps cannot hold; put a separator such as | between them`);
}

/**
 * What each placeholder can hold in a message this signer renders (protocol.ts: the wallet is
 * base58, the symbol [A-Za-z0-9._-], the amount canonical decimal, the ts digits, the epoch a date).
 */
const VALUE_CHARS: Readonly<Record<string, RegExp>> = {
  wallet: /[1-9A-HJ-NP-Za-km-z]/,
  symbol: /[A-Za-z0-9._-]/,
  amount: /[0-9.]/,
  ts: /[0-9]/,
  epoch: /[0-9-]/,
};

/**
 * A message reads back as one action only when every value's ends can be found. Read from the
 * left, a separator holding a character the value before it cannot marks that value's end (the
 * first such character); read from the right, one holding a character the value after it cannot
 * marks that value's start. The two readings meet in one value when every separator the left
 * reading cannot pass comes after every one the right reading cannot. Else the first separator in
 * the way ("{symbol}.{amount}"); undefined when there is none. Values side by side are runTogether's.
 */
function sharedSeparators(template: string): string | undefined {
  const parts = template.split(/\{([^{}]*)\}/);
  const gaps: Array<{ left: string; sep: string; right: string }> = [];
  for (let i = 1; i + 2 < parts.length; i += 2) if (parts[i + 1] !== '') gaps.push({ left: parts[i]!, sep: parts[i + 1]!, right: parts[i + 2]! });
  const marks = (sep: string, name: string): boolean => [...sep].some((c) => !(VALUE_CHARS[name]?.test(c) ?? false));
  const firstNotLeft = gaps.findIndex((g) => !marks(g.sep, g.left));
  const lastNotRight = gaps.findLastIndex((g) => !marks(g.sep, g.right));
  if (firstNotLeft < 0 || lastNotRight < firstNotLeft) return undefined;
  const g = gaps[firstNotLeft]!;
  return `{${g.left}}${g.sep}{${g.right}}`;
}

/**
 * An op the policy leaves out whose template renders the same text as one it allows (the defaults
 * of deposit, mint, withdraw and burn are one template) gets the same signature: a server that
 * checks that text for both takes a deposit's signature as a burn's. The signer cannot refuse what
 * it already signed under another name, so the policy is read as allowing it (a warning, not an
 * error: the server's messages are not the operator's to change).
 */
function sameMessageOps(policy: SignerPolicy, templates: Readonly<Record<SignedOp, string>>, path: Path, issues: IssueList): void {
  const text = (op: SignedOp): string => templates[op].replaceAll('{op}', op);
  const groups = new Map<string, SignedOp[]>();
  for (const op of SIGNED_OPS) groups.set(text(op), [...(groups.get(text(op)) ?? []), op]);
  for (const ops of groups.values()) {
    const allowed = ops.filter((op) => policy.ops.has(op));
    const also = ops.filter((op) => !policy.ops.has(op));
    if (allowed.length === 0 || also.length === 0) continue;
    const them = also.length === 1 ? 'it' : 'them';
    issues.warn(path, `${also.join(', ')} ${also.length === 1 ? 'has' : 'have'} the message template of ${allowed.join(', ')} (${JSON.stringify(templates[allowed[0]!])}): a ${allowed[0]} signature is also one for ${also.join(', ')} wherever the server checks that message, so this policy cannot refuse ${them}; allow ${them} explicitly, or give templates that differ if the server signs the op (e.g. {op})`);
  }
}

/**
 * The largest cap a policy may set: the SQLite journal stores an amount, and each hour's running
 * total, as a 64-bit signed integer, and refused a batch holding more with INTERNAL. A cap within
 * it keeps every amount the journal sees within it: a larger amount is refused at the policy edge,
 * before the journal (POLICY_ACTION_CAP), and a day's total never passes the day cap.
 */
export const JOURNAL_MAX_LAMPORTS: Lamports = 2n ** 63n - 1n;

function resolvePolicy(raw: z.output<typeof Policy>, at: Path, issues: IssueList): SignerPolicy {
  const moves = raw.ops.some((op) => op !== 'claim');
  const lamports = (value: number | string | undefined, key: string): Lamports => {
    if (value === undefined) {
      // Money fields never default: a key allowed to move an amount says how much.
      if (moves) issues.error([...at, key], 'required when ops include deposit, mint, withdraw or burn');
      return 0n;
    }
    const text = typeof value === 'string' ? value : (issues.source.scalarSource([...at, key]) ?? String(value));
    let parsed: Lamports;
    try {
      parsed = parseSol(text);
    } catch (err) {
      if (!(err instanceof AmountError)) throw err;
      issues.error([...at, key], `${text.trim()} is not a SOL amount exact to the lamport`);
      return 0n;
    }
    if (parsed > JOURNAL_MAX_LAMPORTS) {
      issues.error([...at, key], `${text.trim()} is more than the signer's journal can count (at most ${formatSol(JOURNAL_MAX_LAMPORTS)} SOL, fifteen times the supply)`);
      return 0n;
    }
    return parsed;
  };
  const perAction = lamports(raw.max_sol_per_action, 'max_sol_per_action');
  const perDay = lamports(raw.max_sol_per_day, 'max_sol_per_day');
  if (moves && (raw.symbols === undefined || raw.symbols.length === 0)) issues.error([...at, 'symbols'], 'required when ops include deposit, mint, withdraw or burn');
  if (perAction > perDay) issues.warn([...at, 'max_sol_per_action'], 'is more than max_sol_per_day: the day cap is the one that binds');
  return { ops: new Set(raw.ops), symbols: new Set(raw.symbols ?? []), maxLamportsPerAction: perAction, maxLamportsPerDay: perDay };
}
