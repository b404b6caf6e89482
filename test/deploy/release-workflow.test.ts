// .github/workflows/release.yml is not run here (issue 27): what can be checked without GitHub is
// that it parses, that every npm script and file it names exists, and that it builds both the
// tarball and the image from this repository's Dockerfile.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO } from '../e2e/helpers.js';

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, { 'runs-on': string; steps: Step[]; needs?: string }>;
}

const workflow = parse(readFileSync(join(REPO, '.github/workflows/release.yml'), 'utf8')) as Workflow;
const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);
const runs = steps.flatMap((s) => (s.run ?? '').split('\n'));

describe('the release workflow', () => {
  it('parses, runs on a version tag, and every job has steps on a runner', () => {
    expect(workflow.on).toHaveProperty('push.tags', ['v*']);
    for (const [name, job] of Object.entries(workflow.jobs)) {
      expect(job['runs-on'], name).toMatch(/^ubuntu-/);
      expect(job.steps.length, name).toBeGreaterThan(0);
      for (const s of job.steps) expect(s.uses !== undefined || s.run !== undefined, JSON.stringify(s)).toBe(true);
    }
  });

  it('names only npm scripts that package.json has, and files that exist', () => {
    const named = runs.flatMap((l) => [...l.matchAll(/\bnpm run ([\w:-]+)/g)].map((m) => m[1]!));
    for (const n of named) expect(Object.keys(scripts), `npm run ${n}`).toContain(n);
    // `npm test` runs the test script, and `npm pack` its prepack, which must build dist/.
    expect(scripts['test']).toBeDefined();
    expect(runs.some((l) => /^\s*npm pack\b/.test(l))).toBe(true);
    expect(scripts['prepack']).toBe('npm run build');
    for (const f of runs.flatMap((l) => [...l.matchAll(/\bbash (\S+)/g)].map((m) => m[1]!))) expect(existsSync(join(REPO, f)), f).toBe(true);
    const ci = readFileSync(join(REPO, '.ci/run'), 'utf8');
    expect(ci).toMatch(/^npm test$/m);
  });

  it('builds the image from the Dockerfile, after the package job', () => {
    const build = steps.find((s) => s.uses?.startsWith('docker/build-push-action@'));
    expect(build?.with?.['file']).toBe('Dockerfile');
    expect(existsSync(join(REPO, 'Dockerfile'))).toBe(true);
    expect(workflow.jobs['image']?.needs).toBe('package');
  });

  it('checks the tarball it made: installs it, and runs commands the CLI has', () => {
    const cli = runs.filter((l) => l.includes('/bin/autoclaim"')).map((l) => l.trim());
    expect(cli.some((l) => l.endsWith('--version'))).toBe(true);
    expect(cli.some((l) => / service install --root /.test(l))).toBe(true);
    const program = readFileSync(join(REPO, 'src/cli/program.ts'), 'utf8');
    expect(program).toContain(".command('service')");
    expect(program).toContain(".command('install')");
  });
});
