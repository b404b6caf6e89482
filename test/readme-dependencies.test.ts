// "Say in the README why each dependency is there": every package in package.json's dependencies,
// optionalDependencies and devDependencies is named in the README's table "Why each dependency is
// here" (types-only @types/* packages aside), and the table names none that is gone.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './e2e/helpers.js';

const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
const readme = readFileSync(join(REPO, 'README.md'), 'utf8');

/** The package names in the first column of the table under the heading. */
function tableNames(): string[] {
  const at = readme.indexOf('### Why each dependency is here');
  expect(at).toBeGreaterThan(-1);
  const names: string[] = [];
  for (const line of readme.slice(at).split('\n').slice(1)) {
    if (line.startsWith('#')) break;
    const cell = /^\| ([^|]+) \|/.exec(line)?.[1];
    if (cell === undefined || cell.startsWith('package') || cell.startsWith('---')) continue;
    for (const part of cell.split(',')) names.push(part.replace(/\((dev|optional)\)/, '').trim());
  }
  return names;
}

describe("the README's dependency table", () => {
  const declared = ['dependencies', 'optionalDependencies', 'devDependencies'].flatMap((k) => Object.keys(pkg[k] ?? {})).filter((n) => !n.startsWith('@types/'));

  it('says why each declared package is there', () => {
    const named = new Set(tableNames());
    expect(declared.filter((n) => !named.has(n))).toEqual([]);
  });

  it('names no package that is not declared', () => {
    const all = new Set(declared);
    expect(tableNames().filter((n) => !all.has(n))).toEqual([]);
  });
});
