// The CLI as one bundle (run by `npm run build`, after tsc): dist/cli/main.js and its chunks in
// dist/cli/chunks/ replace the ~100 separate modules of the CLI and those of its pure-JavaScript
// dependencies. Node 20's ESM loader spends ~0.4 ms resolving, reading and linking each module,
// and zod alone is 95 of them: every command started ~55 ms later than a bundle does (`check` of a
// 100-wallet config 259 → 202 ms). The rest of dist/ is tsc's output as before: the library
// (`main`), and what the benchmarks and tests import module by module.
//
// What stays outside the bundle, loaded from node_modules as before:
// - native addons (better-sqlite3, unix-dgram), and packages that start workers or processes from
//   files beside their own (pino and its transports, node-cron's background tasks);
// - packages a command loads only when it needs them (undici's Agent, yaml, tweetnacl, pg,
//   prom-client), so that `--help` still loads none of them.
// Each dynamic import() of a command stays one: esbuild splits the bundle at every one of them.
// Not minified, so a stack trace still names the function; a source map is written beside each
// file, and `node --enable-source-maps` maps a stack trace back to src/. Names are not kept by
// esbuild's keepNames: it wraps every closure in a defineProperty call where it is made, and the
// per-poll ones made a 5,000-wallet cycle ~50 ms slower.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const REPO = join(import.meta.dirname, '..');
/** Pure JavaScript, no files read beside themselves, loaded by most commands (with what they import: base-x). */
const BUNDLED = new Set(['bs58', 'commander', 'dotenv', 'js-yaml', 'lossless-json', 'zod']);

const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
const external = Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }).filter((name) => !BUNDLED.has(name));

const outdir = join(REPO, 'dist/cli');
const MARK = '// The CLI bundle: scripts/bundle-cli.mjs';
if (readFileSync(join(outdir, 'main.js'), 'utf8').split('\n', 3).includes(MARK)) {
  // Its input is tsc's entry, which the bundle replaces: bundling the bundle would lose its chunks.
  throw new Error('dist/cli/main.js is the bundle already: run `npm run build` (tsc writes the entry again first)');
}
rmSync(join(outdir, 'chunks'), { recursive: true, force: true });
const result = await build({
  absWorkingDir: REPO,
  entryPoints: { main: 'dist/cli/main.js' },
  outdir,
  allowOverwrite: true, // the entry tsc wrote becomes the bundle's entry
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  logLevel: 'warning',
  // The CommonJS packages bundled (commander, dotenv) require node's builtins.
  banner: { js: `${MARK}\nimport { createRequire as __autoclaimRequire } from 'node:module'; const require = __autoclaimRequire(import.meta.url);` },
});
// What each output file holds, for test/cli/lazy-load.test.ts (what a command loads, by source).
const inputs = Object.fromEntries(
  Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith('.js'))
    .map(([file, out]) => [file, Object.keys(out.inputs)]),
);
writeFileSync(join(outdir, 'bundle.json'), `${JSON.stringify(inputs, null, 1)}\n`);
