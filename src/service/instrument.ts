// Connects the process's events (polls, plans, step outcomes, HTTP exchanges) and the limiter's
// waits to the Prometheus metrics, so the core never imports prom-client.
import { SIGNED_OPS, type EndpointConfig, type PlanStatus, type SignedOp } from '../domain.js';
import type { AutoclaimEvents } from '../events.js';
import { inSol } from '../rules/amounts.js';
import { PLAN_OUTCOMES, STEP_OUTCOMES, type Metrics, type PlanOutcome, type StepOutcome } from './metrics.js';

export interface Instruments {
  /** Call after each cycle with the limiter's running total of waited ms. */
  sampleLimiter: (waitedMsTotal: number) => void;
  /** Stops listening to the events. */
  close: () => void;
}

/** Subscribes the metrics to `events`; the returned close unsubscribes them. */
export function instrument(metrics: Metrics, events: Pick<AutoclaimEvents, 'on'>, opts: { endpoints: () => Record<SignedOp, EndpointConfig> }): Instruments {
  let lastWaited = 0;
  const subscriptions = [
    events.on('poll:ok', ({ wallet, summary, at }) => metrics.pollOk(wallet, summary, at)),
    events.on('poll:failed', ({ wallet }) => metrics.pollFailed(wallet)),
    events.on('plan:recorded', ({ rule, dry }) => {
      metrics.planCreated(rule);
      // A dry-run plan is finished the moment it is recorded: nothing is ever sent for it.
      if (dry) metrics.planOutcome(rule, 'dry');
    }),
    events.on('plan:settled', ({ rule, status }) => {
      if (isPlanOutcome(status)) metrics.planOutcome(rule, status);
    }),
    events.on('step:outcome', (e) => {
      if (e.state === 'anomaly') {
        metrics.anomaly(e.kind);
        return;
      }
      if (!isStepOutcome(e.state)) return;
      metrics.step(e.kind, e.state);
      // What the server acknowledged (for a claim, what it said it claimed, bounded by the executor).
      if (e.state !== 'acknowledged' || e.amountLamports === undefined) return;
      if (inSol(e.kind)) metrics.actionSol(e.kind, e.amountLamports);
      else metrics.actionUnits(e.kind, e.symbol ?? '', e.amountLamports);
    }),
    events.on('signer:answered', ({ backend, outcome, code }) => metrics.signature(backend, outcome, code ?? '')),
    events.on('request:done', ({ method, url, status, seconds }) => metrics.request(operationOf(method, url, opts.endpoints()), status, seconds)),
  ];
  return {
    sampleLimiter: (total) => {
      if (total > lastWaited) metrics.rateLimitWait(total - lastWaited);
      lastWaited = total;
    },
    close: () => {
      for (const unsubscribe of subscriptions) unsubscribe();
    },
  };
}

function isPlanOutcome(status: PlanStatus): status is PlanOutcome {
  return (PLAN_OUTCOMES as readonly string[]).includes(status);
}

function isStepOutcome(state: string): state is StepOutcome {
  return (STEP_OUTCOMES as readonly string[]).includes(state);
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
