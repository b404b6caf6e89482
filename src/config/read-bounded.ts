// Every file the config names is read through here, wallet keys included (keys/keys.ts):
// opened once, fstat'ed on that descriptor, refused above its stated size
// before a byte is read, then read with a bound, so a file that grows between the fstat and the
// read is refused too. A huge sparse key file used to take seconds and gigabytes to fail with a
// RangeError, at `check` and again at every SIGHUP (issue 24, finding 8).
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** The size limits, stated once (README, docs/reliability.md). */
export const FILE_LIMITS = {
  /** A wallet key file (solana-keygen JSON is ~230 bytes). */
  keyFile: 64 * 1024,
  /** A secret in a file: api.api_key_file, state.password_file, a systemd credential, a webhook secret. */
  secretFile: 64 * 1024,
  /** An env file (--env-file, ./.env). */
  envFile: 1024 * 1024,
  /** The config file itself. */
  configFile: 1024 * 1024,
  /** api.wallets_file: 10,000 wallets take about 1 MiB. */
  walletsFile: 64 * 1024 * 1024,
} as const;

export type BoundedRead =
  | { ok: true; bytes: Buffer; mode: number }
  | { ok: false; reason: 'too_big'; size: number }
  | { ok: false; reason: 'not_file' }
  | { ok: false; reason: 'directory' }
  | { ok: false; reason: 'error'; code: string };

/**
 * The bytes of the regular file at `path`, at most `maxBytes` of them. O_NONBLOCK so a FIFO at the
 * path is refused (not a regular file) instead of blocking the open until something writes to it.
 */
export function readBounded(path: string, maxBytes: number): BoundedRead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return { ok: false, reason: 'error', code: (err as NodeJS.ErrnoException).code ?? 'unknown error' };
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) return { ok: false, reason: 'directory' };
    if (!st.isFile()) return { ok: false, reason: 'not_file' };
    if (st.size > maxBytes) return { ok: false, reason: 'too_big', size: st.size };
    // One byte more than allowed tells a file that grew past the limit from one that did not.
    let buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      n += got;
      if (got === 0 || n > maxBytes) break;
      if (n === buf.length) {
        const bigger = Buffer.alloc(Math.min(buf.length * 2, maxBytes + 1));
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
    }
    if (n > maxBytes) return { ok: false, reason: 'too_big', size: Math.max(n, st.size) };
    return { ok: true, bytes: buf.subarray(0, n), mode: st.mode };
  } catch (err) {
    return { ok: false, reason: 'error', code: (err as NodeJS.ErrnoException).code ?? 'unknown error' };
  } finally {
    closeSync(fd);
  }
}

/** "300.0 MiB" / "64 KiB": sizes as an operator reads them. */
export function sizeText(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.ceil(bytes / 1024)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The one sentence for a file above its limit. */
export function tooBigText(what: string, size: number, maxBytes: number): string {
  const article = /^[aeiou]/i.test(what) ? 'an' : 'a';
  return `the file is ${sizeText(size)}; ${article} ${what} above ${sizeText(maxBytes)} is refused before it is read`;
}
