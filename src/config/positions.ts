// Maps a key path (as zod and our own checks report it) back to a place in the YAML text, so every
// issue reads `file:line:col path: message`. The Document is kept from parsing for exactly this.
import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  type Document,
  type LineCounter,
  type Node,
  type Pair,
  type YAMLMap,
} from 'yaml';
import type { ConfigIssue } from '../errors.js';

export type PathSegment = string | number;
export type Path = readonly PathSegment[];

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `rules[0].when.pending_sol`; keys that are not identifiers are quoted: `api["odd key"]`. */
export function formatPath(path: Path): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (PLAIN_KEY.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

export interface Position {
  line: number;
  col: number;
}

const NOWHERE: Position = { line: 0, col: 0 };

/** With `merge: true`, yaml marks a `<<` key with a symbol value; its source stays "<<". */
function isMergeKey(pair: Pair): boolean {
  return isScalar(pair.key) && typeof pair.key.value === 'symbol' && pair.key.source === '<<';
}

/** Where things are in one parsed config file. */
export class ConfigSource {
  constructor(
    /** The file name as the operator gave it: messages repeat what they typed. */
    readonly file: string,
    private readonly doc: Document.Parsed | undefined,
    private readonly lines: LineCounter | undefined,
  ) {}

  /** A source without a document: for problems that have no place (file missing, too big). */
  static withoutText(file: string): ConfigSource {
    return new ConfigSource(file, undefined, undefined);
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
    return this.walk(path).position;
  }

  /** The value node at a path, aliases and merge keys followed; undefined when it does not exist. */
  nodeAt(path: Path): Node | undefined {
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
      if (isMap(node)) {
        const pair = this.pairFor(node, String(seg), 0);
        at = pair?.key as Node | undefined;
        next = pair?.value ? this.deref(pair.value as Node) : undefined;
      } else if (isSeq(node) && typeof seg === 'number') {
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
    const own = map.items.find((p) => isScalar(p.key) && !isMergeKey(p) && String(p.key.value) === key);
    if (own || depth > 8) return own;
    for (const merge of map.items.filter(isMergeKey)) {
      const source = merge.value ? this.deref(merge.value as Node) : undefined;
      const sources = isSeq(source) ? source.items.map((i) => this.deref(i as Node)) : [source];
      for (const s of sources) {
        const found = isMap(s) ? this.pairFor(s, key, depth + 1) : undefined;
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
          if (key.range && offset >= key.range[0] && offset < key.range[2]) {
            out.push(String((pair.key as { value: unknown }).value));
            return out;
          }
          if (value?.range && offset >= value.range[0] && offset < value.range[2]) {
            out.push(String((pair.key as { value: unknown }).value));
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

  private deref(node: Node): Node | undefined {
    if (isAlias(node) && this.doc) return node.resolve(this.doc) ?? undefined;
    return node;
  }
}

/** Collects errors and warnings, placing each in the file. */
export class IssueList {
  readonly errors: ConfigIssue[] = [];
  readonly warnings: ConfigIssue[] = [];

  constructor(readonly source: ConfigSource) {}

  error(path: Path, message: string): void {
    push(this.errors, this.make(path, message));
  }

  warn(path: Path, message: string): void {
    push(this.warnings, this.make(path, message));
  }

  /** An issue at a known place (YAML syntax errors come with an offset, not a path). */
  errorAt(position: Position, path: Path, message: string): void {
    push(this.errors, { file: this.source.file, ...position, path: formatPath(path), message });
  }

  warnAt(position: Position, path: Path, message: string): void {
    push(this.warnings, { file: this.source.file, ...position, path: formatPath(path), message });
  }

  /** In file order, so the operator can fix them top to bottom. */
  sorted(): { errors: ConfigIssue[]; warnings: ConfigIssue[] } {
    return { errors: [...this.errors].sort(byPlace), warnings: [...this.warnings].sort(byPlace) };
  }

  private make(path: Path, message: string): ConfigIssue {
    return { file: this.source.file, ...this.source.position(path), path: formatPath(path), message };
  }
}

function push(list: ConfigIssue[], issue: ConfigIssue): void {
  const dup = list.some(
    (i) => i.line === issue.line && i.col === issue.col && i.path === issue.path && i.message === issue.message,
  );
  if (!dup) list.push(issue);
}

function byPlace(a: ConfigIssue, b: ConfigIssue): number {
  return a.line - b.line || a.col - b.col;
}
