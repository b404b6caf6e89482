// The dispatcher renews a connection that is never idle (helper 38): under steady load (requests
// back to back, never the 4 s idle that closes a keep-alive connection) the client itself closes
// each connection after MAX_REQUESTS_PER_CONNECTION requests, so the next one connects again and
// looks the API's host up afresh (a failover behind DNS is seen). Before, one connection carried
// every request for as long as the server kept it open. A real server on loopback counts the TCP
// connections and what each one carried; counts, not times.
import { request, type Dispatcher } from 'undici';
import { afterEach, expect, it } from 'vitest';
import { createDispatcher, MAX_REQUESTS_PER_CONNECTION } from '../../src/api/dispatcher.js';
import { apiConfig } from './helpers.js';
import { countingServer as startCountingServer, type CountingServer } from '../support/counting-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A loopback server counting what each TCP connection carried; `close(n)`: answer the n-th request with `connection: close`. */
async function countingServer(close: (n: number) => boolean = () => false): Promise<CountingServer> {
  const server = await startCountingServer({ close });
  cleanups.push(server.close);
  return server;
}

/** `total` requests, each sent as soon as the one before is answered: never idle. */
async function backToBack(dispatcher: Dispatcher, origin: string, total: number): Promise<void> {
  for (let i = 0; i < total; i++) {
    const res = await request(`${origin}/v1/health`, { dispatcher });
    expect(res.statusCode).toBe(200);
    await res.body.text();
  }
}

it('requests back to back are spread over new connections, none carrying more than the bound plus the one that closes it', async () => {
  const server = await countingServer();
  const dispatcher = createDispatcher(apiConfig({ connections: 1 }));
  cleanups.push(() => dispatcher.close());

  const total = 3 * (MAX_REQUESTS_PER_CONNECTION + 1) + 10;
  await backToBack(dispatcher, server.origin, total);

  const carried = server.carried();
  expect(carried.reduce((a, b) => a + b, 0)).toBe(total);
  expect(carried.length).toBe(4);
  for (const n of carried) expect(n).toBeLessThanOrEqual(MAX_REQUESTS_PER_CONNECTION + 1);
});

it.each([1, 16])("api.connections %i: a connection the server closes is replaced by one that carries on, not by a connection a request from then on (undici's Agent did that)", async (connections) => {
  // The server ends every 40th request's connection (as nginx's keepalive_requests does, at 1,000).
  const server = await countingServer((n) => n % 40 === 0);
  const dispatcher = createDispatcher(apiConfig({ connections }));
  cleanups.push(() => dispatcher.close());

  await backToBack(dispatcher, server.origin, 400);

  const carried = server.carried();
  expect(carried.reduce((a, b) => a + b, 0)).toBe(400);
  // Ten closes by the server, and the client's own bound: a score of connections at most (the
  // Agent's cascade opened one for nearly every request after the first close).
  expect(carried.length).toBeLessThanOrEqual(20);
});
