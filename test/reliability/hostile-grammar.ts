// The grammar of lies, as fast-check arbitraries. A Sequence is one or two fresh wallets, one rule
// (its steps, limits and safety cap varied), a list of events (cycles after a clock advance,
// restarts, renames) and, per wallet, the script of Turns the hostile server answers with. A
// Profile weighs the grammar so that each test file leans on one family of lies while still
// drawing from all of them.
import fc from 'fast-check';
import { prng } from '../support/prng.js';
import {
  DAY_MS,
  SOL,
  SUMMARY_LIES,
  type ActionBody,
  type ActionSay,
  type ClaimedLie,
  type Echo,
  type EchoWhat,
  type EpochSays,
  type ReadBody,
  type ReadSay,
  type Turn,
  type Wire,
} from './hostile-types.js';

export type RuleShape =
  | { kind: 'claim_only' }
  | { kind: 'deposit_pct'; pct: number }
  | { kind: 'deposit_all' }
  | { kind: 'mint_fixed'; lamports: bigint }
  | { kind: 'mint_fixed_alone'; lamports: bigint };

export interface SeqConfig {
  rule: RuleShape;
  threshold: bigint;
  oncePerEpoch: boolean;
  cooldownMs: number | undefined;
  maxPlansPerDay: number | undefined;
  maxPerDay: bigint | undefined;
  maxPerAction: bigint;
  timeoutMs: number;
}

/** Where a simulated crash may stop the process (in-process: the failpoint throws; nothing after it runs). */
export type CrashPoint = 'after_plan_recorded' | 'after_sending_committed' | 'after_answer_before_record' | 'during_reconciliation';

/**
 * cycle: the fake clock moves on, then every wallet runs one cycle. restart: a new process (store
 * reopened, in-flight steps recovered), the wallets renamed if asked. crash: the process dies the
 * nth time it reaches a failpoint in the cycles that follow, and restarts.
 */
export type SeqEvent =
  | { kind: 'cycle'; advanceMs: number }
  | { kind: 'restart'; rename: boolean }
  | { kind: 'crash'; point: CrashPoint; nth: number };

export interface WalletScript {
  pending: bigint;
  script: Turn[];
}

/** The API key is built from a seed (high entropy, so no innocent text matches a piece of it) plus chosen specials. */
export interface ApiKeySpec {
  seed: number;
  length: number;
  specials: string[];
}

export interface Sequence {
  config: SeqConfig;
  apiKey: ApiKeySpec;
  wallets: WalletScript[];
  events: SeqEvent[];
  /** Offset of the fake clock's start within its first day (ms). */
  startOffsetMs: number;
}

/** Relative weights of each family of lies; 0 turns a family off. */
export interface Profile {
  readHonest: number;
  readLie: number;
  actionHonest: number;
  actionLie: number;
  skip: number;
  claimedLie: number;
  jumpSmall: number;
  jumpBig: number;
  epochBump: number;
  /** Epochs that jump days either way, and answers whose epoch is far ahead or no date (SPEC §2). */
  epochLie: number;
  broken: number;
  /** Summaries whose pending and lifetime disagree (hostile-types.ts SummaryLie); default 0. */
  inconsistent?: number;
  /** Drips and slow headers cost real time: at most one per sequence, in this share of sequences (0..1). */
  slowShare: number;
  echo: number;
  restart: number;
}

const ACTION_STATUSES = [200, 201, 202, 204, 400, 401, 403, 409, 422, 429, 500, 502, 503, 301, 302, 303, 307] as const;
const READ_STATUSES = [200, 200, 200, 202, 400, 401, 403, 404, 429, 500, 502, 503, 302] as const;
const ACTION_BODIES: ActionBody[] = ['success', 'failed', 'rejected', 'error_status', 'error_object', 'pending', 'other_status', 'no_status', 'empty', 'unreadable', 'text'];
const READ_BODIES: ReadBody[] = ['truth', 'no_lifetime', 'empty', 'unreadable', 'error_object', 'text'];
const CLAIMED_LIES: ClaimedLie[] = ['inflated', 'huge', 'deflated', 'negative', 'zero', 'text', 'missing', 'exponent'];
const ECHO_WHATS: EchoWhat[] = ['api_key', 'bearer', 'seed58', 'secret58', 'seed_hex', 'secret_array', 'seed_b64', 'signature'];

