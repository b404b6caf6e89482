// The quick read of a config: js-yaml's event parser and constructor, which make plain data of a
// 5,000-wallet list in ~60 ms where yaml's positioned document takes ~300 ms and several times
// the memory. Positions are what yaml's document is kept for (every message names a line and a
// column), and a config without a problem needs none: load.ts checks the quick data, and only
// when a message has to be placed does it parse the positioned document (see QuickSource).
//
// The quick read takes only the part of YAML where the two libraries are held to the same data by
// test/config/quick-read.test.ts (a differential property test) and the config fuzz corpus: no
// anchors, aliases, tags, directives or second documents, no `<<` merge keys, no block or
// multi-line scalars, every key a plain name, nesting within MAX_DEPTH, none of the UNUSUAL
// characters. Anything else, and anything js-yaml refuses, is left to the positioned read, which
// reports it with its place.
import {
  CORE_SCHEMA,
  EVENT_ID,
  SCALAR_STYLE,
  constructFromEvents,
  getScalarValue,
  parseEvents,
  type Event,
} from 'js-yaml';
import { formatPath } from '../json.js';
import { ConfigSource, type Path, type PathSegment, type Positioned } from './positions.js';

/** Deeper than any config; beyond it the positioned read (and nesting.ts) decide. */
const MAX_DEPTH = 32;
/**
 * A key the quick read takes: a plain name, as every config key is. Null spellings are left out
 * because yaml and js-yaml name such a key differently (`null:` is "" in yaml's data and "null"
 * in js-yaml's); boolean spellings (`True:` is the key "true") and `__proto__` because no config
 * key is one.
 */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NOT_A_NAME = new Set(['null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE', '__proto__']);
/**
 * Characters where the two libraries part ways and a config has no use for them: a tab (yaml
 * refuses one where it could be indentation, js-yaml takes more), control characters, a carriage
 * return outside CRLF, Unicode's line and paragraph separators, NEL, a no-break space and a byte
 * order mark. A text with any of them is left to the positioned read and its message.
 */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const UNUSUAL = /[\t\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00a0\u2028\u2029\ufeff]|\r(?!\n)/;
/** A document end marker: yaml reads what follows as a second document, js-yaml may not. */
const DOCUMENT_END = /^\.\.\./m;
/** A plain scalar that may have been read as a number: its text is kept (QuickRead.numbers). */
const MAY_BE_NUMBER = /^[-+.0-9]/;
/**
 * A decimal float of YAML's core schema. One too large for a double (1e309) is Infinity to yaml
 * and text to js-yaml: such a text is left to the positioned read.
 */
const CORE_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;

export interface QuickRead {
  /** The document as plain data, as yaml's `toJS()` would give it. */
  data: Record<string, unknown>;
  /**
   * The text of every plain scalar that may be a number, by formatPath of its path: amounts are
   * read from the text the operator wrote, never from the float YAML made of it.
   */
  numbers: Map<string, string>;
}

interface Frame {
  kind: 'document' | 'map' | 'seq';
  /** In a map: the key whose value comes next, or undefined when a key comes next. */
  key: string | undefined;
  /** In a list: the index of the next item. */
  next: number;
}

