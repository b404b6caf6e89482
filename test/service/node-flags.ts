// The node flags (and the environment) the daemon is started with by the systemd unit: the Docker
// image must start it the same way. `npm start` is plain `node`: the flags live where they were
// measured to earn their place (bench/RESULTS.md, "Node flags"), each with its reason in a comment.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const unit = (): string => readFileSync(join(ROOT, 'systemd', 'autoclaim.service'), 'utf8');

/** The flags between `node` and the script in the unit's ExecStart. */
export function serviceNodeFlags(): string[] {
  const m = /^ExecStart=\/usr\/bin\/node((?: --[\w-]+(?:=\S+)?)*) -- \S+\/dist\/cli\/main\.js /m.exec(unit());
  if (m === null) throw new Error('the unit\'s ExecStart is not "/usr/bin/node [flags] -- .../dist/cli/main.js ..."');
  return (m[1] ?? '').trim().split(' ').filter((f) => f !== '');
}

/** Everything between node and the script in the unit's ExecStart: its flags, and `--` if it has one. */
export function serviceNodeArgs(): string[] {
  const m = /^ExecStart=\/usr\/bin\/node((?: \S+)*?) \S+\/dist\/cli\/main\.js /m.exec(unit());
  if (m === null) throw new Error('the unit\'s ExecStart does not run .../dist/cli/main.js with /usr/bin/node');
  return (m[1] ?? '').trim().split(' ').filter((f) => f !== '');
}

/** The unit's Environment= variables that tune the runtime (not NODE_ENV), as NAME=value strings. */
export function serviceEnv(): string[] {
  return [...unit().matchAll(/^Environment=(MALLOC_\w+=\S+)$/gm)].map((m) => m[1] ?? '');
}
