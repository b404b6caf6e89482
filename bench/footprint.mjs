// What a command costs before it does anything: `autoclaim --help` (peak RSS, wall time, and the
// modules it loads) against a bare `node`, for this build and, with `--baseline=DIR`, another one,
// alternately. `--help` is run as a person runs it: no node flags.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, median, OUT, runProcess } from './lib/common.mjs';

// A loader hook (on its own thread) posts every module URL back; written out at exit.
// CommonJS files a package requires from inside itself never reach that hook: Module._load is
// wrapped for those.
const HOOK = `
import Module, { register } from 'node:module';
import { writeFileSync } from 'node:fs';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const seen = [];
port1.on('message', (u) => seen.push(u));
port1.unref();
register('data:text/javascript,' + encodeURIComponent('let p; export function initialize(d) { p = d.port; } export async function load(u, c, n) { p.postMessage(u); return n(u, c); }'), { data: { port: port2 }, transferList: [port2] });
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const out = load.apply(this, arguments);
  try {
    const file = Module._resolveFilename(request, parent, isMain);
    if (file.startsWith('/')) seen.push('file://' + file);
  } catch {}
  return out;
};
process.on('exit', () => writeFileSync(process.env.LIST_MODULES_TO, JSON.stringify(seen)));
`;

/** The modules `cli argv` loads: how many files, and from which packages. */
async function modulesOf(cli, argv) {
  const hook = join(OUT, 'list-modules.mjs');
  const list = join(OUT, 'modules.json');
  writeFileSync(hook, HOOK);
  const r = await runProcess(['--import', hook, cli, ...argv], { env: { LIST_MODULES_TO: list } });
  if (r.code !== 0) throw new Error(`${argv.join(' ')} exited ${r.code}: ${r.stderr.slice(0, 500)}`);
  const urls = [...new Set(JSON.parse(readFileSync(list, 'utf8')).filter((u) => u.startsWith('file:')))];
  const modules = urls.map((u) => fileURLToPath(u));
  const packages = [...new Set(modules.map((m) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(m)?.[1]).filter((p) => p !== undefined))].sort();
  return { files: urls.length, modules: modules.length, packages };
}

async function helpRun(cli) {
  const r = await runProcess([cli, '--help']);
  if (r.code !== 0) throw new Error(`--help exited ${r.code}: ${r.stderr.slice(0, 500)}`);
  return { wallMs: r.wallMs, peakRssKb: r.peakRssKb };
}

function summary(runs, modules) {
  return {
    peakRssMb: Math.max(...runs.map((x) => x.peakRssKb)) / 1024,
    peakRssMedianMb: median(runs.map((x) => x.peakRssKb)) / 1024,
    peakRssRunsMb: runs.map((x) => x.peakRssKb / 1024),
    wallMs: median(runs.map((x) => x.wallMs)),
    modules,
  };
}

export async function benchFootprint({ runs, baselineCli }) {
  const now = [];
  const before = [];
  const bare = [];
  for (let i = 0; i < runs; i++) {
    bare.push(await runProcess(['-e', '0']));
    if (baselineCli !== undefined) before.push(await helpRun(baselineCli));
    now.push(await helpRun(CLI));
  }
  return {
    runs,
    bareNodeMb: median(bare.map((b) => b.peakRssKb)) / 1024,
    help: summary(now, await modulesOf(CLI, ['--help'])),
    ...(baselineCli === undefined ? {} : { helpBefore: summary(before, await modulesOf(baselineCli, ['--help'])) }),
  };
}
