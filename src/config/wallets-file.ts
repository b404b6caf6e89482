// wallets_file: the wallets of a large fleet, kept out of the YAML in a JSON Lines side file (one
// `wallets:` entry per line). Generated lists are big: 10,000 wallets do not fit the YAML's 1 MiB
// cap in block style, and a positioned YAML Document of them costs far more time and memory than
// parsing each line as JSON. Each line is checked here, as it is read, with the schema of a
// `wallets:` entry and the literal-secret scan; the wallets then follow the inline ones (load.ts),
// so resolving and every cross-check see one list. A problem in a line is placed at that line.
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse } from 'lossless-json';
import { type ConfigSource, type IssueList, type Path, type Position, type SideFile } from './positions.js';
import { WalletSchema, type RawWallet } from './schema.js';
import { readTextFile } from './read-text.js';
import { FILE_LIMITS } from './read-bounded.js';
import { findLiteralSecrets } from './secrets.js';
import { describeValue, errorMap, reportSchemaProblems } from './zod-issues.js';

/** Far above any fleet (about 500,000 wallets of 130 bytes); anything bigger is the wrong file. */
export const MAX_WALLETS_FILE_BYTES = FILE_LIMITS.walletsFile;
/**
 * After this many lines that are not valid wallets, or once errors are no longer listed, the rest
 * is not read: it is most likely the wrong file (the daemon's own JSON log, say), and checking
 * every line of a 64 MiB one took minutes and gigabytes.
 */
export const MAX_BAD_LINES = 50;

interface WalletsFileContext {
  /** The config file as shown in messages, and its absolute path. */
  file: string;
  absFile: string;
  source: ConfigSource;
  issues: IssueList;
}

export interface WalletsFromFile {
  /**
   * The side file's wallets as the schema gave them, to be listed after the inline ones; undefined
   * for a line that is not a valid wallet (reported), so that entry k stays line k's wallet.
   */
  wallets: Array<RawWallet | undefined>;
  /** Where the side file's wallets start in the list and the directory their paths are relative to. */
  walletsFile: { dir: string; firstIndex: number } | undefined;
}

/**
 * Reads and checks the wallets of `wallets_file`, reporting a side file that cannot be read and
 * every line that is not a valid wallet. Also where "no wallets at all" is reported: only here
 * are both places to list them known.
 */
export function walletsFromFile(data: unknown, ctx: WalletsFileContext): WalletsFromFile {
  const none: WalletsFromFile = { wallets: [], walletsFile: undefined };
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return none; // the schema says what is wrong
  const { wallets_file: given, wallets: inline } = data as Record<string, unknown>;
  // A `wallets:` that is not a list is the schema's to report; it counts as none here.
  const inlineCount = Array.isArray(inline) ? inline.length : 0;
  const inlineIsList = inline === undefined || Array.isArray(inline);
  if (given === undefined) {
    if (inline === undefined) {
      ctx.issues.error(['wallets'], 'required: at least one wallet to watch: list them under wallets:, or name a JSON Lines file of them with wallets_file:');
    } else if (inlineIsList && inlineCount === 0) {
      ctx.issues.error(['wallets'], 'at least one wallet is needed');
    }
    return none;
  }
  if (typeof given !== 'string' || given === '') return none; // the schema's message

  // Relative to the config's directory, like every path in it; shown relative to where the config
  // was named from, so the name in a message opens the file from the operator's shell.
  const absPath = resolve(dirname(ctx.absFile), given);
  const shown = isAbsolute(given) ? given : join(dirname(ctx.file), given);
  const text = readWalletsFile(absPath, shown);
  if (typeof text !== 'string') {
    ctx.issues.error(['wallets_file'], text.problem);
    return none;
  }

  const firstIndex = inlineCount;
  const lines = new WalletLines(shown, firstIndex, text);
  ctx.source.addWalletsFile(lines);
  const { wallets, bad } = lines.read(new LineChecker(ctx.issues, firstIndex));
  if (bad === 0 && inlineIsList && firstIndex + wallets.length === 0) {
    ctx.issues.error(['wallets_file'], `${shown} lists no wallets${inline === undefined ? '' : ', nor does wallets:'}; at least one wallet is needed`);
  }
  return { wallets, walletsFile: { dir: dirname(absPath), firstIndex } };
}

function readWalletsFile(absPath: string, shown: string): string | { problem: string } {
  const text = readTextFile(absPath, { what: 'wallets file', maxBytes: MAX_WALLETS_FILE_BYTES });
  return typeof text === 'string' ? text : { problem: `${shown}: ${text.problem}` };
}

/** Checks each line's JSON value as a wallet and reports what is wrong with it; counts bad lines. */
class LineChecker {
  bad = 0;

  constructor(
    readonly issues: IssueList,
    private readonly firstIndex: number,
  ) {}

  /** The wallet of entry `k`, or undefined when the line is not one (reported). */
  wallet(k: number, parsed: ParsedLine, at: (index: number) => Position): RawWallet | undefined {
    const wallet = this.check(['wallets', this.firstIndex + k], parsed, at);
    if (wallet === undefined) this.bad++;
    return wallet;
  }