/** Plain data of the text, or undefined when it is not for the quick read. Never throws. */
export function quickRead(text: string): QuickRead | undefined {
  if (UNUSUAL.test(text) || DOCUMENT_END.test(text)) return undefined;
  try {
    const events = parseEvents(text, { maxDepth: MAX_DEPTH });
    const numbers = scan(text, events);
    if (numbers === undefined) return undefined;
    const docs = constructFromEvents(events, { source: text, schema: CORE_SCHEMA, maxAliases: 0 });
    const data = docs[0];
    if (docs.length !== 1 || typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
    return { data: data as Record<string, unknown>, numbers };
  } catch {
    // A syntax error, a duplicate key, nesting past MAX_DEPTH: the positioned read reports it.
    return undefined;
  }
}

/**
 * One pass over the events: refuses what the quick read does not take and notes the text of the
 * plain scalars that may be numbers, by path.
 */
function scan(text: string, events: readonly Event[]): Map<string, string> | undefined {
  const numbers = new Map<string, string>();
  const frames: Frame[] = [];
  const path: PathSegment[] = [];
  let documents = 0;
  for (const ev of events) {
    if (ev.type === EVENT_ID.POP) {
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent !== undefined) leave(parent, path);
      continue;
    }
    if (ev.type === EVENT_ID.DOCUMENT) {
      if (++documents > 1 || ev.directives.length > 0) return undefined;
      frames.push({ kind: 'document', key: undefined, next: 0 });
      continue;
    }
    if (ev.type === EVENT_ID.ALIAS || ev.anchorStart !== -1 || ev.tagStart !== -1) return undefined;
    const parent = frames[frames.length - 1];
    if (parent === undefined) return undefined;
    if (parent.kind === 'map' && parent.key === undefined) {
      // A key: a scalar that is a plain name, nothing else.
      if (ev.type !== EVENT_ID.SCALAR) return undefined;
      const name = getScalarValue(text, ev);
      if (!PLAIN_NAME.test(name) || NOT_A_NAME.has(name)) return undefined;
      parent.key = name;
      continue;
    }
    enter(parent, path);
    if (ev.type === EVENT_ID.SCALAR) {
      // No setting is multi-line text, and the two part ways on some of it: a block scalar's
      // blank lines, an escaped line break in a double-quoted one.
      if (ev.style === SCALAR_STYLE.LITERAL_BLOCK || ev.style === SCALAR_STYLE.FOLDED_BLOCK || spansLines(text, ev.valueStart, ev.valueEnd)) return undefined;
      if (ev.style === SCALAR_STYLE.PLAIN) {
        const written = text.slice(ev.valueStart, ev.valueEnd);
        if (MAY_BE_NUMBER.test(written)) {
          if (CORE_FLOAT.test(written) && !Number.isFinite(Number(written))) return undefined;
          numbers.set(formatPath(path), written);
        }
      }
      leave(parent, path);
    } else {
      frames.push({ kind: ev.type === EVENT_ID.MAPPING ? 'map' : 'seq', key: undefined, next: 0 });
    }
  }
  return documents === 1 ? numbers : undefined;
}

function spansLines(text: string, start: number, end: number): boolean {
  const newline = text.indexOf('\n', start);
  return newline !== -1 && newline < end;
}

/** A value starts inside `parent`: its segment goes on the path. */
function enter(parent: Frame, path: PathSegment[]): void {
  if (parent.kind === 'map') path.push(parent.key as string);
  else if (parent.kind === 'seq') path.push(parent.next);
}

/** The value inside `parent` is done: its segment comes off, and the next key or item is awaited. */
function leave(parent: Frame, path: PathSegment[]): void {
  if (parent.kind === 'map') {
    parent.key = undefined;
    path.pop();
  } else if (parent.kind === 'seq') {
    parent.next++;
    path.pop();
  }
}

/**
 * The places of a quickly read config: what the checks ask of the text itself (a number's
 * spelling, whether a key is there) is answered from the quick read; a message's line and column
 * from yaml's positioned document, parsed at the first message.
 */
export class QuickSource extends ConfigSource {
  constructor(
    file: string,
    private readonly quick: QuickRead,
    positioned: () => Positioned,
  ) {
    super(file, positioned);
  }

  override scalarSource(path: Path): string | undefined {
    return this.quick.numbers.get(formatPath(path));
  }

  override has(path: Path): boolean {
    return hasPath(this.quick.data, path);
  }
}

/** Whether the data holds a value at `path` (a list index or a key, own properties only). */
function hasPath(data: unknown, path: Path): boolean {
  let node = data;
  for (const seg of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, seg)) return false;
    node = (node as Record<PathSegment, unknown>)[seg];
  }
  return true;
}
