// The quick read (js-yaml, no positions) is trusted only where it reads the same data as yaml's
// positioned document. Held here by a differential property test: YAML texts generated from a
// grammar of what configs are written with (block and flow collections, every scalar style and
// many spellings of numbers, booleans and nulls, comments, odd keys), and their mutations. For
// every text the quick read takes, yaml must find no error or warning, give the same data, and
// the same text for every number. test/reliability/config-fuzz.test.ts holds the whole pipeline
// to the same results both ways over its own mutations.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { LineCounter, parseDocument } from 'yaml';
import { loadConfigText } from '../../src/config/load.js';
import { ConfigSource, type Path, type PathSegment } from '../../src/config/positions.js';
import { quickRead } from '../../src/config/quick-read.js';
import { formatPath } from '../../src/json.js';
import { REPO } from '../e2e/helpers.js';
import { mutatedArb } from '../support/yaml-mutations.js';

/** The module object src/config/yaml-lib.ts loads yaml as: a spy on it sees the pipeline's calls. */
const yamlModule = createRequire(import.meta.url)('yaml') as typeof import('yaml');

/** AUTOCLAIM_FUZZ_SCALE=10 runs ten times the cases (a soak); the suite's default is 1. */
const SCALE = Math.max(1, Number(process.env.AUTOCLAIM_FUZZ_SCALE ?? 1) || 1);
const YAML_OPTIONS = { prettyErrors: false, uniqueKeys: false, merge: true, resolveKnownTags: false } as const;

// ----------------------------------------------------------------------------------------------
// a grammar of YAML documents

type Tree = { scalar: string; block?: string } | { map: Array<[string, Tree]>; flow: boolean } | { seq: Tree[]; flow: boolean };

/** Keys: mostly names, and now and then one of the spellings the two libraries name differently. */
const keyArb = fc.oneof(
  { weight: 40, arbitrary: fc.stringMatching(/^[a-z_][a-z0-9_]{0,7}$/) },
  { weight: 1, arbitrary: fc.constantFrom('null', 'Null', '~', 'true', 'False', '1', '0x1F', '.inf', '<<', '__proto__', '"quoted"', "'single'", '"a b"', 'a b', 'x-y', '"null"', '""') },
);

const PLAIN = ['0', '-0', '+1', '007', '0o17', '0x1F', '0b101', '1_000', '1.', '.5', '-.5', '+.5', '1e3', '1.5E-3', '-1e+3', '1e309', '-1e309', '1e-400', '.inf', '-.Inf', '.NaN', '.nan', 'true', 'False', 'TRUE', 'tRue', 'yes', 'no', 'on', 'null', 'NULL', '~', '2001-12-14', '12:30', '0.000000001', '0.1234567891', '123456789012345678901234567890', '9007199254740993', 'a b c', 'http://x:1/y', 'a#b', '50%', 'SOL2X', '*/15 * * * * *', '-x', '?x', 'x:y', '@'];
const DOUBLE = ['"\\x41\\u00e9\\U0001F600"', '"\\N\\_\\L\\P\\e\\0\\a\\b\\t\\v\\f\\r\\ \\/"', '"a\\\n  b"', '"a\n\n  b"', '"1"', '"true"', '""', '"\\q"'];
const SINGLE = ["'it''s'", "'a\n  b'", "''", "'1e3'"];
const BLOCK = ['|', '>', '|-', '>-', '|+', '>+', '|2', '>1'];

const scalarArb: fc.Arbitrary<Tree> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PLAIN).map((scalar) => ({ scalar })) },
  { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 ._:/%-]{0,10}$/).map((scalar) => ({ scalar })) },
  { weight: 2, arbitrary: fc.string({ maxLength: 8 }).map((s) => ({ scalar: JSON.stringify(s) })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map((s) => ({ scalar: `'${s.replaceAll("'", "''")}'` })) },
  { weight: 2, arbitrary: fc.constantFrom(...DOUBLE, ...SINGLE).map((scalar) => ({ scalar })) },
  { weight: 1, arbitrary: fc.record({ scalar: fc.constantFrom(...BLOCK), block: fc.constantFrom('x', 'x\ny', 'x\n\ny\n', ' lead\nx', 'x\n\n') }) },
  { weight: 1, arbitrary: fc.constant({ scalar: '' }) },
);