  private check(path: Path, parsed: ParsedLine, at: (index: number) => Position): RawWallet | undefined {
    if ('problem' in parsed) {
      this.issues.errorAt(at(parsed.index), path, parsed.problem);
      return undefined;
    }
    const { value, indent } = parsed;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.issues.errorAt(at(indent), path, `expected a JSON object (one wallet per line), got ${describeValue(value)}`);
      return undefined;
    }
    // As for the YAML: secrets first, and no schema message about a key already flagged.
    const flagged = findLiteralSecrets(value, this.issues, path);
    const result = WalletSchema.safeParse(value, { error: errorMap });
    if (result.success) return flagged.length === 0 ? result.data : undefined;
    reportSchemaProblems(this.issues, result.error.issues, value, path, flagged);
    return undefined;
  }
}

type ParsedLine = { value: unknown; indent: number } | { problem: string; index: number };

/** A wallet line: its 1-based line number and where its text is (end excludes the line break). */
interface Entry {
  line: number;
  start: number;
  end: number;
}

/** The lines of a wallets file, and where each wallet's keys are in them. */
class WalletLines implements SideFile {
  private readonly entries: Entry[] = [];

  constructor(
    readonly file: string,
    readonly firstIndex: number,
    private readonly text: string,
  ) {}

  /**
   * The wallet of every line that is neither blank nor a `#` comment, in order. Each line is
   * parsed and checked on its own, so a broken line is reported at its line and column and does
   * not hide the next.
   */
  read(check: LineChecker): { wallets: Array<RawWallet | undefined>; bad: number } {
    const { text } = this;
    const wallets: Array<RawWallet | undefined> = [];
    let line = 0;
    for (let start = 0; start <= text.length; ) {
      const newline = text.indexOf('\n', start);
      const stop = newline < 0 ? text.length : newline;
      const end = stop > start && text.charCodeAt(stop - 1) === 0x0d ? stop - 1 : stop;
      line++;
      const content = text.slice(start, end);
      const trimmed = content.trim();
      if (trimmed !== '' && !trimmed.startsWith('#')) {
        const at = (index: number): Position => ({ file: this.file, line, col: index + 1 });
        if (check.bad >= MAX_BAD_LINES || (check.bad > 0 && check.issues.errorsFull)) {
          const message = `${this.file} is not read past here: ${check.bad} lines above are not valid wallets; is it the right file?`;
          check.issues.closingErrorAt(at(content.length - content.trimStart().length), message);
          break;
        }
        const k = this.entries.length;
        // Recorded before the check: its problems are placed through position(k).
        this.entries.push({ line, start, end });
        wallets.push(check.wallet(k, parseLine(content), at));
      }
      if (newline < 0) break;
      start = newline + 1;
    }
    return { wallets, bad: check.bad };
  }

  /**
   * The line of entry `k`, at the deepest key of `rest` found on it (`"address":` for
   * `wallets[k].address`); the line's first character when there is none. List indexes are
   * skipped: `rules[2]` points at `"rules":`.
   */
  position(k: number, rest: Path): Position {
    const entry = this.entries[k];
    if (entry === undefined) return { file: this.file, line: 0, col: 0 };
    const lineText = this.text.slice(entry.start, entry.end);
    let col = lineText.length - lineText.trimStart().length + 1;
    let from = 0;
    for (const seg of rest) {
      if (typeof seg === 'number') continue;
      const at = keyIndex(lineText, JSON.stringify(seg), from);
      if (at < 0) break;
      col = at + 1;
      from = at + 1;
    }
    return { file: this.file, line: entry.line, col };
  }
}

/** Where `"key"` followed by a colon first occurs at or after `from`; -1 when it does not. */
function keyIndex(line: string, quoted: string, from: number): number {
  for (let at = line.indexOf(quoted, from); at >= 0; at = line.indexOf(quoted, at + 1)) {
    let after = at + quoted.length;
    while (line[after] === ' ' || line[after] === '\t') after++;
    if (line[after] === ':') return at;
  }
  return -1;
}

/**
 * lossless-json rather than JSON.parse: it refuses a key given twice with different values, where
 * JSON.parse silently keeps the last (which address would the operator mean?). Numbers become
 * plain numbers: a wallet has none, and the schema refuses one wherever it appears. A line without
 * escapes or a repeated key (every generated one) goes through the API edge's plain parser, which
 * gives the same value without building each string a character at a time.
 */
function parseLine(content: string): ParsedLine {
  try {
    const value = parse(content, null, Number);
    return { value, indent: content.length - content.trimStart().length };
  } catch (err) {
    if (err instanceof RangeError) return { problem: 'nested too deeply for a wallet entry; refused', index: 0 };
    if (!(err instanceof SyntaxError)) throw err;
    // lossless-json ends its messages with the 0-based position in the text it was given.
    const duplicate = /^Duplicate key '(.*)' encountered at position (\d+)$/s.exec(err.message);
    // Its position is the key's first character; the key begins at its opening quote.
    if (duplicate) return { problem: `duplicate key ${JSON.stringify(duplicate[1])}`, index: Math.max(0, Number(duplicate[2]) - 1) };
    const at = / at position (\d+)$/.exec(err.message);
    return { problem: `not valid JSON: ${at ? err.message.slice(0, at.index) : err.message}`, index: at ? Number(at[1]) : 0 };
  }
}
