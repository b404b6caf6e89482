// state.url: the PostgreSQL state several daemons share (issue 15), checked as text before anything
// connects. The password never sits in it.
import { isLoopback } from '../loopback.js';

/** What checkStateUrl found: an error that refuses the URL, or a warning beside a URL that loads. */
export type StateUrlCheck = { error: string } | { warning: string } | undefined;

/**
 * A PostgreSQL URL with no password in it: a URL ends up in process listings, logs and shell
 * history, so the password comes from PGPASSWORD, state.password_file or the credential.
 *
 * Warned of, not refused: a URL that reaches another machine with TLS left off by default
 * (node-postgres, unlike libpq, never tries it unasked). The plans, leases and caps that the
 * exactly-once guards read would cross the network readable and alterable by whoever sits on the
 * path; but a private network may be meant, and `sslmode=disable` says so.
 */
export function checkStateUrl(text: string): StateUrlCheck {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: 'not a URL; expected postgres://user@host:port/database' };
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') return { error: `scheme ${url.protocol} is not postgres: (expected postgres://user@host:port/database)` };
  const q = url.searchParams;
  if (url.password !== '' || q.has('password')) {
    return { error: 'holds a password; remove it and use PGPASSWORD, state.password_file (mode 0600) or the systemd credential state_password' };
  }
  if (url.pathname === '' || url.pathname === '/') return { error: 'names no database (postgres://user@host:port/database)' };
  // libpq's host= (a socket directory, or a host) wins over the URL's.
  const host = q.get('host') ?? url.hostname;
  if (host === '' || host.startsWith('/') || isLoopback(host)) return undefined;
  const tlsAsked = ['sslmode', 'ssl', 'sslcert', 'sslkey', 'sslrootcert'].some((k) => q.has(k)) || q.get('sslnegotiation') === 'direct';
  if (tlsAsked) return undefined;
  return { warning: `reaches ${host} without TLS: the state the exactly-once guards read would cross the network readable and alterable on the way; add ?sslmode=verify-full (sslmode=disable if a private network is meant)` };
}