const { tree: treeArb } = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 3, arbitrary: scalarArb },
    { weight: 2, arbitrary: fc.record({ map: fc.uniqueArray(fc.tuple(keyArb, tie('tree')), { maxLength: 4, selector: ([k]) => k }), flow: fc.boolean() }) },
    { weight: 1, arbitrary: fc.record({ seq: fc.array(tie('tree'), { maxLength: 4 }), flow: fc.boolean() }) },
  ),
}));

interface Doc {
  root: Array<[string, Tree]>;
  indent: number;
  comments: boolean;
  marker: string;
  end: string;
  crlf: boolean;
}

const docArb: fc.Arbitrary<Doc> = fc.record({
  root: fc.uniqueArray(fc.tuple(keyArb, treeArb), { minLength: 1, maxLength: 5, selector: ([k]) => k }),
  indent: fc.constantFrom(2, 3, 4),
  comments: fc.boolean(),
  marker: fc.constantFrom('', '---\n', '--- # doc\n'),
  end: fc.constantFrom('', '...\n'),
  crlf: fc.boolean(),
});

function flowText(t: Tree): string {
  if ('scalar' in t) return t.block !== undefined ? JSON.stringify(t.block) : t.scalar === '' ? '""' : t.scalar;
  if ('map' in t) return `{ ${t.map.map(([k, v]) => `${k}: ${flowText(v)}`).join(', ')} }`;
  return `[${t.seq.map(flowText).join(', ')}]`;
}

function blockScalar(t: { scalar: string; block: string }, pad: string): string {
  return `${t.scalar}\n${t.block
    .split('\n')
    .map((l) => (l === '' ? '' : `${pad}${l}`))
    .join('\n')}`;
}

/** A value after `key:` or `- ` at indentation `pad`; nested block collections go one level in. */
function valueText(t: Tree, pad: string, step: string, comment: string): string {
  if ('scalar' in t) return t.block !== undefined ? ` ${blockScalar({ scalar: t.scalar, block: t.block }, pad + step)}` : `${t.scalar === '' ? '' : ` ${t.scalar}`}${comment}`;
  if (t.flow || ('map' in t ? t.map.length === 0 : t.seq.length === 0)) return ` ${flowText(t)}${comment}`;
  return `${comment}\n${blockText(t, pad + step, step)}`;
}

function blockText(t: Tree, pad: string, step: string, comment = ''): string {
  if ('map' in t) return t.map.map(([k, v]) => `${pad}${k}:${valueText(v, pad, step, comment)}`).join('\n');
  if ('seq' in t) return t.seq.map((v) => `${pad}-${valueText(v, pad, step, comment)}`).join('\n');
  return `${pad}${flowText(t)}`;
}

function render(d: Doc): string {
  const step = ' '.repeat(d.indent);
  const body = blockText({ map: d.root, flow: false }, '', step, d.comments ? '  # note' : '');
  const text = `${d.comments ? '# a config\n' : ''}${d.marker}${body}\n${d.end}`;
  return d.crlf ? text.replaceAll('\n', '\r\n') : text;
}

const textArb = fc.oneof({ weight: 2, arbitrary: docArb.map(render) }, { weight: 1, arbitrary: docArb.map(render).chain((t) => mutatedArb(t)) });

// ----------------------------------------------------------------------------------------------

/** Every number in yaml's data, with its path. */
function numberPaths(data: unknown, path: PathSegment[] = [], out: Path[] = []): Path[] {
  if (typeof data === 'number') out.push([...path]);
  else if (Array.isArray(data)) data.forEach((v, i) => numberPaths(v, [...path, i], out));
  else if (typeof data === 'object' && data !== null) for (const [k, v] of Object.entries(data)) numberPaths(v, [...path, k], out);
  return out;
}

const tally = { quick: 0, positioned: 0 };

/** The property: where the quick read takes a text, it reads what yaml reads, and yaml objects to nothing. */
function agrees(text: string): void {
  const quick = quickRead(text);
  if (quick === undefined) {
    tally.positioned++;
    return;
  }
  tally.quick++;
  const doc = parseDocument(text, YAML_OPTIONS);
  const where = `\n--- text:\n${text}`;
  expect(doc.errors.map((e) => e.message), `yaml refuses what the quick read took${where}`).toEqual([]);
  expect(doc.warnings.map((e) => e.message), `yaml warns where the quick read took${where}`).toEqual([]);
  const data = doc.toJS({ maxAliasCount: 50 }) as unknown;
  expect(quick.data, `the two reads differ${where}`).toEqual(data);
  // Only the text of numbers is compared here, not places: the line index can stay empty.
  const source = new ConfigSource('f', { doc, lines: new LineCounter() });
  for (const path of numberPaths(data)) {
    expect(quick.numbers.get(formatPath(path)), `the text of ${formatPath(path)}${where}`).toBe(source.scalarSource(path));
  }
}

