// Every metric family the code registers has a row in docs/operations.md's metrics tables (issue 27:
// the lease metrics were missing), and every autoclaim_ name the operator docs give is one the code
// registers (a user name in a URL, autoclaim_signer@, aside). Read from the sources, so a new or
// renamed family fails here.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO } from '../e2e/helpers.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

function registered(): Set<string> {
  const names = new Set<string>();
  for (const f of sources(join(REPO, 'src'))) {
    const text = readFileSync(f, 'utf8');
    for (const m of text.matchAll(/name: `\$\{PREFIX\}([a-z_]+)`|name: 'autoclaim_([a-z_]+)'/g)) names.add(`autoclaim_${m[1] ?? m[2]}`);
    // The per-wallet gauges are named through one helper (service/metrics.ts): `${PREFIX}wallet_${name}`.
    for (const m of text.matchAll(/perWalletGauge\('([a-z_]+)'/g)) names.add(`autoclaim_wallet_${m[1]}`);
  }
  return names;
}

it('documents every registered autoclaim_ metric family in a table row', () => {
  const names = registered();
  expect(names.size).toBeGreaterThan(20);
  const rows = readFileSync(join(REPO, 'docs', 'operations.md'), 'utf8').split('\n').filter((l) => l.startsWith('| `autoclaim_'));
  const documented = new Set(rows.map((l) => /^\| `(autoclaim_[a-z_]+)`/.exec(l)?.[1]));
  expect([...names].filter((n) => !documented.has(n)).sort()).toEqual([]);
});

it('names, anywhere in the operator docs, no autoclaim_ metric family the code does not register', () => {
  const names = registered();
  // A histogram's series carry a suffix of their family's name.
  const family = (n: string) => n.replace(/_(bucket|count|sum)$/, '');
  for (const file of ['README.md', 'docs/operations.md', 'docs/keys.md']) {
    const text = readFileSync(join(REPO, file), 'utf8');
    const named = [...text.matchAll(/\b(autoclaim_[a-z_]+)\b(?!@)/g)].map((m) => m[1] ?? '').filter((n) => !n.endsWith('_'));
    expect(named.filter((n) => !names.has(family(n))), file).toEqual([]);
  }
});
