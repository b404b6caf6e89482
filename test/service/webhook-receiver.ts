// A loopback webhook receiver for the notifier tests: records every POST (headers, raw body, the
// parsed JSON), answers with `status`, and lets a test wait until enough has arrived. Every
// receiver started is stopped by stopReceivers(), which the test file calls in afterEach.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Post<B> {
  /** The request's path and query: a token in the URL (Telegram's) is checked here. */
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: B;
}

export interface Receiver<B> {
  url: string;
  posts: Array<Post<B>>;
  /** Resolves once `done()` holds, checked after each POST. */
  waitFor(done: () => boolean): Promise<void>;
}

const servers: Server[] = [];

export async function startReceiver<B>(opts: { path: string; status?: () => number; answer?: () => string }): Promise<Receiver<B>> {
  const posts: Array<Post<B>> = [];
  const waiters: Array<() => void> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      posts.push({ path: req.url ?? '', headers: req.headers, raw, body: JSON.parse(raw) as B });
      const status = opts.status?.() ?? 204;
      const answer = opts.answer?.() ?? '';
      res.writeHead(status, answer === '' ? {} : { 'content-type': 'application/json' }).end(answer);
      for (const w of waiters.splice(0)) w();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const waitFor = async (done: () => boolean): Promise<void> => {
    while (!done()) await new Promise<void>((r) => waiters.push(r));
  };
  return { url: `http://127.0.0.1:${port}${opts.path}`, posts, waitFor };
}

export async function stopReceivers(): Promise<void> {
  for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
}
