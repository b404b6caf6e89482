// Maps a key path (as zod and our own checks report it) back to a place in the YAML text, so every
// issue reads `file:line:col path: message`. The Document is kept from parsing for exactly this;
// after a quick read (quick-read.ts) it is parsed only when a message is first placed.
// Wallets brought in by wallets_file are placed in that file instead (see SideFile).
import type { Alias, Document, LineCounter, Node, Pair, YAMLMap } from 'yaml';
import type { ConfigIssue } from '../errors.js';
import { issuePath } from './shown-key.js';
import { yamlLib } from './yaml-lib.js';

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

/** With `merge: true`, yaml marks a `<<` key with a symbol value; its source stays "<<". */
function isMergeKey(pair: Pair): boolean {
  return yamlLib().isScalar(pair.key) && typeof pair.key.value === 'symbol' && pair.key.source === '<<';
}

/** yaml's document of the config, with every node's range, and the offsets of its lines. */
export interface Positioned {
  doc: Document.Parsed;
  lines: LineCounter;
}

/** Where things are in one parsed config file. */
export class ConfigSource {
  private readonly pairIndex = new WeakMap<YAMLMap, Map<string, Pair>>();
  private aliasTargets: Map<Alias, Node> | undefined;
  private walletsFile: SideFile | undefined;
  private positioned: Positioned | undefined;

  constructor(
    /** The file name as the operator gave it: messages repeat what they typed. */
    readonly file: string,
    /** The document, or how to parse it when a place is first asked for. */
    private readonly read: Positioned | (() => Positioned) | undefined,
  ) {}

  /** A source without a document: for problems that have no place (file missing, too big). */
  static withoutText(file: string): ConfigSource {
    return new ConfigSource(file, undefined);
  }

  private get doc(): Document.Parsed | undefined {
    return this.document()?.doc;
  }

  private get lines(): LineCounter | undefined {
    return this.document()?.lines;
  }

  private document(): Positioned | undefined {
    if (this.positioned === undefined && this.read !== undefined) this.positioned = typeof this.read === 'function' ? this.read() : this.read;
    return this.positioned;
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

  /** Whether the config has a value at the path, aliases and merge keys followed. */
  has(path: Path): boolean {
    return this.nodeAt(path) !== undefined;
  }

  /** The value node at a path, aliases and merge keys followed; undefined when it does not exist. */
  private nodeAt(path: Path): Node | undefined {
    const { node, complete } = this.walk(path);
    return complete ? node : undefined;
  }

  private walk(path: Path): { node: Node | undefined; position: Position; complete: boolean } {
    if (!this.doc) return { node: undefined, position: NOWHERE, complete: false };
    const root = this.doc.contents;
    let position = root?.range ? this.positionOfOffset(root.range[0]) : { line: 1, col: 1 };
    let node: Node | undefined = root ? this.deref(root) : undefined;
    for (const seg of path) {
      let at: Node | undefined;
      let next: Node | undefined;
      if (yamlLib().isMap(node)) {
        const pair = this.pairFor(node, String(seg), 0);
        at = pair?.key as Node | undefined;
        next = pair?.value ? this.deref(pair.value as Node) : undefined;
      } else if (yamlLib().isSeq(node) && typeof seg === 'number') {
        at = node.items[seg] as Node | undefined;
        next = at ? this.deref(at) : undefined;
      }
      if (!at) return { node, position, complete: false };
      if (at.range) position = this.positionOfOffset(at.range[0]);
      node = next;
    }
    return { node, position, complete: true };
  }

  /** The entry for `key`: written in the map, else brought in by a `<<` merge key. */
  private pairFor(map: YAMLMap, key: string, depth: number): Pair | undefined {
    const own = this.ownPairs(map).get(key);
    if (own || depth > 8) return own;
    for (const merge of map.items.filter(isMergeKey)) {
      const source = merge.value ? this.deref(merge.value as Node) : undefined;
      const sources = yamlLib().isSeq(source) ? source.items.map((i) => this.deref(i as Node)) : [source];
      for (const s of sources) {
        const found = yamlLib().isMap(s) ? this.pairFor(s, key, depth + 1) : undefined;
        if (found) return found;
      }
    }
    return undefined;
  }

  /**
   * The text a scalar was written as. Amounts are read from this, never from the float YAML
   * made of it: 0.123456789 must stay exactly 123456789 lamports.
   */
  scalarSource(path: Path): string | undefined {
    const node = this.nodeAt(path);
    return yamlLib().isScalar(node) && typeof node.source === 'string' ? node.source : undefined;
  }

  /** The path of the deepest key or item whose text covers `offset` (for YAML syntax errors). */
  pathAtOffset(offset: number): PathSegment[] {
    const out: PathSegment[] = [];
    let node: Node | null | undefined = this.doc?.contents;
    while (node) {
      let next: Node | undefined;
      if (yamlLib().isMap(node)) {
        for (const pair of node.items) {
          if (!yamlLib().isPair(pair) || !yamlLib().isScalar(pair.key)) continue;
          const key = pair.key as Node;
          const value = pair.value as Node | null;
          // A merge key's value is a symbol; the operator wrote "<<".
          const name = isMergeKey(pair) ? '<<' : String((pair.key as { value: unknown }).value);
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
      } else if (yamlLib().isSeq(node)) {
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
        if (!yamlLib().isScalar(p.key) || isMergeKey(p)) continue;
        const k = String(p.key.value);
        if (!index.has(k)) index.set(k, p);
      }
      this.pairIndex.set(map, index);
    }
    return index;
  }

  /**
   * What an alias stands for: the last node before it carrying its anchor (yaml's rule). Worked
   * out for the whole document in one pass: yaml's own Alias.resolve walks the document on every
   * call, which made a file of 40,000 aliases take minutes to check.
   */
  resolveAlias(alias: Alias): Node | undefined {
    if (this.aliasTargets === undefined) {
      const targets = new Map<Alias, Node>();
      const anchors = new Map<string, Node>();
      if (this.doc) {
        yamlLib().visit(this.doc, {
          Node(_key, node) {
            if (yamlLib().isAlias(node)) {
              const target = anchors.get(node.source);
              if (target !== undefined) targets.set(node, target);
            } else if (typeof node.anchor === 'string') anchors.set(node.anchor, node);
          },
        });
      }
      this.aliasTargets = targets;
    }
    return this.aliasTargets.get(alias);
  }

  private deref(node: Node): Node | undefined {
    return yamlLib().isAlias(node) ? this.resolveAlias(node) : node;
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
