// What a reload (SIGHUP) cannot change in a running daemon: said, so the operator restarts.
import type { AppConfig } from '../domain.js';
import type { Logger } from '../log/logger.js';

export function warnRestartNeeded(current: AppConfig, next: AppConfig, logger: Logger): void {
  const connection = (a: AppConfig['api']) => JSON.stringify([a.timeoutMs, a.connectTimeoutMs, a.maxResponseBytes, a.connections, a.rateLimit]);
  const movedBase = next.api.baseUrl !== current.api.baseUrl && current.api.baseUrl.startsWith('http') && next.api.baseUrl !== 'sandbox';
  if (movedBase || connection(next.api) !== connection(current.api)) {
    logger.warn({ event: 'config.restart_needed', key: 'api' }, 'api connection settings changed (base_url, timeouts, connections, rate_limit); they take effect at the next restart');
  }
  if (next.state.path !== current.state.path || next.state.url !== current.state.url || next.state.leaseMs !== current.state.leaseMs) {
    logger.warn({ event: 'config.restart_needed', key: 'state' }, 'state (path, url or lease) changed; it takes effect at the next restart');
  }
  if (next.cluster.maxClockSkewMs !== current.cluster.maxClockSkewMs) {
    logger.warn({ event: 'config.restart_needed', key: 'cluster' }, 'cluster.max_clock_skew changed; it takes effect at the next restart');
  }
}
