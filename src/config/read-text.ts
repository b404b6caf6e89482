// Reading a text file the config names (the config itself, a wallets_file): bounded in size,
// UTF-8 or refused, every failure one line an operator can act on.
import { readFileSync, statSync } from 'node:fs';

export interface TextFile {
  /** What the file is, in messages: "config file", "wallets file". */
  what: string;
  maxBytes: number;
  /** Added to "not found": where such a file is looked for. */
  notFoundHint?: string;
}

/** The file's text, or a message saying why it cannot be had. */
export function readTextFile(absPath: string, file: TextFile): string | { problem: string } {
  const fail = (problem: string) => ({ problem });
  let bytes: Buffer;
  try {
    const st = statSync(absPath);
    if (st.isDirectory()) return fail(`this is a directory, not a ${file.what}`);
    if (st.size > file.maxBytes) return fail(tooBig(st.size, file));
    bytes = readFileSync(absPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return fail(`${file.what} not found${file.notFoundHint === undefined ? '' : ` (${file.notFoundHint})`}`);
    if (code === 'EACCES') return fail(`the ${file.what} is not readable by this user`);
    return fail(`cannot read the ${file.what} (${code ?? 'unknown error'})`);
  }
  // It may have grown between stat and read.
  if (bytes.length > file.maxBytes) return fail(tooBig(bytes.length, file));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fail(`the ${file.what} is not UTF-8 text`);
  }
}

export function tooBig(bytes: number, file: Pick<TextFile, 'what' | 'maxBytes'>): string {
  return `the file is ${mib(bytes)}; a ${file.what} above ${mib(file.maxBytes)} is refused`;
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