const weighted = <T>(...pairs: Array<[number, fc.Arbitrary<T>]>): fc.Arbitrary<T> =>
  fc.oneof(...pairs.filter(([w]) => w > 0).map(([weight, arbitrary]) => ({ weight, arbitrary })));

const echo = (p: Profile): fc.Arbitrary<Echo | undefined> =>
  weighted<Echo | undefined>(
    [10, fc.constant(undefined)],
    [
      p.echo,
      fc.record({
        what: fc.constantFrom(...ECHO_WHATS),
        form: fc.constantFrom('plain', 'plain', 'url', 'quoted'),
        // Around the 120 and 160 character cuts of error text, and anywhere.
        pad: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 90, max: 170 }), fc.integer({ min: 0, max: 300 })),
      }),
    ],
  );

const wire = (p: Profile): fc.Arbitrary<Wire> =>
  weighted<Wire>([30, fc.constant('whole')], [p.broken, fc.constantFrom('reset', 'truncated')], [p.slowShare > 0 ? 2 : 0, fc.constantFrom('drip', 'slow_headers')]);

const readSay = (p: Profile): fc.Arbitrary<ReadSay> =>
  weighted<ReadSay>(
    [p.readHonest, fc.record({ status: fc.constant(200), body: fc.constantFrom<ReadBody>('truth', 'truth', 'no_lifetime'), wire: fc.constant<Wire>('whole'), echo: echo(p) })],
    [p.readLie, fc.record({ status: fc.constantFrom(...READ_STATUSES), body: fc.constantFrom(...READ_BODIES), wire: wire(p), echo: echo(p) })],
    [p.inconsistent ?? 0, fc.record({ status: fc.constant(200), body: fc.constantFrom<ReadBody>(...SUMMARY_LIES), wire: fc.constant<Wire>('whole'), echo: fc.constant(undefined) })],
  );

const claimed = (p: Profile): fc.Arbitrary<ClaimedLie> => weighted<ClaimedLie>([10, fc.constant('true')], [p.claimedLie, fc.constantFrom(...CLAIMED_LIES)]);

const actionSay = (p: Profile): fc.Arbitrary<ActionSay> =>
  weighted<ActionSay>(
    [p.actionHonest, fc.record({ status: fc.constant(200), body: fc.constant<ActionBody>('honest'), claimed: claimed(p), wire: fc.constant<Wire>('whole'), echo: echo(p) })],
    [
      p.actionLie,
      fc.record({
        status: weighted([3, fc.constantFrom(200, 201, 202, 204)], [2, fc.constantFrom(...ACTION_STATUSES)]),
        body: fc.constantFrom(...ACTION_BODIES),
        claimed: claimed(p),
        wire: wire(p),
        echo: echo(p),
      }),
    ],
  );

const turn = (p: Profile): fc.Arbitrary<Turn> =>
  fc.record({
    jump: weighted<bigint>([20, fc.constant(0n)], [p.jumpSmall, fc.bigInt(1n, SOL / 2n)], [p.jumpBig, fc.bigInt(5n * SOL, 80n * SOL)]),
    epochBump: weighted([30, fc.constant(false)], [p.epochBump, fc.constant(true)]),
    epochJump: weighted([30, fc.constant(0)], [p.epochLie, fc.constantFrom(-400, -3, -2, -1, 2, 3, 30, 400)]),
    epochSays: weighted<EpochSays>([30, fc.constant('true')], [p.epochLie, fc.constantFrom<EpochSays>('far_future', 'not_a_date')]),
    read: readSay(p),
    does: weighted([10, fc.constant<'apply' | 'skip'>('apply')], [p.skip, fc.constant<'apply' | 'skip'>('skip')]),
    say: actionSay(p),
  });

