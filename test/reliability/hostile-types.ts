// The vocabulary of the hostile server (what a Turn can make it do and say) and the small exact
// helpers it and the invariants share. Independent of the product: amounts are parsed and printed
// here, not with src/amount.ts.
export const SOL = 1_000_000_000n;
export const DAY_MS = 86_400_000;
export type Op = 'claim' | 'deposit' | 'mint';

/** How the bytes of an answer arrive. */
export type Wire = 'whole' | 'drip' | 'slow_headers' | 'reset' | 'truncated';
export type EchoWhat = 'api_key' | 'bearer' | 'seed58' | 'secret58' | 'seed_hex' | 'secret_array' | 'seed_b64' | 'signature';
/** plain: as is (JSON-escaped when it sits in a JSON string); url: percent-encoded; quoted: JSON.stringify'd first. */
export type EchoForm = 'plain' | 'url' | 'quoted';
/** A secret echoed back after `pad` characters of filler, so a cut at 120-160 characters can land inside it. */
export interface Echo {
  what: EchoWhat;
  form: EchoForm;
  pad: number;
}

export type ActionBody =
  | 'honest'
  | 'success'
  | 'failed'
  | 'rejected'
  | 'error_status'
  | 'error_object'
  | 'pending'
  | 'other_status'
  | 'no_status'
  | 'empty'
  | 'unreadable'
  | 'text';
export type ClaimedLie = 'true' | 'inflated' | 'huge' | 'deflated' | 'negative' | 'zero' | 'text' | 'missing' | 'exponent';
export interface ActionSay {
  status: number;
  body: ActionBody;
  claimed: ClaimedLie;
  wire: Wire;
  echo: Echo | undefined;
}
export type EpochSays = 'true' | 'far_future' | 'not_a_date';
/** What a summary says instead of its epoch (SPEC §2 refuses both). */
export const EPOCH_LIES: Readonly<Record<Exclude<EpochSays, 'true'>, string>> = { far_future: '2099-01-01', not_a_date: '2025-02-30' };
export type ReadBody = 'truth' | 'no_lifetime' | 'empty' | 'unreadable' | 'error_object' | 'text' | SummaryLie;
/**
 * A summary whose pending and lifetime disagree (issue 24 finding 2), told for one read only (the
 * server's world is unchanged, but for the rollover): pending shown 0 with lifetime flat
 * (`drop_flat`), risen by only a quarter of what pending dropped (`drop_short`) or missing
 * (`drop_no_lifetime`); lifetime shown at half (`lifetime_fell`); the epoch really moved on and
 * pending shown moved into lifetime at the same read (`rollover_drop`). None is a consistent
 * claim: a lie no client can detect (pending into lifetime exactly, in one epoch) is never told.
 */
export type SummaryLie = 'drop_flat' | 'drop_short' | 'drop_no_lifetime' | 'lifetime_fell' | 'rollover_drop';
export const SUMMARY_LIES: readonly SummaryLie[] = ['drop_flat', 'drop_short', 'drop_no_lifetime', 'lifetime_fell', 'rollover_drop'];
export interface ReadSay {
  status: number;
  body: ReadBody;
  wire: Wire;
  echo: Echo | undefined;
}
/** One scripted turn. A read uses jump/epochBump/read; a signed request uses does/say. */
export interface Turn {
  /** Pending rises by this before the read is answered (pending never falls but by a claim). */
  jump: bigint;
  /** The wallet's epoch moves one day on before the read is answered. */
  epochBump: boolean;
  /** Days the wallet's epoch moves by (either way) before the read is answered: a server's calendar that jumps. */
  epochJump: number;
  /** What this one answer says the epoch is: the truth, a date far ahead, or a date that does not exist. */
  epochSays: EpochSays;
  read: ReadSay;
  does: 'apply' | 'skip';
  say: ActionSay;
}