describe('the quick read of a config', () => {
  it('reads what yaml reads, over 6,000 generated YAML texts and their mutations', () => {
    fc.assert(fc.property(textArb, agrees), { numRuns: 6_000 * SCALE });
    console.info(`quick read: ${JSON.stringify(tally)}`);
    // Both branches ran: the generator makes texts the quick read takes and texts it leaves.
    expect(tally.quick).toBeGreaterThan(600);
    expect(tally.positioned).toBeGreaterThan(600);
  });

  it.each([
    ['an anchor and an alias', 'a: &x 1\nb: *x\n'],
    ['an alias with no anchor', 'a: *x\n'],
    ['a tag', 'a: !!str 1\n'],
    ['a local tag', 'a: !thing x\n'],
    ['a directive', '%YAML 1.1\n---\na: yes\n'],
    ['a second document', 'a: 1\n---\nb: 2\n'],
    ['a merge key', 'd: { x: 1 }\ne: { <<: { x: 2 } }\n'],
    ['a null key', 'null: 1\n'],
    ['an empty key', ': 1\n'],
    ['a quoted key that is no name', '"a b": 1\n'],
    ['a number as a key', '1: x\n'],
    ['a list as a key', '? [a, b]\n: c\n'],
    ['__proto__', '__proto__: { polluted: 1 }\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['a tab', 'a:\n\tb: 1\n'],
    ['a lone carriage return', 'a: 1\rb: 2\n'],
    ['a byte order mark', '\ufeffa: 1\n'],
    ['a float too large for a double', 'a: 1e309\n'],
    ['nesting 40 deep', `a: ${'['.repeat(40)}${']'.repeat(40)}\n`],
    ['a list at the top', '- a\n- b\n'],
    ['a scalar at the top', 'just text\n'],
    ['only comments', '# nothing\n'],
    ['a syntax error', 'a: [1, 2\n'],
    ['a block scalar', 'a: |\n  x\n'],
    ['a double-quoted scalar over lines', 'a: "x\\\n\n  y"\n'],
    ['a plain scalar over lines', 'a: x\n  y\n'],
    ['a document end marker', 'a: 1\n...\n'],
  ])('leaves %s to the positioned read', (_name, text) => {
    expect(quickRead(text)).toBeUndefined();
  });

  it('takes the shipped example configs, and reads each as the positioned read does', () => {
    const dir = join(REPO, 'config');
    const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThan(1);
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8');
      expect(quickRead(text), f).toBeDefined();
      agrees(text);
    }
  });

  it('keeps every number as written: amounts come from the text, never from a float', () => {
    const quick = quickRead('safety:\n  max_sol_per_action: 0.1000000001\nrules:\n  - when: { pending_sol: { gte: 1e3 } }\n    n: [0x1F, -.5, .inf]\n');
    expect(quick?.numbers).toEqual(
      new Map([
        ['safety.max_sol_per_action', '0.1000000001'],
        ['rules[0].when.pending_sol.gte', '1e3'],
        ['rules[0].n[0]', '0x1F'],
        ['rules[0].n[1]', '-.5'],
        ['rules[0].n[2]', '.inf'],
      ]),
    );
  });

  it('parses the positioned document only when a message must be placed', () => {
    const parse = vi.spyOn(yamlModule, 'parseDocument');
    const file = join(REPO, 'config', 'autoclaim.yaml');
    const text = readFileSync(file, 'utf8');
    const opts = { file: 'autoclaim.yaml', absFile: file, env: {}, cwd: REPO, scheduled: false };
    parse.mockClear();
    const clean = loadConfigText(text, opts);
    expect(clean.errors).toEqual([]);
    expect(parse).not.toHaveBeenCalled();

    const broken = text.replace('max_sol_per_action: 10 ', 'max_sol_per_action: -10 ');
    expect(broken).not.toBe(text);
    const r = loadConfigText(broken, opts);
    expect(parse).toHaveBeenCalledTimes(1);
    expect(r).toEqual(loadConfigText(broken, { ...opts, positioned: true }));
    const line = broken.split('\n').findIndex((l) => l.includes('max_sol_per_action')) + 1;
    expect(r.errors.map((e) => [e.line, e.path])).toEqual([[line, 'safety.max_sol_per_action']]);
    parse.mockRestore();
  });
});
