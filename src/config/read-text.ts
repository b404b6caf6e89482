// Reading a text file the config names (the config itself, a wallets_file): bounded in size
// (read-bounded.ts: fstat on the opened descriptor, then a bounded read), UTF-8 or refused, every
// failure one line an operator can act on.
import { readBounded, tooBigText } from './read-bounded.js';

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
  const read = readBounded(absPath, file.maxBytes);
  if (!read.ok) {
    if (read.reason === 'directory') return fail(`this is a directory, not a ${file.what}`);
    if (read.reason === 'not_file') return fail(`this is not a regular file, so not a ${file.what}`);
    if (read.reason === 'too_big') return fail(tooBig(read.size, file));
    if (read.code === 'ENOENT') return fail(`${file.what} not found${file.notFoundHint === undefined ? '' : ` (${file.notFoundHint})`}`);
    if (read.code === 'EACCES') return fail(`the ${file.what} is not readable by this user`);
    return fail(`cannot read the ${file.what} (${read.code})`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(read.bytes);
  } catch {
    return fail(`the ${file.what} is not UTF-8 text`);
  }
}

export function tooBig(bytes: number, file: Pick<TextFile, 'what' | 'maxBytes'>): string {
  return tooBigText(file.what, bytes, file.maxBytes);
}
