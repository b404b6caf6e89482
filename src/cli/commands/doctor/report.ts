// What `doctor` found, as data: the command prints it as text or JSON, tests assert on it.
// A problem is something to change before `run` (exit 1); a warning is a guess autoclaim made
// that the service may not share (a default like api.header_prefix against a real service): exit 1
// unless `--accept-defaults`; a note is worth knowing and harmless.

type Level = 'ok' | 'note' | 'warning' | 'problem';
type Area = 'reach' | 'clock' | 'limits' | 'keys' | 'wallets' | 'signing' | 'state';

export interface Finding {
  area: Area;
  level: Level;
  /** One line. For a problem it says what to change. */
  text: string;
}

/** A signed request as it would be sent; `doctor` never sends it. */
export interface RequestPreview {
  op: string;
  method: string;
  url: string;
  /** Every header, the bearer shown as `Bearer [REDACTED]`: never any part of the key. */
  headers: Record<string, string>;
  template: string;
  message: string;
  body: string;
  notes: string[];
}

export interface WalletSeen {
  name: string;
  address: string;
  /** HTTP status of the summary read; undefined when it was not read or not answered. */
  status: number | undefined;
  epoch: string | undefined;
  pendingSol: string | undefined;
  rank: number | null | undefined;
  tier: string | null | undefined;
  roundedFields: string[];
  unknownFields: string[];
}

export interface DoctorReport {
  baseUrl: string;
  findings: Finding[];
  /** Server clock minus ours (ms), from the Date header; undefined when none was seen. */
  clockSkewMs: number | undefined;
  /** Rate-limit headers the server sent (last value seen for each name). */
  rateLimitHeaders: Record<string, string>;
  /** `x-request-id` of each answer, by what was asked ("GET /health"). */
  requestIds: Array<{ request: string; id: string }>;
  wallets: WalletSeen[];
  /** Who, what and when the previews below are for. */
  sample: { wallet: string; address: string; symbol: string; amount: string; ts: number } | undefined;
  requests: RequestPreview[];
  /** `--probe`: what the service said to each signed operation signed with a wrong key (sent). */
  probes?: Array<{ op: string; status: number | undefined; code: string | undefined; serverMessage: string | undefined; requestId: string | undefined; hint: string }>;
}

export function problems(report: DoctorReport): string[] {
  return report.findings.filter((f) => f.level === 'problem').map((f) => f.text);
}

export function warnings(report: DoctorReport): string[] {
  return report.findings.filter((f) => f.level === 'warning').map((f) => f.text);
}

/** No problem, and no warning unless the operator accepts the defaults (`--accept-defaults`). */
export function isAllWell(report: DoctorReport, opts: { acceptDefaults?: boolean } = {}): boolean {
  return problems(report).length === 0 && (opts.acceptDefaults === true || warnings(report).length === 0);
}

/** A value a server controls, made one printable line of bounded length before it is shown. */
export function printable(text: string, max = 128): string {
  const flat = text.replace(/[^\x20-\x7e]/g, '?');
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}

export type Headers = Record<string, string | string[] | undefined>;

export function headerText(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  const text = Array.isArray(v) ? v.join(', ') : v;
  return text === undefined || text === '' ? undefined : text;
}
