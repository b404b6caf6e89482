// Process tests run dist/ (tsc's output). `npm test` builds first
// (pretest); a lone `npx vitest` run builds here, as `npm run build` does.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, REPO } from './helpers.js';

export function buildOnce(): void {
  if (existsSync(CLI) && process.env.npm_lifecycle_event === 'test') return;
  if (existsSync(CLI) && statSync(CLI).mtimeMs > Date.now() - 60_000) return;
  execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(REPO, 'tsconfig.build.json')], { stdio: 'inherit' });
}
