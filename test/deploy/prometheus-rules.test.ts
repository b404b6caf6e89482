// The shipped alert rules: valid (promtool check rules) and doing what their unit tests say
// (promtool test rules), and the dashboard's queries valid PromQL. Needs promtool (Debian's
// `prometheus` package; .ci/run installs it); without it these tests are skipped, saying why.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { concreteExpr, dashboardExpressions, RULES_FILE, RULES_TEST_FILE } from './signals.js';

function onPath(cmd: string): boolean {
  return spawnSync(cmd, ['--version'], { stdio: 'ignore' }).error === undefined;
}

const HAVE_PROMTOOL = onPath('promtool');
const WHY = HAVE_PROMTOOL ? '' : ' [SKIPPED: promtool is not on PATH; install it (apt-get install prometheus) to run these]';
// Said out loud: a skipped file is easy to miss in a green run.
if (!HAVE_PROMTOOL) console.warn(`test/deploy/prometheus-rules.test.ts:${WHY}`);

function promtool(args: string[], cwd: string): { status: number | null; output: string } {
  const r = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe(`the alert rules under promtool${WHY}`, () => {
  it.skipIf(!HAVE_PROMTOOL)('pass promtool check rules', () => {
    const r = promtool(['check', 'rules', RULES_FILE], dirname(RULES_FILE));
    expect(r.output).toContain('SUCCESS');
    expect(r.status, r.output).toBe(0);
  });

  it.skipIf(!HAVE_PROMTOOL)('pass their unit tests: promtool test rules autoclaim.rules.test.yml', () => {
    const r = promtool(['test', 'rules', RULES_TEST_FILE], dirname(RULES_TEST_FILE));
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('SUCCESS');
  });

  it.skipIf(!HAVE_PROMTOOL)('fail their unit tests when a rule is broken (the tests can fail)', () => {
    // The rule the docs used to ship: `and` across two outcome values never matches anything.
    const dir = mkdtempSync(join(tmpdir(), 'autoclaim-rules-'));
    try {
      const text = readFileSync(RULES_FILE, 'utf8');
      const fixed = /( +)sum without \(outcome\) \(rate\(autoclaim_polls_total\{outcome="failed"\}\[10m\]\)\) > 0\n\s+unless\n\s+sum without \(outcome\) \(rate\(autoclaim_polls_total\{outcome="ok"\}\[10m\]\)\) > 0/;
      expect(text).toMatch(fixed);
      const broken = text.replace(fixed, '$1rate(autoclaim_polls_total{outcome="failed"}[10m]) > 0 and rate(autoclaim_polls_total{outcome="ok"}[10m]) == 0');
      writeFileSync(join(dir, basename(RULES_FILE)), broken);
      copyFileSync(RULES_TEST_FILE, join(dir, basename(RULES_TEST_FILE)));
      const r = promtool(['test', 'rules', basename(RULES_TEST_FILE)], dir);
      expect(r.status).toBe(1);
      const failing = new Set([...r.output.matchAll(/alertname: (\w+)/g)].map((m) => m[1]));
      expect([...failing]).toEqual(['AutoclaimPollsFailing']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!HAVE_PROMTOOL)("has the dashboard's queries parse as PromQL", () => {
    const dir = mkdtempSync(join(tmpdir(), 'autoclaim-dash-'));
    try {
      // Variables (label_values(...)) are Grafana's own functions, not PromQL.
      const queries = dashboardExpressions().filter((q) => !q.name.startsWith('variable '));
      const rules = queries.map(({ expr }, i) => ({ record: `autoclaim_dashboard:query_${i}`, expr: concreteExpr(expr) }));
      expect(rules.length).toBeGreaterThan(10);
      const file = join(dir, 'dashboard.rules.yml');
      writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules }] }));
      const r = promtool(['check', 'rules', file], dir);
      expect(r.status, r.output).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
