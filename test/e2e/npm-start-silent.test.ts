// `npm start | jq` (issue 27): npm prints a banner ("> autoclaim@0.1.0 start" and the command) on
// stdout before the daemon's first line, which jq cannot parse. `npm start --silent` (or `npm -s
// start`) drops it: every stdout line is then one JSON log line. The README says so; this holds it.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { sandboxYaml } from '../daemon/in-process.js';
import { buildOnce } from './build.js';
import { makeWallets, REPO, tempDir } from './helpers.js';

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

/** stdout of `npm start [flags] -- --config C` up to the daemon.started line, then the daemon is stopped. */
async function startOutput(flags: string[]): Promise<string[]> {
  const t = tempDir('autoclaim-npm-start-');
  cleanup = t.cleanup;
  const wallets = makeWallets(t.dir, ['alpha']);
  const config = join(t.dir, 'autoclaim.yaml');
  writeFileSync(config, sandboxYaml(wallets));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  // --ignore-scripts skips prestart's build (the tree is built); npm start still runs its script.
  const child = spawn('npm', ['start', ...flags, '--ignore-scripts', '--', '--config', config], { cwd: REPO, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (!out.includes('"daemon.started"') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
  process.kill(-child.pid!, 'SIGINT');
  await exited;
  expect(out).toContain('"daemon.started"');
  return out.split('\n').filter((l) => l.trim() !== '');
}

it('npm start --silent writes only JSON lines on stdout; without it npm\'s banner comes first', async () => {
  buildOnce();
  const silent = await startOutput(['--silent']);
  for (const line of silent) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
  const loud = await startOutput([]);
  expect(loud[0]).toMatch(/^> autoclaim@[0-9.]+ start$/);
}, 150_000);
