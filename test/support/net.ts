// A loopback port for tests that need one by number: bound on 127.0.0.1, then closed, so nothing
// listens on it. Use it as a port that refuses connections, or as one to hand to a config that
// does not take port 0 (free a moment ago; the test binds it soon after).
import { createServer } from 'node:net';

export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
