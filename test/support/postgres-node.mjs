// The test PostgreSQL (postgres.ts beside this file) for plain-node scripts — the bench, a script
// that spawns daemons — which cannot import TypeScript: postgres.ts is transpiled (types stripped,
// nothing checked) into node_modules/.cache and imported from there, where `pg` still resolves.
//
//   import { startPostgres } from '../test/support/postgres-node.mjs';
//   const pg = await startPostgres();            // stopped by pg.stop(), or when this process dies
//   const url = await pg.createDatabase();       // postgres://postgres@127.0.0.1:PORT/NAME
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');

async function load() {
  const source = readFileSync(join(here, 'postgres.ts'), 'utf8');
  const out = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
  }).outputText;
  const dir = join(repo, 'node_modules', '.cache', 'autoclaim-test-postgres');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'postgres.mjs');
  writeFileSync(file, out);
  return import(pathToFileURL(file).href);
}

const mod = await load();

/** @type {(opts?: { password?: string; bin?: string; settings?: Record<string, string> }) => Promise<any>} */
export const startPostgres = mod.startPostgres;
/** @type {() => string} */
export const findPostgresBin = mod.findPostgresBin;
