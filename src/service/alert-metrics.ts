// autoclaim_alerts_open{alert,severity}: the daemon's own alerts (alert-kinds.ts) as one series
// each, 0 while closed, so the Prometheus rule AutoclaimAlertOpen fires on exactly what the daemon
// logs and posts, with the thresholds of its config.
import { Gauge, type Registry } from 'prom-client';
import { ALERT_KINDS, type AlertKind } from './alert-kinds.js';

export function registerAlertMetrics(registers: Registry[], openKinds: (() => ReadonlyMap<string, number>) | undefined): void {
  new Gauge({
    name: 'autoclaim_alerts_open',
    help: "Open episodes of each of the daemon's alerts (alert.opened not yet followed by alert.closed), by alert and severity.",
    labelNames: ['alert', 'severity'] as const,
    registers,
    collect() {
      const open = openKinds?.();
      for (const alert of Object.keys(ALERT_KINDS) as AlertKind[]) {
        this.set({ alert, severity: ALERT_KINDS[alert].severity }, open?.get(alert) ?? 0);
      }
    },
  });
}
