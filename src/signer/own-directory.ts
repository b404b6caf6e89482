// The directories only the signer may change: its socket's and its journal's. Whoever else can
// write one — its group (the socket's group is the daemon's, SPEC §7), others, or its owner when
// that is another user — can replace what is in it: the socket by their own or by a symlink, the
// journal and its mark (side by side) by empty ones, so that at the next start every day cap and
// every epoch's claim is signed again.
import { statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { StateError } from '../errors.js';
import { realStatePath } from '../store/sqlite/files.js';

/** Who besides the signer's user (and root) can write a directory with these stats; undefined when nobody. */
export function otherWriters(st: Pick<Stats, 'mode' | 'uid'>): string | undefined {
  const mode = (st.mode & 0o7777).toString(8);
  if ((st.mode & 0o002) !== 0) return `is writable by others (mode ${mode})`;
  if ((st.mode & 0o020) !== 0) return `is writable by its group (mode ${mode}; the daemon is in the signer socket's group)`;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid && st.uid !== 0) return `belongs to another user (uid ${st.uid})`;
  return undefined;
}

export const OWN_DIRECTORY_FIX = "use a directory of the signer's own, writable by it alone (systemd: RuntimeDirectory= and StateDirectory=, as in systemd/autoclaim-signer.service)";

/**
 * STATE_UNSAFE when the directory `file` is (or will be) in can be written by someone besides the
 * signer: the journal and its mark side by side there could be deleted together, and the next
 * start would sign every day cap and every epoch's claim again. A directory not there yet is made
 * 0700 (ensureFile) or fails the open.
 */
export function assertOwnDirectory(file: string, what: string): void {
  const dir = dirname(realStatePath(file));
  let writers: string | undefined;
  try {
    writers = otherWriters(statSync(dir));
  } catch {
    return;
  }
  if (writers !== undefined) throw new StateError('STATE_UNSAFE', `${what}: its directory ${dir} ${writers}, who could delete the journal and its mark and so have every cap signed again; ${OWN_DIRECTORY_FIX}`);
}
