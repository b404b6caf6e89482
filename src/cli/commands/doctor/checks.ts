// The checks behind `doctor`, each a small function of what was seen (a status, headers, a body,
// an error, a skew): no I/O here, so each can be tested with a table of cases.
import { formatSol, parseServerSol } from '../../../amount.js';
import { isLosslessNumber, parseJsonLossless } from '../../../api/json.js';
import { parseWalletSummary, roundedAmountFields, walletSummarySchema } from '../../../api/schemas.js';
import { ApiError, AutoclaimError } from '../../../errors.js';
import { headerText, printable, type Finding, type Headers, type WalletSeen } from './report.js';

const ok = (area: Finding['area'], text: string): Finding => ({ area, level: 'ok', text });
const note = (area: Finding['area'], text: string): Finding => ({ area, level: 'note', text });
const problem = (area: Finding['area'], text: string): Finding => ({ area, level: 'problem', text });

// ------------------------------------------------------------------------------------------------
// reaching the service

// Node's and OpenSSL's names for a handshake or certificate that failed.
const TLS_CODE = /^(CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_TLS_|ERR_SSL_|EPROTO$|HOSTNAME_MISMATCH)/;

function errorCodes(err: unknown): string[] {
  const out: string[] = [];
  const seen = new Set<unknown>();
  let e: unknown = err;
  while (typeof e === 'object' && e !== null && !seen.has(e) && out.length < 8) {
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') out.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  return out;
}

/** The reason of a failed exchange without the "GET url :" the ApiError message starts with. */
function reasonOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const at = text.indexOf(' : ');
  return printable(at >= 0 ? text.slice(at + 3) : text, 200);
}

/** The name did not resolve: nothing else can be tried. */
export function dnsFailure(baseUrl: string, host: string, err: unknown): Finding {
  const code = errorCodes(err)[0] ?? 'error';
  return problem('reach', `cannot reach ${baseUrl}: the host name ${host} does not resolve (DNS ${code}); check the host in api.base_url`);
}

export function dnsResolved(host: string, addresses: string[]): Finding {
  const shown = addresses.slice(0, 3).join(', ') + (addresses.length > 3 ? `, +${addresses.length - 3}` : '');
  return ok('reach', `DNS: ${host} resolves to ${shown}`);
}

/** GET /health did not get an answer at all. */
export function reachFailure(baseUrl: string, err: unknown): Finding {
  const tls = errorCodes(err).find((c) => TLS_CODE.test(c));
  if (tls !== undefined) {
    return problem(
      'reach',
      `cannot reach ${baseUrl}: the TLS handshake failed (${tls}); check the host and port in api.base_url and the server's certificate`,
    );
  }
  return problem(
    'reach',
    `cannot reach ${baseUrl}: ${reasonOf(err)}; check api.base_url (scheme, host, port) and that the service is up`,
  );
}

/** GET /health answered: any 2xx is healthy (SPEC §1); its body is shown when it is the documented one. */
export function healthFinding(status: number, rawText: string, elapsedMs: number, https: boolean): Finding {
  const took = `${Math.round(elapsedMs)} ms`;
  if (status >= 200 && status < 300) {
    const said = healthFields(rawText);
    return ok('reach', `GET /health: HTTP ${status} in ${took}${https ? ' over TLS' : ''}${said === '' ? '' : ` (${said})`}`);
  }
  if (status === 404) {
    return problem('reach', 'GET /health: HTTP 404; api.base_url must end in the version prefix, e.g. https://host/v1');
  }
  return problem('reach', `GET /health: HTTP ${status} in ${took}; the service says it is not healthy: try later, or ask its support`);
}

function healthFields(rawText: string): string {
  let body: unknown;
  try {
    body = parseJsonLossless(rawText);
  } catch {
    return '';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body) || isLosslessNumber(body)) return '';
  const rec = body as Record<string, unknown>;
  return ['status', 'network']
    .filter((k) => typeof rec[k] === 'string')
    .map((k) => `${k} ${printable(rec[k] as string, 40)}`)
    .join(', ');
}

// ------------------------------------------------------------------------------------------------
// clock, limits, request ids

/**
 * The server's Date against our clock. Date has a resolution of one second, so a second or two is
 * noise; past `thresholdMs` (alerts.clock_skew) signed timestamps risk being refused as stale.
 */
