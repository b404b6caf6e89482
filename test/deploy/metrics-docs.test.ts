// Every metric family the code registers has a row in docs/operations.md's metrics tables (issue 27:
// the lease metrics were missing). Read from the sources, so a new family without a row fails here.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO } from '../e2e/helpers.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

it('documents every registered autoclaim_ metric family in a table row', () => {
  const names = new Set<string>();
  for (const f of sources(join(REPO, 'src'))) {
    for (const m of readFileSync(f, 'utf8').matchAll(/name: `\$\{PREFIX\}([a-z_]+)`|name: 'autoclaim_([a-z_]+)'/g)) names.add(`autoclaim_${m[1] ?? m[2]}`);
  }
  expect(names.size).toBeGreaterThan(20);
  const rows = readFileSync(join(REPO, 'docs', 'operations.md'), 'utf8').split('\n').filter((l) => l.startsWith('| `autoclaim_'));
  const documented = new Set(rows.map((l) => /^\| `(autoclaim_[a-z_]+)`/.exec(l)?.[1]));
  expect([...names].filter((n) => !documented.has(n)).sort()).toEqual([]);
});
