// A TCP relay on 127.0.0.1 in front of a server (PostgreSQL), for tests of a network that fails the
// way real ones do: `blackhole(true)` stops passing bytes both ways without closing anything (a
// partition that drops packets, a half-open connection), so only deadlines and keepalives notice;
// `blackhole(false)` passes them again, on the same connections and new ones. Nothing is dropped:
// the relay stops reading, as a partition delays TCP's retransmissions, so what was held back
// arrives after the heal (unless an end gave up and closed first).
import net from 'node:net';

export interface TcpProxy {
  readonly port: number;
  blackhole(on: boolean): void;
  close(): Promise<void>;
}

export async function tcpProxy(to: { host: string; port: number }): Promise<TcpProxy> {
  let silent = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(to.port, to.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    // Not pipe(): its backpressure handling would resume a socket paused by blackhole().
    client.on('data', (b: Buffer) => void upstream.write(b));
    upstream.on('data', (b: Buffer) => void client.write(b));
    if (silent) for (const s of [client, upstream]) s.pause();
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    blackhole: (on) => {
      silent = on;
      for (const s of sockets) {
        if (on) s.pause();
        else s.resume();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
