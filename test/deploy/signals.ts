// What the shipped alert rules and dashboard ask of /metrics: the series names and the label sets
// (equality matchers) their queries name, so a test can hold them against a live daemon's scrape.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export const DEPLOY = join(import.meta.dirname, '../../deploy');
export const RULES_FILE = join(DEPLOY, 'prometheus/autoclaim.rules.yml');
export const RULES_TEST_FILE = join(DEPLOY, 'prometheus/autoclaim.rules.test.yml');
export const DASHBOARD_FILE = join(DEPLOY, 'grafana/autoclaim.json');

interface RuleFile {
  groups: Array<{ name: string; rules: Array<{ alert?: string; record?: string; expr: string; for?: string }> }>;
}

export interface DashboardTarget {
  expr: string;
  datasource?: { type?: string; uid?: string };
}

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type?: string; uid?: string };
  targets?: DashboardTarget[];
}

export interface Dashboard {
  uid: string;
  title: string;
  panels: DashboardPanel[];
  templating: { list: Array<{ name: string; type: string; query?: unknown; definition?: string; datasource?: { uid?: string } }> };
}

export function loadRules(): RuleFile {
  return parse(readFileSync(RULES_FILE, 'utf8')) as RuleFile;
}

export function loadDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

export function ruleExpressions(): Array<{ name: string; expr: string }> {
  return loadRules().groups.flatMap((g) => g.rules.map((r) => ({ name: r.alert ?? r.record ?? '?', expr: r.expr })));
}

export function dashboardExpressions(): Array<{ name: string; expr: string }> {
  const d = loadDashboard();
  const out = d.panels.flatMap((p) => (p.targets ?? []).map((t, i) => ({ name: `${p.title} #${i + 1}`, expr: t.expr })));
  for (const v of d.templating.list) if (v.definition !== undefined) out.push({ name: `variable ${v.name}`, expr: v.definition });
  return out;
}

/** Grafana's variables replaced by what they stand for, so promtool can parse the query. */
export function concreteExpr(expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$__range', '1h').replaceAll('$instance', '.*');
}

/** The series a daemon must export: autoclaim's own, and the process metrics (not `up`, which Prometheus makes). */
export function seriesNames(expr: string): string[] {
  return [...new Set([...expr.matchAll(/\b((?:autoclaim|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1] ?? ''))];
}

export interface Selector {
  name: string;
  labels: Record<string, string>;
}

/** `name{label="value",...}` in a query: the equality matchers with a fixed value (not =~, not a variable). */
export function selectors(expr: string): Selector[] {
  const out: Selector[] = [];
  for (const m of expr.matchAll(/\b((?:autoclaim|process|nodejs)_[a-z0-9_]+)\s*\{([^}]*)\}/g)) {
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)\s*"([^"]*)"/g)) {
      const [, label = '', op, value = ''] = l;
      if (op === '=' && !value.includes('$')) labels[label] = value;
    }
    out.push({ name: m[1] ?? '', labels });
  }
  return out;
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition. */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] ?? ''] = l[2] ?? '';
    out.push({ name: m[1] ?? '', labels, value: Number(m[3]) });
  }
  return out;
}

/** What the rules and the dashboard name that the scrape lacks (empty when all is there). */
export function missingFrom(samples: Sample[], exprs: Array<{ name: string; expr: string }>): string[] {
  const names = new Set(samples.map((s) => s.name));
  const missing = new Set<string>();
  for (const { name: where, expr } of exprs) {
    for (const n of seriesNames(expr)) if (!names.has(n)) missing.add(`${n} (named by ${where})`);
    for (const sel of selectors(expr)) {
      const hit = samples.some((s) => s.name === sel.name && Object.entries(sel.labels).every(([k, v]) => s.labels[k] === v));
      if (!hit) missing.add(`${sel.name}${JSON.stringify(sel.labels)} (named by ${where})`);
    }
  }
  return [...missing];
}

export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}
