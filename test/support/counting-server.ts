// A loopback HTTP server that counts the TCP connections made to it and what each one carried:
// the way tests see how a client pools its connections (test/api/dispatcher.test.ts, the notice
// channels' test/service/notice-connections.test.ts). Counts, not times. Stops with the test's
// cleanup (`close`).
import http from 'node:http';
import type net from 'node:net';

export interface CountingServer {
  origin: string;
  /** Requests each connection carried, one entry per TCP connection ever made. */
  carried: () => number[];
  /** Connections open now. */
  open: () => number;
  close: () => Promise<void>;
}

/**
 * `close(n)`: answer the n-th request with `connection: close` (a receiver or proxy ending the
 * connection after it). `answer(n, path)`: called before the n-th answer, which waits for it (a slow
 * receiver). Its keep-alive timeout is longer than any test: only the client, or an answer's
 * `connection: close`, ends a connection.
 */
export async function countingServer(opts: { close?: (n: number) => boolean; answer?: (n: number, path: string) => Promise<void>; status?: number } = {}): Promise<CountingServer> {
  const perSocket = new Map<net.Socket, number>();
  const live = new Set<net.Socket>();
  let n = 0;
  const srv = http.createServer((req, res) => {
    perSocket.set(req.socket, (perSocket.get(req.socket) ?? 0) + 1);
    const k = (n += 1);
    req.resume();
    req.on('end', () => {
      void (opts.answer?.(k, req.url ?? '') ?? Promise.resolve()).then(() => {
        if (opts.close?.(k) === true) res.setHeader('connection', 'close');
        res.writeHead(opts.status ?? 200, { 'content-type': 'application/json' }).end('{}');
      });
    });
  });
  srv.keepAliveTimeout = 60_000;
  srv.on('connection', (socket: net.Socket) => {
    perSocket.set(socket, 0);
    live.add(socket);
    socket.on('close', () => live.delete(socket));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    carried: () => [...perSocket.values()],
    open: () => live.size,
    close: async () => {
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    },
  };
}
