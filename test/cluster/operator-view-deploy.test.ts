// What the shipped alert rules and dashboard have for a cluster (issue 15). That the rules do what
// they should (no page on a standby daemon or on another daemon's wallets; lease losses; wallets
// held by no daemon) is in autoclaim.rules.test.yml, run by promtool in
// test/deploy/prometheus-rules.test.ts; that their series exist on a live daemon, standby or not,
// in operator-view-live.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { concreteExpr, loadDashboard, loadRules } from '../deploy/signals.js';

const HAVE_PROMTOOL = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).error === undefined;

describe('cluster alerts and panels', () => {
  const rules = loadRules().groups.flatMap((g) => g.rules);
  const byName = new Map(rules.map((r) => [r.alert ?? r.record, r]));

  it('alert on lost leases and on wallets held by no daemon', () => {
    expect(byName.get('AutoclaimLeaseLost')?.expr).toMatch(/increase\(autoclaim_lease_losses_total\[15m\]\) > 0/);
    expect(byName.get('AutoclaimWalletsUnowned')?.expr).toMatch(/autoclaim_wallets[\s\S]*autoclaim_leases_held/);
  });

  it('leave a standby daemon out of the no-successful-poll alert', () => {
    expect(byName.get('AutoclaimNoSuccessfulPoll')?.expr).toMatch(/unless on \(job, instance\)\s+\(autoclaim_leases_held == 0 and on \(job, instance\) autoclaim_cluster_daemons_live > 1\)/);
  });

  it('have a leases panel and a lease-losses panel', () => {
    const panels = loadDashboard().panels;
    const exprs = (title: string) => (panels.find((p) => p.title === title)?.targets ?? []).map((t) => t.expr).join('\n');
    expect(exprs('Leases held')).toMatch(/autoclaim_leases_held/);
    expect(exprs('Leases held')).toMatch(/autoclaim_cluster_daemons_live/);
    expect(exprs('Lease losses')).toMatch(/autoclaim_lease_losses_total/);
  });

  it.skipIf(!HAVE_PROMTOOL)('count the wallets of a cluster once, not once per daemon, beside daemons of their own (promtool)', () => {
    const expr = loadDashboard().panels.find((p) => p.title === 'Wallets')?.targets?.[0]?.expr ?? '';
    const dir = mkdtempSync(join(tmpdir(), 'autoclaim-wallets-'));
    try {
      writeFileSync(join(dir, 'r.yml'), stringify({ groups: [{ name: 'dashboard', rules: [{ record: 'wallets_shown', expr: concreteExpr(expr) }] }] }));
      const series = (name: string, labels: string, values: string) => ({ series: `${name}{${labels}}`, values });
      const test = (input: object[], value: number) => ({
        interval: '1m',
        input_series: input,
        promql_expr_test: [{ expr: 'wallets_shown', eval_time: '2m', exp_samples: [{ labels: 'wallets_shown', value }] }],
      });
      const solo = [series('autoclaim_wallets', 'job="s",instance="solo"', '3x3'), series('autoclaim_cluster_daemons_live', 'job="s",instance="solo"', '0x3')];
      const cluster = ['a', 'b'].flatMap((i) => [
        series('autoclaim_wallets', `job="c",instance="${i}"`, '4x3'),
        series('autoclaim_cluster_daemons_live', `job="c",instance="${i}"`, '2x3'),
      ]);
      writeFileSync(join(dir, 't.yml'), stringify({ rule_files: ['r.yml'], evaluation_interval: '1m', tests: [test([...solo, ...cluster], 7), test(solo, 3), test(cluster, 4)] }));
      const r = spawnSync('promtool', ['test', 'rules', 't.yml'], { cwd: dir, encoding: 'utf8' });
      expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
