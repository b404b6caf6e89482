// The node flags the daemon is started with, as `npm start` has them: the systemd unit and the
// Docker image must start it the same way (and the benchmarks measure it so).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export function startNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const m = /^node((?: --[\w-]+(?:=\S+)?)*) dist\/cli\/main\.js run$/.exec(pkg.scripts['start'] ?? '');
  if (m === null) throw new Error(`npm start is not "node [flags] dist/cli/main.js run": ${pkg.scripts['start']}`);
  return (m[1] ?? '').trim().split(' ').filter((f) => f !== '');
}
