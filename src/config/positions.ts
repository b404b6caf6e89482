// Maps a key path (as zod and our own checks report it) back to a place in the YAML text, so every
// issue reads `file:line:col path: message`. The Document is kept from parsing for exactly this.
// A config has no anchors, aliases or merge keys (load.ts refuses them at their place), so a path
// is a plain walk of maps and lists. Wallets brought in by wallets_file are placed in that file
// instead (see SideFile).
import { isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair, type YAMLMap } from 'yaml';
import type { ConfigIssue } from '../errors.js';
import { issuePath } from './shown-key.js';

export type PathSegment = string | number;
export type Path = readonly PathSegment[];

export function pathStartsWith(path: Path, prefix: Path): boolean {
  return prefix.length <= path.length && prefix.every((seg, i) => seg === path[i]);
}

export interface Position {
  /** Set only for a place in another file than the config (a wallets_file line). */
  file?: string;
  line: number;
  col: number;
}

/**
 * A file the config names whose entries continue a list of the config: the wallets_file lines are
 * `wallets[firstIndex]` onwards. It places paths into those entries in its own text.
 */
export interface SideFile {
  /** As shown in messages. */
  readonly file: string;
  /** How many wallets the config lists itself: the first index that belongs to this file. */
  readonly firstIndex: number;
  /** The place of `rest` inside entry `k` of this file (`wallets[firstIndex + k]`), `file` set. */
  position(k: number, rest: Path): Position;
}

const NOWHERE: Position = { line: 0, col: 0 };

/** yaml's document of the config, with every node's range, and the offsets of its lines. */
export interface Positioned {
  doc: Document.Parsed;
  lines: LineCounter;
}

/** Where things are in one parsed config file. */
export class ConfigSource {
  private readonly pairIndex = new WeakMap<YAMLMap, Map<string, Pair>>();
  private walletsFile: SideFile | undefined;

  constructor(
    /** The file name as the operator gave it: messages repeat what they typed. */
    readonly file: string,
    private readonly positioned: Positioned | undefined,
  ) {}

  /** A source without a document: for problems that have no place (file missing, too big). */
  static withoutText(file: string): ConfigSource {
    return new ConfigSource(file, undefined);
  }

  private get doc(): Document.Parsed | undefined {
    return this.positioned?.doc;
  }

  private get lines(): LineCounter | undefined {
    return this.positioned?.lines;
  }

  /** From here on, `wallets[i]` with i at or past its firstIndex is placed in `side`. */
  addWalletsFile(side: SideFile): void {
    this.walletsFile = side;
  }

  /** The file a position is in: the config, unless the position names another. */
  fileOf(position: Position): string {
    return position.file ?? this.file;
  }

  positionOfOffset(offset: number): Position {
    if (!this.lines) return NOWHERE;
    return this.lines.linePos(offset);
  }

  /**
   * The key of the deepest entry the path reaches (or the list item), so a message about
   * `rules[0].when.pending_sol` points at `pending_sol:`. A path that runs past what exists
   * (a missing key) points at the deepest ancestor that does exist.
   */
  position(path: Path): Position {
    const side = this.walletsFile;
    const i = path[1];
    if (side !== undefined && path[0] === 'wallets' && typeof i === 'number' && i >= side.firstIndex) {
      return side.position(i - side.firstIndex, path.slice(2));
    }
    return this.walk(path).position;
  }

  /** Whether the config has a value at the path. */
  has(path: Path): boolean {
    return this.nodeAt(path) !== undefined;
  }

  /** The value node at a path; undefined when it does not exist. */
  private nodeAt(path: Path): Node | undefined {
    const { node, complete } = this.walk(path);
    return complete ? node : undefined;
  }

  private walk(path: Path): { node: Node | undefined; position: Position; complete: boolean } {
    if (!this.doc) return { node: undefined, position: NOWHERE, complete: false };
    const root = this.doc.contents;
    let position = root?.range ? this.positionOfOffset(root.range[0]) : { line: 1, col: 1 };
    let node: Node | undefined = root ?? undefined;
    for (const seg of path) {
      let at: Node | undefined;
      let next: Node | undefined;
      if (isMap(node)) {
        const pair = this.ownPairs(node).get(String(seg));
        at = pair?.key as Node | undefined;
        next = (pair?.value as Node | null | undefined) ?? undefined;
      } else if (isSeq(node) && typeof seg === 'number') {
        at = node.items[seg] as Node | undefined;
        next = at;
      }
      if (!at) return { node, position, complete: false };
      if (at.range) position = this.positionOfOffset(at.range[0]);
      node = next;
    }
    return { node, position, complete: true };
  }

  /**
   * The text a scalar was written as. Amounts are read from this, never from the float YAML
   * made of it: 0.123456789 must stay exactly 123456789 lamports.
   */
  scalarSource(path: Path): string | undefined {
    const node = this.nodeAt(path);
    return isScalar(node) && typeof node.source === 'string' ? node.source : undefined;
  }

