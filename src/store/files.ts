// The state directory and files are created owner-only: the database holds wallet addresses,
// signed requests and the history of every action, which is nobody else's business.
import fs from 'node:fs';
import path from 'node:path';

export const DIR_MODE = 0o700;
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

/** Writes `text` to `file` atomically (temp file + rename), 0600. */
export function writeFileAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode: FILE_MODE });
  fs.renameSync(tmp, file);
}
