// The webhook URL: where it comes from ($AUTOCLAIM_WEBHOOK_URL or the systemd credential
// webhook_url; it is a secret, since Slack and Discord URLs are bearer tokens) and whether autoclaim
// will post to it. Checked by `check`, at start and on every reload (a config.invalid issue, exit 78
// at start), with a message that names where the URL came from and never the URL.
//
// Accepted: https to any host; http only to a loopback address (127.0.0.0/8, ::1, localhost), where
// nothing crosses a network. Refused: anything that is not an absolute http(s) URL (`file:`, a
// typo, a bare host), plain http to any other host (the notices and the URL's token would cross the
// network in clear), and link-local addresses — 169.254.0.0/16 and fe80::/10, where the cloud
// metadata services live (169.254.169.254, fd00:ec2::254 and metadata.google.internal too) — unless
// alerts.webhook.allow_link_local says so: a webhook there is far likelier a mistake or an attempt to
// make the daemon talk to its host's credentials service than a receiver. A host name is judged as
// written; what it resolves to later is not checked here.
import { join } from 'node:path';
import { FILE_LIMITS, readBounded } from './read-bounded.js';

export interface WebhookUrlSource {
  url: string;
  /** How a message names it: `$AUTOCLAIM_WEBHOOK_URL` or `the systemd credential webhook_url`. */
  what: string;
  /** Set when the credential is there but cannot be used (too large, not a file): why. */
  unreadable?: string;
}

/** The webhook URL and where it came from; undefined when none is set (an empty credential is none). */
export function resolveWebhookUrl(env: NodeJS.ProcessEnv): WebhookUrlSource | undefined {
  const fromEnv = env.AUTOCLAIM_WEBHOOK_URL?.trim();
  if (fromEnv) return { url: fromEnv, what: '$AUTOCLAIM_WEBHOOK_URL' };
  const dir = env.CREDENTIALS_DIRECTORY;
  if (dir === undefined || dir === '') return undefined;
  const what = 'the systemd credential webhook_url';
  const read = readBounded(join(dir, 'webhook_url'), FILE_LIMITS.secretFile);
  if (read.ok) {
    const text = read.bytes.toString('utf8').trim();
    return text === '' ? undefined : { url: text, what };
  }
  if (read.reason === 'error' && read.code === 'ENOENT') return undefined;
  // There, but not usable: refused (exit 78) rather than read whole or taken for "no webhook".
  const why = read.reason === 'too_big' ? `is ${read.size} bytes, over the ${FILE_LIMITS.secretFile}-byte limit of a secret file; refused before it is read` : read.reason === 'error' ? `cannot be read (${read.code})` : 'is not a regular file';
  return { url: '', what, unreadable: why };
}

/** fd00:ec2::254, EC2's IMDS over IPv6. */
const AWS_METADATA_V6 = [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254];
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata', 'metadata.azure.internal', 'instance-data', 'instance-data.ec2.internal']);

/**
 * Why the URL is refused, in words that never quote it; undefined when it is accepted.
 * `allowLinkLocal` is alerts.webhook.allow_link_local.
 */
export function webhookUrlProblem(url: string, allowLinkLocal: boolean): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'is not a URL (expected https://HOST/PATH)';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return `uses ${u.protocol.replace(/:$/, '')}: a webhook is https (or http to this machine's loopback)`;
  // WHATWG URL has already normalised the host: IPv4 in any spelling (decimal, hex, octal) is dotted
  // quads, IPv6 is compressed and bracketed, names are lower case.
  const host = u.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (host === '') return 'has no host';
  const v4 = ipv4(host);
  const v6 = v4 === undefined ? ipv6(host) : undefined;
  const loopback = host === 'localhost' || host.endsWith('.localhost') || (v4 !== undefined && v4[0] === 127) || (v6 !== undefined && isV6Loopback(v6));
  if (u.protocol === 'http:' && !loopback) {
    return 'is plain http to a host that is not this machine: the notices (and any token in the URL) would cross the network in clear; use https';
  }
  const mapped = v6 !== undefined ? mappedV4(v6) : undefined;
  const four = v4 ?? mapped;
  const linkLocal =
    (four !== undefined && four[0] === 169 && four[1] === 254) ||
    (four !== undefined && four[0] === 100 && four[1] === 100 && four[2] === 100 && four[3] === 200) || // Alibaba Cloud metadata
    (v6 !== undefined && mapped === undefined && ((v6[0] ?? 0) & 0xffc0) === 0xfe80) ||
    (v6 !== undefined && v6.every((g, i) => g === AWS_METADATA_V6[i])) ||
    METADATA_HOSTS.has(host);
  if (linkLocal && !allowLinkLocal) {
    return 'points at a link-local or cloud metadata address; refused unless alerts.webhook.allow_link_local is true';
  }
  return undefined;
}

function ipv4(host: string): number[] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (m === null) return undefined;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : undefined;
}

/** Eight 16-bit groups of an IPv6 address as WHATWG URL prints it; undefined for anything else. */
function ipv6(host: string): number[] | undefined {
  if (!host.includes(':')) return undefined;
  const [head = '', tail] = host.split('::');
  const parse = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const a = parse(head);
  const b = tail === undefined ? [] : parse(tail);
  const groups = tail === undefined ? a : [...a, ...new Array<number>(8 - a.length - b.length).fill(0), ...b];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

function isV6Loopback(g: number[]): boolean {
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return true;
  const m = mappedV4(g);
  return m !== undefined && m[0] === 127;
}

/** ::ffff:a.b.c.d, the IPv4 address inside. */
function mappedV4(g: number[]): number[] | undefined {
  if (!(g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff)) return undefined;
  const hi = g[6] ?? 0;
  const lo = g[7] ?? 0;
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
}
