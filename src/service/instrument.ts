// Connects the daemon's hooks (cycle observer, step outcomes, HTTP exchanges, limiter waits) to
// the Prometheus metrics, so the core never imports prom-client.
import { SIGNED_OPS, type Clock, type EndpointConfig, type SignedOp } from '../domain.js';
import type { StepEvent } from '../worker/executor.js';
import type { CycleObserver } from '../worker/wallet-cycle.js';
import type { Metrics } from './metrics.js';

export interface Instruments {
  cycleObserver: CycleObserver;
  onStep: (e: StepEvent) => void;
  onRequest: (info: { method: string; url: string; status: number | undefined; seconds: number }) => void;
  /** Call after each cycle with the limiter's running total of waited ms. */
  sampleLimiter: (waitedMsTotal: number) => void;
}

export function instrument(metrics: Metrics, opts: { clock: Clock; endpoints: () => Record<SignedOp, EndpointConfig> }): Instruments {
  let lastWaited = 0;
  return {
    cycleObserver: {
      pollOk: (wallet, summary) => metrics.pollOk(wallet.name, summary, opts.clock.now()),
      pollFailed: (wallet) => metrics.pollFailed(wallet.name),
      planRecorded: (rule) => metrics.plan(rule, 'created'),
    },
    onStep: (e) => (e.state === 'anomaly' ? metrics.anomaly(e.kind) : metrics.step(e.kind, e.state)),
    onRequest: ({ method, url, status, seconds }) => metrics.request(operationOf(method, url, opts.endpoints()), status, seconds),
    sampleLimiter: (total) => {
      if (total > lastWaited) metrics.rateLimitWait(total - lastWaited);
      lastWaited = total;
    },
  };
}

/** A low-cardinality label for a request: never the wallet address or query string. */
export function operationOf(method: string, url: string, endpoints: Record<SignedOp, EndpointConfig>): string {
  const path = new URL(url).pathname;
  if (method === 'GET') {
    if (path.includes('/rewards/wallet/')) return 'summary';
    if (path.endsWith('/rewards/leaderboard')) return 'leaderboard';
    if (path.endsWith('/health')) return 'health';
    return 'other';
  }
  for (const op of SIGNED_OPS) {
    if (endpoints[op].method === method && path.endsWith(endpoints[op].path)) return op;
  }
  return 'other';
}
