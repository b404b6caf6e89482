// The node flags (and the environment) the daemon is started with, as `npm start` has them: the
// systemd unit and the Docker image must start it the same way (and the benchmarks measure it so).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

function start(): { env: string; flags: string } {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const m = /^((?:[A-Z_][A-Z0-9_]*=\S+ )*)node((?: --[\w-]+(?:=\S+)?)*) dist\/cli\/main\.js run$/.exec(pkg.scripts['start'] ?? '');
  if (m === null) throw new Error(`npm start is not "[VAR=value ...] node [flags] dist/cli/main.js run": ${pkg.scripts['start']}`);
  return { env: m[1] ?? '', flags: m[2] ?? '' };
}

export function startNodeFlags(): string[] {
  return start().flags.trim().split(' ').filter((f) => f !== '');
}

/** The variables `npm start` sets before node, as NAME=value strings. */
export function startEnv(): string[] {
  return start().env.trim().split(' ').filter((v) => v !== '');
}
