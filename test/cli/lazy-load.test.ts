// What a command loads is what it needs: `--help` must not pull in the config pipeline, the HTTP
// client, SQLite or the logger (each command's module is imported inside its action). Checked on
// the built CLI in a child process, with a module hook listing every file it loads.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOnce } from '../e2e/build.js';
import { CANARY_API_KEY, CLI, configYaml, makeWallets, tempDir } from '../e2e/helpers.js';

let dir: string;
let hook: string;

beforeAll(() => {
  buildOnce();
  dir = mkdtempSync(join(tmpdir(), 'autoclaim-lazy-'));
  hook = join(dir, 'list-modules.mjs');
  // A loader hook (it runs on its own thread) posts every module URL back; written out at exit.
  const loader = `let port; export function initialize(d) { port = d.port; } export async function load(url, ctx, next) { port.postMessage(url); return next(url, ctx); }`;
  writeFileSync(
    hook,
    [
      `import { createRequire, register } from 'node:module';`,
      `import { writeFileSync } from 'node:fs';`,
      `import { MessageChannel } from 'node:worker_threads';`,
      `const { port1, port2 } = new MessageChannel();`,
      `const seen = [];`,
      `port1.on('message', (u) => seen.push(u));`,
      `port1.unref();`,
      `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(loader)}), { data: { port: port2 }, transferList: [port2] });`,
      // A module required from CommonJS passes no ESM hook: its files are read from require's cache.
      `const cjs = createRequire(import.meta.url).cache;`,
      `process.on('exit', () => writeFileSync(process.env.LIST_MODULES_TO, JSON.stringify([...seen, ...Object.keys(cjs).map((f) => 'file://' + f)])));`,
    ].join('\n'),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The packages under node_modules, and the dist/ files, that `autoclaim ...argv` loads. */
function loaded(argv: string[], cwd?: string): { packages: string[]; dist: string[]; files: string[]; stdout: string } {
  const out = join(dir, `modules-${argv.join('-').replace(/[^\w.-]/g, '_')}.json`);
  const r = spawnSync(process.execPath, ['--import', hook, CLI, ...argv], { env: { ...process.env, AUTOCLAIM_API_KEY: CANARY_API_KEY, LIST_MODULES_TO: out }, encoding: 'utf8', cwd });
  const stdout = r.stdout;
  const urls = [...new Set(JSON.parse(readFileSync(out, 'utf8')) as string[])];
  const packages = new Set<string>();
  const dist = new Set<string>();
  for (const url of urls) {
    const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
    if (pkg !== undefined) packages.add(pkg);
    else if (url.includes('/dist/')) dist.add(url.slice(url.lastIndexOf('/dist/') + '/dist/'.length));
  }
  return { packages: [...packages].sort(), dist: [...dist].sort(), files: urls, stdout };
}

describe('lazy command modules', () => {
  it('--help loads commander and the CLI shell only', () => {
    const { packages, dist, stdout } = loaded(['--help']);
    expect(stdout).toContain('Usage: autoclaim');
    expect(packages).toEqual(['commander']);
    expect(dist.filter((f) => f.startsWith('cli/commands/') || f.startsWith('config/') || f.startsWith('store/') || f.startsWith('api/'))).toEqual([]);
  });

  it('a subcommand help loads no more than --help', () => {
    const { packages, stdout } = loaded(['once', '--help']);
    expect(stdout).toContain('Usage: autoclaim once');
    expect(packages).toEqual(['commander']);
  });

  it('a command loads its module when it runs: schema loads the config schema, not the HTTP client or SQLite', () => {
    const { packages, dist, stdout } = loaded(['schema']);
    expect(JSON.parse(stdout)).toHaveProperty('$schema');
    expect(dist).toContain('cli/commands/schema.js');
    expect(packages).toContain('zod');
    expect(packages).not.toContain('undici');
    expect(packages).not.toContain('better-sqlite3');
  });

  it('check reads the config with yaml alone, and loads no signature verifier', () => {
    const { dir: work, cleanup } = tempDir('autoclaim-lazy-yaml-');
    try {
      const wallets = makeWallets(work, ['alpha', 'beta']);
      writeFileSync(join(work, 'clean.yaml'), configYaml({ baseUrl: 'https://api.example.com/v1', wallets }));
      const clean = loaded(['check', '--config', 'clean.yaml'], work);
      expect(clean.stdout).toContain('alpha');
      expect(clean.packages).toContain('yaml');
      expect(clean.packages).not.toContain('js-yaml');
      // Signing is node:crypto's; tweetnacl is the tests' independent verifier (src/keys/verify.ts).
      expect(clean.packages).not.toContain('tweetnacl');
    } finally {
      cleanup();
    }
  });

  it('check and status send no request: they load no HTTP client (undici) and, on SQLite, no PostgreSQL driver', () => {
    const { dir: work, cleanup } = tempDir('autoclaim-lazy-http-');
    try {
      const wallets = makeWallets(work, ['alpha']);
      writeFileSync(join(work, 'clean.yaml'), configYaml({ baseUrl: 'https://api.example.com/v1', wallets }));
      const check = loaded(['check', '--config', 'clean.yaml'], work);
      expect(check.stdout).toContain('alpha');
      const status = loaded(['status', '--json', '--config', 'clean.yaml'], work);
      expect(status.stdout).toContain('alpha');
      for (const { packages } of [check, status]) {
        expect(packages).toContain('yaml');
        expect(packages).not.toContain('undici');
        expect(packages).not.toContain('pg');
      }
    } finally {
      cleanup();
    }
  });
});
