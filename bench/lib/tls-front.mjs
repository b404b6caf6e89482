// HTTPS in front of the sandbox, as the real API is served: a TLS server on loopback that pipes
// each connection to the sandbox's plain HTTP port. It runs in the sandbox's process, so the
// daemon under test pays what a user's daemon pays (handshakes, record encryption, the TLS stream
// layers) and the front's own cost lands outside the measurement. The certificate is a throwaway
// P-256 one for 127.0.0.1 made by openssl; the daemon trusts it through NODE_EXTRA_CA_CERTS.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';

/** A TLS front for `target` (an http://127.0.0.1:port origin): { origin, caFile, connections, close }; connections() counts those accepted since the last reset. */
export async function startTlsFront(target) {
  const { hostname, port } = new URL(target);
  const dir = mkdtempSync(join(tmpdir(), 'autoclaim-bench-tls-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert,
      '-days', '2', '-subj', `/CN=${hostname}`, '-addext', `subjectAltName=IP:${hostname}`], { stdio: 'ignore' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the HTTPS front needs the openssl command to make its certificate: ${err.message}`);
  }
  const sockets = new Set();
  let accepted = 0;
  const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (tlsSocket) => {
    accepted += 1;
    const upstream = connect(Number(port), hostname);
    for (const s of [tlsSocket, upstream]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
      s.on('error', () => undefined); // either side hanging up ends both, below
    }
    tlsSocket.pipe(upstream).pipe(tlsSocket);
    tlsSocket.once('close', () => upstream.destroy());
    upstream.once('close', () => tlsSocket.destroy());
  });
  await new Promise((resolve, reject) => server.once('error', reject).listen(0, hostname, resolve));
  return {
    origin: `https://${hostname}:${server.address().port}`,
    caFile: cert,
    connections: ({ reset = false } = {}) => {
      const count = accepted;
      if (reset) accepted = 0;
      return count;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
