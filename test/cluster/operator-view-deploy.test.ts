// What the shipped alert rules and dashboard have for a cluster (issue 15). That the rules do what
// they should (no page on a standby daemon or on another daemon's wallets; lease losses; wallets
// held by no daemon) is in autoclaim.rules.test.yml, run by promtool in
// test/deploy/prometheus-rules.test.ts; that their series exist on a live daemon, standby or not,
// in operator-view-live.test.ts.
import { describe, expect, it } from 'vitest';
import { loadDashboard, loadRules } from '../deploy/signals.js';

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
});
