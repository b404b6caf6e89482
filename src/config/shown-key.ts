// A key the operator wrote is quoted back in a config issue ("unknown key …", the issue's path) only
// when it reads as a setting's name. A secret pasted into the YAML as a key name (`<api key>: 1`)
// is refused like any unknown key, but its text must not be carried by the issue: a reload's issue
// list goes to the log and to every notification channel, and a secret the daemon has not loaded
// (a new key the refused config names, or one it never knew) is not registered with the Redactor,
// so redaction alone cannot scrub it. Setting names are short words; secrets are long and mix
// letters with digits.
import { formatPath } from '../json.js';

const NAME_LIKE = /^[A-Za-z_][A-Za-z0-9_.-]{0,39}$/;

/** What an issue says in place of a key not shown. */
export const HIDDEN_KEY = '(a key that looks like a secret, not shown)';

/** True when `key` may be quoted in an issue. */
export function keyShown(key: string): boolean {
  if (key === '<<') return true; // a merge key, refused by name at its place (load.ts)
  if (!NAME_LIKE.test(key)) return false;
  // 20+ characters mixing letters and digits: an API key, a token, an encoded key; no setting looks so.
  return !(key.length >= 20 && /[0-9]/.test(key) && /[A-Za-z]/.test(key));
}

/** formatPath for an issue: keys that may be secrets replaced by HIDDEN_KEY. */
export function issuePath(path: readonly PropertyKey[]): string {
  return formatPath(path.map((seg) => (typeof seg === 'string' && !keyShown(seg) ? HIDDEN_KEY : seg)));
}

/** What a message says in place of a path not shown. */
export const HIDDEN_PATH = '(a name that reads as a secret, not shown)';

/**
 * A secret's file or credential name (api_key_file, a wallet's key file, a channel's secret file) as
 * a message may quote it. A secret pasted where its name goes (`api_key_file: <the key>`, a Slack URL
 * as `url: { file: ... }`) was never read, so the redactor does not know it, and "cannot be read"
 * would quote it to the log and, at a refused reload, to every channel: a path is shown only when
 * its last part reads as a name (keyShown) and none of it is a URL's scheme. The issue still names
 * the file, line and key it was written at.
 */
export function shownPath(path: string): string {
  const parts = path.split(/[\\/]+/);
  const last = parts[parts.length - 1] ?? '';
  const url = parts.some((p) => /^[A-Za-z][A-Za-z0-9+.-]*:$/.test(p));
  return !url && (last === '' || keyShown(last)) ? path : HIDDEN_PATH;
}