  /** The path of the deepest key or item whose text covers `offset` (for YAML syntax errors). */
  pathAtOffset(offset: number): PathSegment[] {
    const out: PathSegment[] = [];
    let node: Node | null | undefined = this.doc?.contents;
    while (node) {
      let next: Node | undefined;
      if (isMap(node)) {
        for (const pair of node.items) {
          if (!isPair(pair) || !isScalar(pair.key)) continue;
          const key = pair.key as Node;
          const value = pair.value as Node | null;
          const name = String((pair.key as { value: unknown }).value);
          if (key.range && offset >= key.range[0] && offset < key.range[2]) {
            out.push(name);
            return out;
          }
          if (value?.range && offset >= value.range[0] && offset < value.range[2]) {
            out.push(name);
            next = value;
            break;
          }
        }
      } else if (isSeq(node)) {
        node.items.forEach((item, i) => {
          const n = item as Node;
          if (!next && n.range && offset >= n.range[0] && offset < n.range[2]) {
            out.push(i);
            next = n;
          }
        });
      }
      node = next;
    }
    return out;
  }

  /**
   * A map's own entries by key, built once per map: a scan per lookup made placing N issues in an
   * N-key map quadratic (minutes for a 1 MiB file of unknown keys). The first entry of a key wins.
   */
  private ownPairs(map: YAMLMap): Map<string, Pair> {
    let index = this.pairIndex.get(map);
    if (index === undefined) {
      index = new Map();
      for (const p of map.items) {
        if (!isScalar(p.key)) continue;
        const k = String(p.key.value);
        if (!index.has(k)) index.set(k, p);
      }
      this.pairIndex.set(map, index);
    }
    return index;
  }
}

/**
 * Nobody reads past the first screenful of config errors, and placing each one costs a walk of the
 * document: beyond this many, issues are only counted (a file of 30,000 unknown keys is refused in
 * milliseconds, not minutes) and one closing issue says how many more there are.
 */
export const MAX_LISTED_ISSUES = 100;

/** Collects errors and warnings, placing each in the file. */
export class IssueList {
  readonly errors: ConfigIssue[] = [];
  readonly warnings: ConfigIssue[] = [];
  private readonly seen = new Set<string>();
  private readonly unlisted = { errors: 0, warnings: 0 };
  private firstUnlisted: { errors?: ConfigIssue; warnings?: ConfigIssue } = {};

  constructor(readonly source: ConfigSource) {}

  error(path: Path, message: string): void {
    this.push('errors', () => this.make(path, message));
  }

  warn(path: Path, message: string): void {
    this.push('warnings', () => this.make(path, message));
  }

  /**
   * An issue at a known place (YAML syntax errors come with an offset, not a path). The path may
   * be given as a function: it is then only worked out for an issue that will be listed.
   */
  errorAt(position: Position, path: Path | (() => Path), message: string): void {
    this.push('errors', () => ({ file: this.source.file, ...position, path: issuePath(typeof path === 'function' ? path() : path), message }));
  }

  /** True once further errors would only be counted. */
  get errorsFull(): boolean {
    return this.errors.length >= MAX_LISTED_ISSUES;
  }

  /**
   * An error listed even past MAX_LISTED_ISSUES: the one that says why checking stopped early
   * (a wallets_file that is evidently not one), which the operator must see whatever came first.
   */
  closingErrorAt(position: Position, message: string): void {
    this.errors.push({ file: this.source.file, ...position, path: '', message });
  }

  warnAt(position: Position, path: Path | (() => Path), message: string): void {
    this.push('warnings', () => ({ file: this.source.file, ...position, path: issuePath(typeof path === 'function' ? path() : path), message }));
  }

  /** In file order, so the operator can fix them top to bottom: the config's, then wallets_file's. */
  sorted(): { errors: ConfigIssue[]; warnings: ConfigIssue[] } {
    return { errors: this.withTail('errors'), warnings: this.withTail('warnings') };
  }

  private withTail(kind: 'errors' | 'warnings'): ConfigIssue[] {
    const rank = (i: ConfigIssue): number => (i.file === this.source.file ? 0 : 1);
    const list = [...this[kind]].sort((a, b) => rank(a) - rank(b) || byPlace(a, b));
    const first = this.firstUnlisted[kind];
    if (first !== undefined) {
      const n = this.unlisted[kind];
      list.push({ ...first, path: '', message: `${n} more ${kind === 'errors' ? 'error' : 'warning'}${n === 1 ? '' : 's'} not listed, the first here; fix the ones above first` });
    }
    return list;
  }

  private push(kind: 'errors' | 'warnings', make: () => ConfigIssue): void {
    const list = this[kind];
    if (list.length >= MAX_LISTED_ISSUES) {
      this.unlisted[kind] += 1;
      this.firstUnlisted[kind] ??= make();
      return;
    }
    const issue = make();
    const key = `${kind}\u0000${issue.file}:${issue.line}:${issue.col}\u0000${issue.path}\u0000${issue.message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    list.push(issue);
  }

  private make(path: Path, message: string): ConfigIssue {
    return { file: this.source.file, ...this.source.position(path), path: issuePath(path), message };
  }
}

function byPlace(a: ConfigIssue, b: ConfigIssue): number {
  return a.line - b.line || a.col - b.col;
}
