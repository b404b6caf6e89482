// Process tests run dist/ (tsc's output). `npm test` builds first
// (test/beside.sh); a lone `npx vitest` run builds here, as `npm run build` does.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, REPO } from './helpers.js';

export function buildOnce(): void {
  if (existsSync(CLI) && process.env.npm_lifecycle_event === 'test') return;
  if (existsSync(CLI) && statSync(CLI).mtimeMs > Date.now() - 60_000) return;
  // dist/ newer than every file under src/ is what a build would write again. Without this, every
  // file of a multi-file `npx vitest run` (npx sets npm_lifecycle_event to `npx`) ran tsc once
  // dist/ was a minute old: 18 CPU-s each, rewriting dist/ while other files' daemons load it.
  if (existsSync(CLI) && newestUnder(join(REPO, 'src')) < statSync(CLI).mtimeMs) return;
  execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(REPO, 'tsconfig.build.json')], { stdio: 'inherit' });
}

/** The latest modification time of any file under `dir`. */
function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}
