// What a reload (SIGHUP) cannot change in a running daemon: said, so the operator restarts.
import type { AppConfig } from '../domain.js';
import type { Logger } from '../log/logger.js';

export function warnRestartNeeded(current: AppConfig, next: AppConfig, logger: Logger): void {
  const connection = (a: AppConfig['api']) => JSON.stringify([a.timeoutMs, a.connectTimeoutMs, a.maxResponseBytes, a.connections, a.rateLimit]);
  const movedBase = next.api.baseUrl !== current.api.baseUrl && current.api.baseUrl.startsWith('http') && next.api.baseUrl !== 'sandbox';
  if (movedBase || connection(next.api) !== connection(current.api)) {
    logger.warn({ event: 'config.restart_needed', key: 'api' }, 'api connection settings changed (base_url, timeouts, connections, rate_limit); they take effect at the next restart');
  }
  const state = (s: AppConfig['state']) => JSON.stringify([s.path, s.url, s.leaseMs, s.passwordFile, s.queryTimeoutMs]);
  if (state(next.state) !== state(current.state)) {
    logger.warn({ event: 'config.restart_needed', key: 'state' }, 'state (path, url, lease, password_file or query_timeout) changed; it takes effect at the next restart');
  }
  if (next.cluster.maxClockSkewMs !== current.cluster.maxClockSkewMs) {
    logger.warn({ event: 'config.restart_needed', key: 'cluster' }, 'cluster.max_clock_skew changed; it takes effect at the next restart');
  }
  if (next.metrics.listen !== current.metrics.listen) {
    logger.warn({ event: 'config.restart_needed', key: 'metrics' }, 'metrics.listen changed; the listener is bound at start, so it moves at the next restart');
  }
  // The loggers of the running parts keep the level they were made with (a pino child does).
  if (next.log.level !== current.log.level) {
    logger.warn({ event: 'config.restart_needed', key: 'log' }, 'log.level changed; it takes effect at the next restart (--log-level and $AUTOCLAIM_LOG_LEVEL win over it)');
  }
}