const ruleShape: fc.Arbitrary<RuleShape> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<RuleShape>({ kind: 'claim_only' }) },
  { weight: 4, arbitrary: fc.oneof(fc.constant(50), fc.integer({ min: 1, max: 100 })).map((pct): RuleShape => ({ kind: 'deposit_pct', pct })) },
  { weight: 4, arbitrary: fc.constant<RuleShape>({ kind: 'deposit_all' }) },
  { weight: 3, arbitrary: fc.constantFrom(SOL / 10n, SOL, 3n * SOL).map((lamports): RuleShape => ({ kind: 'mint_fixed', lamports })) },
  { weight: 1, arbitrary: fc.constantFrom(SOL / 10n, SOL).map((lamports): RuleShape => ({ kind: 'mint_fixed_alone', lamports })) },
);

const HOUR = 3_600_000;

const config: fc.Arbitrary<SeqConfig> = fc.record({
  rule: ruleShape,
  threshold: fc.constantFrom(SOL / 100n, SOL / 2n, SOL),
  oncePerEpoch: fc.boolean(),
  cooldownMs: fc.constantFrom(undefined, undefined, 30 * 60_000, 6 * HOUR),
  maxPlansPerDay: fc.constantFrom(undefined, undefined, 1, 2, 3),
  maxPerDay: fc.constantFrom(undefined, undefined, SOL, 5n * SOL, 25n * SOL),
  maxPerAction: fc.constantFrom(2n * SOL, 10n * SOL, 100n * SOL, 1_000n * SOL),
  timeoutMs: fc.constantFrom(150, 200, 300),
});

const event = (p: Profile): fc.Arbitrary<SeqEvent> =>
  weighted<SeqEvent>(
    [12, fc.record({ kind: fc.constant<'cycle'>('cycle'), advanceMs: fc.constantFrom(0, 60_000, 20 * 60_000, 3 * HOUR, 13 * HOUR, 25 * HOUR) })],
    [p.restart, fc.record({ kind: fc.constant<'restart'>('restart'), rename: fc.boolean() })],
    [
      p.restart,
      fc.record({
        kind: fc.constant<'crash'>('crash'),
        point: fc.constantFrom<CrashPoint>('after_plan_recorded', 'after_sending_committed', 'after_answer_before_record', 'during_reconciliation'),
        nth: fc.integer({ min: 1, max: 3 }),
      }),
    ],
  );

const apiKey: fc.Arbitrary<ApiKeySpec> = fc.record({
  seed: fc.integer(),
  length: fc.integer({ min: 16, max: 40 }),
  specials: fc.subarray(['"', '\\', '%', '&', '+', '/', '=', "'"], { maxLength: 3 }),
});

/** Keeps only the first drip or slow-headers answer of a sequence, and only in the sequences allowed one. */
function oneSlow(scripts: WalletScript[], allowed: boolean): WalletScript[] {
  let left = allowed ? 1 : 0;
  const tame = (w: Wire): Wire => {
    if (w !== 'drip' && w !== 'slow_headers') return w;
    if (left === 0) return 'whole';
    left -= 1;
    return w;
  };
  return scripts.map((s) => ({
    pending: s.pending,
    script: s.script.map((t) => ({ ...t, read: { ...t.read, wire: tame(t.read.wire) }, say: { ...t.say, wire: tame(t.say.wire) } })),
  }));
}

const walletScript = (p: Profile): fc.Arbitrary<WalletScript> =>
  fc.record({
    pending: fc.oneof(fc.constant(0n), fc.bigInt(SOL / 100n, 3n * SOL), fc.bigInt(3n * SOL, 60n * SOL)),
    script: fc.array(turn(p), { minLength: 2, maxLength: 28 }),
  });