export function clockSkewFinding(skewMs: number | undefined, thresholdMs: number): Finding {
  if (skewMs === undefined) {
    return note('clock', "the server sent no Date header: clock skew unknown (keep this machine's clock synced, e.g. NTP)");
  }
  // Date is cut to the second, so a skew is known to about a second: minutes past two of them.
  const seconds = Math.round(Math.abs(skewMs) / 1000);
  const size = seconds < 120 ? `${seconds}s` : `about ${Math.round(seconds / 60)}m`;
  // skew = server minus ours: a positive skew means our clock is behind.
  const where = skewMs > 0 ? 'behind' : 'ahead of';
  if (Math.abs(skewMs) > thresholdMs) {
    return problem(
      'clock',
      `this machine's clock is ${size} ${where} the server's (its Date header); signed timestamps will be refused as stale: ` +
        'sync the clock (e.g. timedatectl set-ntp true)',
    );
  }
  if (Math.abs(skewMs) > 2_000) return note('clock', `this machine's clock is ${size} ${where} the server's (within alerts.clock_skew)`);
  return ok('clock', "this machine's clock agrees with the server's Date (to the second it can tell)");
}

const RATE_LIMIT_HEADER = /^(x-ratelimit-|x-rate-limit-|ratelimit(-|$)|retry-after$)/i;

/** The rate-limit headers of one answer (no names are documented; these are the common ones). */
export function rateLimitHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers).sort()) {
    const text = RATE_LIMIT_HEADER.test(name) ? headerText(headers, name) : undefined;
    if (text !== undefined) out[name.toLowerCase()] = printable(text, 80);
  }
  return out;
}

export function rateLimitFinding(seen: Record<string, string>, limit: { perMinute: number; burst: number }): Finding {
  const ours = `api.rate_limit allows ${limit.perMinute}/min, burst ${limit.burst}`;
  const names = Object.keys(seen);
  if (names.length === 0) return ok('limits', `no rate-limit headers (none are documented); ${ours}`);
  return note('limits', `rate-limit headers: ${names.map((n) => `${n}: ${seen[n]}`).join(', ')}; ${ours}`);
}

export function requestIdOf(headers: Headers): string | undefined {
  const text = headerText(headers, 'x-request-id');
  return text === undefined ? undefined : printable(text);
}

export function requestIdFinding(ids: Array<{ request: string; id: string }>, answers: number): Finding | undefined {
  if (answers === 0) return undefined;
  const last = ids.at(-1);
  if (last === undefined) {
    return note('reach', 'no x-request-id on any answer (the real service sends one on every answer, to quote to its support)');
  }
  return ok('reach', `x-request-id on ${ids.length} of ${answers} answer(s), e.g. ${last.id} (${last.request})`);
}

// ------------------------------------------------------------------------------------------------
// wallet summaries

const KNOWN_SUMMARY_FIELDS: readonly string[] = Object.keys(walletSummarySchema.out.shape);

interface SummaryAnswer {
  url: string;
  status: number;
  rawText: string;
}

