// The HTTP connection pool the client is handed (never undici's global dispatcher), with every
// timeout explicit: an API that stops answering must become a classified error, not a hung poll.
import { Agent } from 'undici';
import type { ApiConfig } from '../domain.js';

export function createDispatcher(config: ApiConfig): Agent {
  return new Agent({
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
