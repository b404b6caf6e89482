// The shipped Grafana dashboard: importable as is (the datasource is a variable, never a fixed
// uid), the panels the operator needs, laid out without overlap. That its queries parse is checked
// by promtool (prometheus-rules.test.ts); that their series exist, against a live daemon
// (test/e2e/operator-signals.test.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_FILE, dashboardExpressions, loadDashboard } from './signals.js';

describe('deploy/grafana/autoclaim.json', () => {
  const dash = loadDashboard();
  const panels = dash.panels.filter((p) => p.type !== 'row');

  it('takes its Prometheus datasource from a variable: every panel and query uses ${DS_PROMETHEUS}', () => {
    expect(dash.templating.list.find((v) => v.name === 'DS_PROMETHEUS')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const p of panels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
      for (const t of p.targets ?? []) expect(t.datasource, p.title).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
    }
    // No datasource uid from somebody's Grafana anywhere in the file.
    const uids = [...readFileSync(DASHBOARD_FILE, 'utf8').matchAll(/"uid": "([^"]*)"/g)].map((m) => m[1]);
    expect(new Set(uids)).toEqual(new Set(['-- Grafana --', '${DS_PROMETHEUS}', 'autoclaim']));
  });

  it('has the panels an operator needs', () => {
    const titles = dash.panels.map((p) => p.title);
    for (const want of [/^Fleet health$/, /^Stale wallets$/, /^Signing paused$/, /^SOL moved by action$/, /^Pending by wallet \(top 10\)$/, /^Unknown steps open$/, /^Poll latency$/, /^Rate-limit waits$/]) {
      expect(titles.some((t) => want.test(t)), String(want)).toBe(true);
    }
    // Top-k: bounded whatever the fleet size, so it works with per-wallet series off.
    expect(panels.find((p) => p.title.startsWith('Pending by wallet'))?.targets?.[0]?.expr).toMatch(/^topk\(10, autoclaim_top_pending_sol\{/);
  });

  it('has unique panel ids and panels that fit the 24-column grid without overlapping', () => {
    const ids = dash.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const p of dash.panels) {
      const { x, y, w, h } = p.gridPos;
      expect(x + w, p.title).toBeLessThanOrEqual(24);
      for (let i = x; i < x + w; i++) {
        for (let j = y; j < y + h; j++) {
          const cell = `${i},${j}`;
          expect(cells.has(cell), `${p.title} overlaps at ${cell}`).toBe(false);
          cells.add(cell);
        }
      }
    }
  });

  it('filters every query by the instance variable', () => {
    for (const q of dashboardExpressions().filter((e) => !e.name.startsWith('variable '))) {
      expect(q.expr, q.name).toContain('instance=~"$instance"');
    }
  });
});
