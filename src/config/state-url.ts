// state.url: the PostgreSQL state several daemons share (issue 15), checked as text before anything
// connects. The password never sits in it.
/**
 * A PostgreSQL URL with no password in it: a URL ends up in process listings, logs and shell
 * history, so the password comes from PGPASSWORD, state.password_file or the credential.
 */
export function stateUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'not a URL; expected postgres://user@host:port/database';
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') return `scheme ${url.protocol} is not postgres: (expected postgres://user@host:port/database)`;
  if (url.password !== '' || url.searchParams.has('password')) {
    return 'holds a password; remove it and use PGPASSWORD, state.password_file (mode 0600) or the systemd credential state_password';
  }
  if (url.pathname === '' || url.pathname === '/') return 'names no database (postgres://user@host:port/database)';
  return undefined;
}
