// The HTTP connection pool the client is handed (never undici's global dispatcher), with every
// timeout explicit: an API that stops answering must become a classified error, not a hung poll.
import type { Agent } from 'undici';
import type { ApiConfig } from '../domain.js';
import { lazyRequire } from '../lazy-require.js';

const leanAgent = lazyRequire<typeof Agent>('undici/lib/dispatcher/agent.js');
const wholeUndici = lazyRequire<typeof import('undici')>('undici');

/**
 * undici's Agent alone, without the rest of undici: its index also loads fetch, WebSocket,
 * EventSource, the HTTP cache, mocks, proxy agents and the request/stream APIs, ~6 MB of RSS in
 * every process that polls. The client dispatches with a handler of its own (exchange.ts), so the
 * Agent is all it needs. This is the file undici's own index takes it from; if a release moves it,
 * the whole package is loaded instead (test/api/dispatcher.test.ts says which was taken).
 */
export function undiciAgent(): { Agent: typeof Agent; lean: boolean } {
  try {
    return { Agent: leanAgent(), lean: true };
  } catch {
    return { Agent: wholeUndici().Agent, lean: false };
  }
}

export function createDispatcher(config: ApiConfig): Agent {
  const { Agent: AgentClass } = undiciAgent();
  return new AgentClass({
    connect: { timeout: config.connectTimeoutMs },
    headersTimeout: config.timeoutMs,
    bodyTimeout: config.timeoutMs,
    connections: Math.max(1, config.connections),
    pipelining: 1,
    // Shorter than common server idle timeouts (Node's 5 s), so a POST is not written onto a
    // socket the server is closing: that race turns a deposit into an "unknown" step.
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 60_000,
    keepAliveTimeoutThreshold: 2_000,
    maxResponseSize: config.maxResponseBytes,
  });
}
