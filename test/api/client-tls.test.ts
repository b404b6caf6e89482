// The API key goes only to a server whose certificate this machine trusts. Node reads
// NODE_TLS_REJECT_UNAUTHORIZED=0 at every TLS connect and then takes any certificate: a variable
// left in a shell profile, a systemd EnvironmentFile or the .env file autoclaim loads itself
// (dotenv sets what is not set) gave the bearer and every signed request to whoever answered.
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import { apiError } from './helpers.js';
import { loopbackClient, onStop, stopAll } from './loopback.js';

afterEach(stopAll);

const TLS_DIR = join(import.meta.dirname, '..', 'service', 'channels', 'tls');
const kp = generateKeypair();
const signer = signerFromSeed(kp.secretKey64.slice(0, 32));

/** An https server on 127.0.0.1 with a self-signed certificate (its name is right, its issuer unknown). */
async function untrusted() {
  const seen: Array<string | undefined> = [];
  const srv = https.createServer(
    { key: readFileSync(join(TLS_DIR, 'smtp-test.key')), cert: readFileSync(join(TLS_DIR, 'smtp-test.crt')) },
    (req, res) => {
      seen.push(req.headers.authorization);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"success"}'));
    },
  );
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onStop(async () => {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  const { port } = srv.address() as net.AddressInfo;
  return { base: `https://127.0.0.1:${port}/v1`, seen };
}

describe('TLS: the certificate is checked whatever the environment says', () => {
  it('NODE_TLS_REJECT_UNAUTHORIZED=0 does not send the bearer or a signed claim to an untrusted certificate', async () => {
    const srv = await untrusted();
    const before = process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
    process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = '0';
    try {
      const api = loopbackClient(srv.base, { readAttempts: 1 }, { apiKey: 'tls-api-key-0123456789abcdef' });
      const sent = apiError(api.send(api.prepare({ op: 'claim', wallet: kp.address }, signer, Date.now())));
      const outcome = await sent.catch((e: unknown) => e);
      expect(srv.seen).toEqual([]);
      // Refused at the handshake: the message names the request and the certificate, never the key.
      expect(String(outcome)).toMatch(/^ApiError: POST https:\/\/127\.0\.0\.1:\d+\/v1\/rewards\/claim : .*certificate/i);
      expect(String(outcome)).not.toContain('tls-api-key');
    } finally {
      if (before === undefined) delete process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
      else process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = before;
    }
  });
});
