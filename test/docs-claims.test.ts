// What the operator docs name must exist in the code (log events, alerts, exit codes, config keys), and what the code has must be in the docs'
// lists that say they are complete (README: "all of them: docs/operations.md"). Read from the
// sources, so a renamed event, a new alert or an exit code that is gone fails here instead of
// leaving a sentence that sends someone to grep the journal for a line that never comes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configJsonSchema } from '../src/config/json-schema.js';
import { SignerConfigSchema } from '../src/signer/config.js';
import { LOG_EVENTS } from '../src/events.js';
import { ALERT_KINDS } from '../src/service/alert-kinds.js';
import { EXIT } from '../src/cli/exit-codes.js';
import { REPO } from './e2e/helpers.js';

const read = (f: string) => readFileSync(join(REPO, f), 'utf8');
const README = read('README.md');
const OPERATIONS = read('docs/operations.md');
const DOCS: Array<[string, string]> = [
  ['README.md', README],
  ['docs/operations.md', OPERATIONS],
  ['docs/keys.md', read('docs/keys.md')],
];

/** The text from a heading to the next heading of the same or a higher level. */
function section(text: string, heading: string): string {
  const at = text.indexOf(`\n${heading}\n`);
  expect(at, heading).toBeGreaterThan(-1);
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const rest = text.slice(at + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level}} `, 'm'));
  return end === -1 ? rest : rest.slice(0, end);
}

/** The backticked names in the first cell of each table row. */
function firstCells(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...(l.split(' | ')[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ''));
}

/** The alert names listed in one table row (the row whose first cell is `first`). */
function alertsInRow(text: string, first: string): string[] {
  const row = text.split('\n').find((l) => l.startsWith(`| \`${first}\``));
  expect(row, first).toBeDefined();
  return [...(row ?? '').matchAll(/\b([a-z]+(?:_[a-z]+)+)\b/g)].map((m) => m[1] ?? '').filter((n) => Object.hasOwn(ALERT_KINDS, n));
}

describe('log events', () => {
  const catalogue = section(OPERATIONS, '## Log events');
  const known = new Set<string>(LOG_EVENTS);

  it("operations.md's catalogue has a row for every event the code can log", () => {
    const rows = new Set(firstCells(catalogue));
    expect(LOG_EVENTS.filter((e) => !rows.has(e))).toEqual([]);
  });

  it('the catalogue and the README name no event the code does not log', () => {
    expect(firstCells(catalogue).filter((e) => !known.has(e))).toEqual([]);
    const logs = section(README, '## Logs');
    const named = [...logs.matchAll(/`([a-z]+\.[a-z_]+)`/g)].map((m) => m[1] ?? '');
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((e) => !known.has(e))).toEqual([]);
  });
});

describe('alerts', () => {
  const all = Object.keys(ALERT_KINDS).sort();

  it('AutoclaimAlertOpen and alert.opened list every alert the daemon raises', () => {
    expect([...new Set(alertsInRow(OPERATIONS, 'AutoclaimAlertOpen'))].sort()).toEqual(all);
    expect([...new Set(alertsInRow(OPERATIONS, 'alert.opened'))].sort()).toEqual(all);
  });
});

describe('exit codes', () => {
  const codes = new Set<number>(Object.values(EXIT));

  it('every "exit N" in the operator docs is one the CLI has', () => {
    for (const [file, text] of DOCS) {
      const said = [...text.matchAll(/\bexits? (\d+)\b/gi)].map((m) => Number(m[1]));
      expect(said.filter((n) => !codes.has(n as never)), file).toEqual([]);
    }
  });

  it("the README's command table gives only the CLI's exit codes, and its text names every one", () => {
    const cli = section(README, '## The command line');
    const cells = cli
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .map((l) => l.split(' | ').at(-1) ?? '');
    expect(cells.length).toBeGreaterThan(15);
    // A code is a number that starts a clause of the exit cell: "0", "1 if …", ", 75 locked".
    const said = cells.flatMap((c) => [...c.matchAll(/(?:^|[,;] )(\d+)\b/g)].map((m) => Number(m[1])));
    expect(said.filter((n) => !codes.has(n as never))).toEqual([]);
    const other = /Other exits: ([^\n]+\n[^\n]+)/.exec(cli)?.[1] ?? '';
    const named = new Set([...said, ...[...other.matchAll(/\b(\d+) /g)].map((m) => Number(m[1]))]);
    expect([...codes].filter((n) => !named.has(n))).toEqual([]);
  });
});

describe('config keys', () => {
  type Node = { properties?: Record<string, Node>; items?: Node; additionalProperties?: Node | boolean; anyOf?: Node[]; oneOf?: Node[]; allOf?: Node[] };
  // The daemon's config and the signer's (docs/keys.md and operations.md speak of both: a signer's
  // `state.mark_file` is the signer's). `<op>` in a path stands for any key of the map there.
  const schemas = [configJsonSchema() as Node, z.toJSONSchema(SignerConfigSchema, { io: 'input' }) as Node];
  function has(node: Node | undefined, path: string[]): boolean {
    if (node === undefined) return false;
    if (path.length === 0) return true;
    const [seg, ...rest] = path as [string, ...string[]];
    return [node, ...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])].some((n) => {
      if (n.items !== undefined && has(n.items, path)) return true;
      if (/^<[a-z]+>$/.test(seg)) return Object.values(n.properties ?? {}).some((c) => has(c, rest));
      return has(n.properties?.[seg], rest) || (typeof n.additionalProperties === 'object' && has(n.additionalProperties, rest));
    });
  }
  const top = Object.keys(schemas[0]?.properties ?? {});

  it('every `section.key` the operator docs name is a key of the config (or of signer.yaml)', () => {
    expect(top).toContain('alerts');
    const known = new Set<string>(LOG_EVENTS);
    const pattern = new RegExp(`\`((?:${top.join('|')})(?:\\.(?:[a-z_]+|<[a-z]+>))+)\``, 'g');
    let checked = 0;
    for (const [file, text] of DOCS) {
      const named = [...text.matchAll(pattern)].map((m) => m[1] ?? '').filter((k) => !known.has(k));
      checked += named.length;
      expect(
        named.filter((k) => !schemas.some((s) => has(s, k.split('.')))),
        file,
      ).toEqual([]);
    }
    expect(checked).toBeGreaterThan(100);
  });
});