/** A wallet summary as read: what it says, and everything odd about how it says it. */
export function summaryFindings(name: string, address: string, answer: SummaryAnswer): { wallet: WalletSeen; findings: Finding[] } {
  const wallet: WalletSeen = {
    name,
    address,
    status: answer.status,
    epoch: undefined,
    pendingSol: undefined,
    rank: undefined,
    tier: undefined,
    roundedFields: [],
    unknownFields: [],
  };
  const who = `wallet ${name}`;
  if (answer.status === 401 || answer.status === 403) {
    return {
      wallet,
      findings: [
        problem(
          'wallets',
          `${who}: the summary read was refused (HTTP ${answer.status}); check the API key, or set api.auth_reads: false if reads go without it`,
        ),
      ],
    };
  }
  if (answer.status === 404) {
    return { wallet, findings: [problem('wallets', `${who}: HTTP 404 for ${address}; check the address and api.base_url's version prefix`)] };
  }
  if (answer.status === 429) {
    return { wallet, findings: [note('wallets', `${who}: rate limited (HTTP 429) before its summary was read; run doctor again in a minute`)] };
  }
  if (answer.status < 200 || answer.status >= 300) {
    return { wallet, findings: [problem('wallets', `${who}: the summary read answered HTTP ${answer.status}; try later, or ask the service's support`)] };
  }
  let raw: unknown;
  try {
    raw = parseJsonLossless(answer.rawText);
  } catch {
    return { wallet, findings: [problem('wallets', `${who}: the summary is not JSON; check that api.base_url points at the API`)] };
  }
  try {
    const s = parseWalletSummary(raw, address, { method: 'GET', url: answer.url, status: answer.status, rawBody: answer.rawText });
    Object.assign(wallet, { epoch: s.epoch, pendingSol: formatSol(s.pendingLamports), rank: s.rank, tier: s.tier });
  } catch (err) {
    const issues = err instanceof ApiError && err.issues.length > 0 ? err.issues.join('; ') : reasonOf(err);
    return {
      wallet,
      findings: [problem('wallets', `${who}: the summary does not fit what autoclaim reads (${printable(issues, 300)}); every poll of it would fail`)],
    };
  }
  const rec = raw as Record<string, unknown>;
  const findings: Finding[] = [
    ok(
      'wallets',
      `${who}: epoch ${wallet.epoch}, pending ${wallet.pendingSol} SOL, rank ${wallet.rank ?? 'none'}, tier ${wallet.tier === null ? 'none' : printable(wallet.tier ?? '', 40)}`,
    ),
  ];
  const rankText = isLosslessNumber(rec['rank']) ? rec['rank'].value : typeof rec['rank'] === 'string' ? rec['rank'] : undefined;
  if (rankText !== undefined && /^0+$/.test(rankText)) findings.push(note('wallets', `${who}: rank 0, read as unranked`));
  wallet.roundedFields = roundedAmountFields(raw);
  for (const field of wallet.roundedFields) {
    const text = numberText(rec[field]);
    if (text === undefined) continue;
    findings.push(
      note('wallets', `${who}: ${field} written as ${printable(text, 60)}, read as ${formatSol(parseServerSol(text).lamports)} SOL (rounded toward zero to the lamport)`),
    );
  }
  wallet.unknownFields = Object.keys(rec).filter((k) => !KNOWN_SUMMARY_FIELDS.includes(k));
  if (wallet.unknownFields.length > 0) {
    findings.push(note('wallets', `${who}: fields autoclaim does not use, kept as sent: ${wallet.unknownFields.map((k) => printable(k, 40)).join(', ')}`));
  }
  return { wallet, findings };
}

function numberText(v: unknown): string | undefined {
  if (isLosslessNumber(v)) return v.value;
  return typeof v === 'string' ? v : undefined;
}

/** The tiers the service wrote, as it wrote them: rules compare them without regard to case. */
export function tiersFinding(wallets: WalletSeen[]): Finding | undefined {
  const tiers = [...new Set(wallets.map((w) => w.tier).filter((t): t is string => typeof t === 'string' && t !== ''))];
  if (tiers.length === 0) return undefined;
  return ok('wallets', `tiers seen: ${tiers.map((t) => printable(t, 40)).join(', ')} (rules compare tiers without regard to case)`);
}

// ------------------------------------------------------------------------------------------------
// keys

export type ApiKeyState =
  | { kind: 'present'; source: string }
  | { kind: 'sandbox' }
  | { kind: 'missing' }
  | { kind: 'unusable'; message: string };

export function apiKeyFinding(state: ApiKeyState): Finding {
  switch (state.kind) {
    case 'present':
      return ok('keys', `API key from ${state.source} (shown below only as Bearer [REDACTED])`);
    case 'sandbox':
      return ok('keys', 'API key: none set; the sandbox makes up its own for this process');
    case 'missing':
      return problem(
        'keys',
        'no API key: set $AUTOCLAIM_API_KEY, api.api_key_file, or the systemd credential api_key (signed requests are refused without it)',
      );
    case 'unusable':
      return problem('keys', state.message);
  }
}

/** A wallet whose key did not load or does not derive its address, with what to change. */
export function walletKeyProblem(name: string, err: unknown): Finding {
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof AutoclaimError ? err.code : undefined;
  const fix =
    code === 'KEY_MISMATCH'
      ? `; point wallet ${name} at its own key, or correct its address`
      : code === 'KEY_PERMISSIONS'
        ? ''
        : `; fix wallet ${name}'s key source`;
  const head = message.startsWith(`wallet ${name}`) ? message : `wallet ${name}: ${message}`;
  return problem('keys', `${head}${fix}`);
}

/** A wallet whose signer is usable: which backend signs, and (remote) that it answered. Also `check`'s line. */
export function walletKeyOk(name: string, address: string, backend?: string): Finding {
  if (backend === undefined) return ok('keys', `wallet ${name}: its key derives ${address}`);
  if (backend === 'file' || backend === 'env' || backend === 'credential') return ok('keys', `wallet ${name}: its key derives ${address} (signed in-process, key from ${backend})`);
  return ok('keys', `wallet ${name}: signed by ${backend}, which answered and whose key derives ${address}`);
}