export function sequence(p: Profile): fc.Arbitrary<Sequence> {
  const slowPerMille = Math.round(p.slowShare * 1000);
  // No chain: fast-check shrinks each field of a plain record on its own.
  return fc
    .record({
      slow: slowPerMille > 0 ? fc.integer({ min: 0, max: 999 }).map((n) => n < slowPerMille) : fc.constant(false),
      config,
      apiKey,
      // Mostly one wallet: a second one shows that state stays per address, and costs a cycle each.
      wallets: fc.oneof({ weight: 4, arbitrary: fc.tuple(walletScript(p)) }, { weight: 1, arbitrary: fc.tuple(walletScript(p), walletScript(p)) }),
      events: fc.array(event(p), { minLength: 0, maxLength: 4 }),
      startOffsetMs: fc.integer({ min: 0, max: DAY_MS - 1 }),
    })
    .map(
      (s): Sequence => ({
        // Drips are sized from the timeout: keep it short where one may come.
        config: s.slow ? { ...s.config, timeoutMs: 150 } : s.config,
        apiKey: s.apiKey,
        wallets: oneSlow(s.wallets, s.slow),
        // Always at least two cycles: a second cycle is where a double send shows.
        events: [{ kind: 'cycle', advanceMs: 0 }, ...s.events, { kind: 'cycle', advanceMs: 60_000 }],
        startOffsetMs: s.startOffsetMs,
      }),
    );
}


const KEY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789-_.~';

export function buildApiKey(spec: ApiKeySpec): string {
  const rnd = prng(spec.seed);
  const chars: string[] = [];
  for (let i = 0; i < spec.length; i++) chars.push(KEY_ALPHABET[Math.floor(rnd() * KEY_ALPHABET.length)] ?? 'x');
  for (const s of spec.specials) chars[1 + Math.floor(rnd() * (spec.length - 2))] = s;
  return chars.join('');
}

const sol = (l: bigint | undefined): string => (l === undefined ? '-' : `${Number(l) / 1e9}`);

function describeTurn(t: Turn): string {
  const r = t.read;
  const a = t.say;
  const read = `${t.jump > 0n ? `+${sol(t.jump)} ` : ''}${t.epochBump ? 'epoch+1 ' : ''}${t.epochJump !== 0 ? `epoch${t.epochJump > 0 ? '+' : ''}${t.epochJump} ` : ''}${t.epochSays !== 'true' ? `epoch:${t.epochSays} ` : ''}GET→${r.status}/${r.body}/${r.wire}${r.echo ? `/echo:${r.echo.what}` : ''}`;
  const act = `${t.does} ${a.status}/${a.body}${a.claimed === 'true' ? '' : `/claimed:${a.claimed}`}/${a.wire}${a.echo ? `/echo:${a.echo.what}:${a.echo.form}@${a.echo.pad}` : ''}`;
  return `{${read} | POST→${act}}`;
}

/** The sequence on a few readable lines (fast-check prints it as the counterexample). */
export function describeSequence(s: Sequence): string {
  const c = s.config;
  const rule = c.rule.kind === 'deposit_pct' ? `claim → deposit ${c.rule.pct}%` : c.rule.kind === 'deposit_all' ? 'claim → deposit all' : c.rule.kind === 'mint_fixed' ? `claim → mint ${sol(c.rule.lamports)}` : c.rule.kind === 'mint_fixed_alone' ? `mint ${sol(c.rule.lamports)}` : 'claim';
  const limits = [
    `when pending ≥ ${sol(c.threshold)}`,
    `once_per_epoch ${c.oncePerEpoch}`,
    c.cooldownMs === undefined ? '' : `cooldown ${c.cooldownMs / 60_000}m`,
    c.maxPlansPerDay === undefined ? '' : `max_plans_per_day ${c.maxPlansPerDay}`,
    c.maxPerDay === undefined ? '' : `max_sol_per_day ${sol(c.maxPerDay)}`,
    `max_sol_per_action ${sol(c.maxPerAction)}`,
    `timeout ${c.timeoutMs}ms`,
  ].filter((x) => x !== '');
  const events = s.events.map((e) =>
    e.kind === 'cycle' ? `cycle(+${e.advanceMs / 60_000}m)` : e.kind === 'crash' ? `crash at ${e.point} #${e.nth}` : e.rename ? 'restart+rename' : 'restart',
  );
  const wallets = s.wallets.map((w, i) => `  wallet ${i}: pending ${sol(w.pending)}; turns: ${w.script.map(describeTurn).join(' ')}`);
  return [`rule: ${rule}; ${limits.join(', ')}`, `api key: ${JSON.stringify(buildApiKey(s.apiKey))}`, `events: ${events.join(', ')}`, ...wallets].join('\n');
}