/**
 * Statuses after which this server never applies a signed request. SPEC §2 takes these refusals
 * as "refused before being applied": 429 (a rate limiter answers before the request is handled;
 * the step is re-sent, freshly signed) and 401/403 (the credential was refused; the plan is
 * `failed`, spends no limit, and the rule may fire again once the setup is fixed). A server that
 * applies a request and then answers one of these breaks the contract as surely as one that
 * answers "success" without applying, and no client can tell. So is a 400/422 whose words name
 * the signature, timestamp, headers or auth (SPEC §2 reads it as a refusal of the request): of
 * this grammar's bodies, only the `bearer` echo does (refusesTheRequest). Every other combination
 * of DOES and SAYS stays allowed.
 */
export const TRUSTED_REFUSAL_STATUSES: readonly number[] = [401, 403, 429];

/** Whether this answer refuses the request itself (above): the server never applies it then. */
export function refusesTheRequest(say: ActionSay): boolean {
  return TRUSTED_REFUSAL_STATUSES.includes(say.status) || ((say.status === 400 || say.status === 422) && say.echo?.what === 'bearer');
}

export const HONEST_TURN: Turn = {
  jump: 0n,
  epochBump: false,
  epochJump: 0,
  epochSays: 'true',
  read: { status: 200, body: 'truth', wire: 'whole', echo: undefined },
  does: 'apply',
  say: { status: 200, body: 'honest', claimed: 'true', wire: 'whole', echo: undefined },
};

/** Every secret of one wallet in the forms the server may echo (the test knows them; a real server would not). */
export interface WalletSecrets {
  apiKey: string;
  seed58: string;
  secret58: string;
  seedHex: string;
  secretArray: string;
  seedB64: string;
}

/** An entry of the server's own ledger: a signed request it really applied. */
export interface Applied {
  op: Op;
  address: string;
  signature: string;
  ts: number;
  /** The fake wall clock of the sequence when it was applied (ms). */
  at: number;
  epoch: string;
  /** Claimed lamports (claim) or lamports moved (deposit, mint). */
  lamports: bigint;
  symbol: string | undefined;
  /** Claims: the pending of the last summary fully delivered before this claim, if any. */
  shownBefore: bigint | undefined;
}

export interface WalletSetup {
  address: string;
  secrets: WalletSecrets;
  /** The sequence's fake wall clock. */
  now: () => number;
  pending: bigint;
  script: Turn[];
  /** The client's timeout, to size drips and slow headers. */
  timeoutMs: number;
}

const FILLER =
  'the request could not be processed because the upstream settlement service reported an inconsistency; ' +
  'please retry later or contact support quoting this reference and the fields you sent, which were: ' +
  'content-type application/json, accept application/json, user-agent autoclaim, and then the values ';

export function formatSol(lamports: bigint): string {
  const neg = lamports < 0n;
  const abs = neg ? -lamports : lamports;
  const frac = (abs % SOL).toString().padStart(9, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${abs / SOL}${frac === '' ? '' : `.${frac}`}`;
}

/** Exact decimal SOL text to lamports; undefined unless plain digits with at most 9 decimals. */
export function parseSolText(text: string): bigint | undefined {
  const m = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,9}))?$/.exec(text);
  if (m === null) return undefined;
  return BigInt(m[1] ?? '0') * SOL + BigInt((m[2] ?? '').padEnd(9, '0'));
}

export function is2xx(status: number): boolean {
  return status >= 200 && status < 300;
}

export function echoText(echo: Echo, secrets: WalletSecrets, signature: string | undefined): string {
  const secret: Record<EchoWhat, string> = {
    api_key: secrets.apiKey,
    bearer: `Bearer ${secrets.apiKey}`,
    seed58: secrets.seed58,
    secret58: secrets.secret58,
    seed_hex: secrets.seedHex,
    secret_array: secrets.secretArray,
    seed_b64: secrets.seedB64,
    signature: signature ?? 'no-signature',
  };
  const s = secret[echo.what];
  const formed = echo.form === 'url' ? encodeURIComponent(s) : echo.form === 'quoted' ? JSON.stringify(s) : s;
  return `${FILLER.repeat(2).slice(0, echo.pad)}${formed} (as received)`;
}

