// The state directory and files are created owner-only: the database holds wallet addresses,
// signed requests and the history of every action, which is nobody else's business.
import fs from 'node:fs';
import path from 'node:path';

const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** Creates `dir` (and missing parents) as 0700. An existing directory is left as the operator made it. */
export function ensureDir(dir: string): void {
  if (fs.existsSync(dir)) return;
  fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  // mkdir's mode passes through the umask, which can only remove bits; chmod states it exactly.
  fs.chmodSync(dir, DIR_MODE);
}

/** Creates `file` empty as 0600 unless it exists. Returns true when it was created. */
export function ensureFile(file: string): boolean {
  ensureDir(path.dirname(file));
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    fs.fchmodSync(fd, FILE_MODE);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

/**
 * Writes `text` to `file` atomically (temp file + rename), 0600. The temporary name is made afresh
 * (O_EXCL follows no link): run as root in the service's state directory, a link its user left
 * at that guessable name would otherwise have root write through it, and a file left there keep
 * its own mode. `toDirOwner`: written by root into a directory another user owns, the file is
 * handed to that owner (service/control.ts: a record the daemon's user must read and replace).
 */
export function writeFileAtomic(file: string, text: string, opts: { toDirOwner?: boolean } = {}): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.rmSync(tmp, { force: true });
  const fd = fs.openSync(tmp, 'wx', FILE_MODE);
  try {
    if (opts.toDirOwner === true && process.getuid?.() === 0) {
      const owner = fs.statSync(path.dirname(file));
      if (owner.uid !== 0) fs.fchownSync(fd, owner.uid, owner.gid);
    }
    fs.writeFileSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

/**
 * The one name of the file `file` denotes, however it is spelled: symlinks (of the file and of
 * its directories) and `.`/`..` resolved, as SQLite resolves them to place its `-wal` and `-shm`.
 * The file, and its directory, need not exist yet: a dangling symlink resolves to where its
 * target would be, a missing directory to its nearest existing ancestor plus the rest.
 */
export function realStatePath(file: string): string {
  // Not path.resolve: it folds `link/..` by text, where the kernel (and SQLite) follow `link` first.
  return resolveReal(file, 0);
}

/** Linux gives up after 40 links (ELOOP); so do we. */
const MAX_LINKS = 40;

function resolveReal(p: string, depth: number): string {
  try {
    // .native: the JS realpathSync folds `..` by text first (path.resolve), as the kernel does not.
    return fs.realpathSync.native(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  let target: string | undefined;
  try {
    target = fs.readlinkSync(p);
  } catch {
    // Not a symlink, or not there at all: resolve the directory and keep the name.
  }
  if (target !== undefined) {
    if (depth >= MAX_LINKS) throw Object.assign(new Error(`too many levels of symbolic links at ${p}`), { code: 'ELOOP' });
    return resolveReal(path.isAbsolute(target) ? target : `${path.dirname(p)}${path.sep}${target}`, depth + 1);
  }
  const dir = path.dirname(p);
  // Below a directory that does not exist nothing can be a link, so the rest joins as text.
  if (dir === p) return path.resolve(p);
  return path.join(resolveReal(dir, depth), path.basename(p));
}
