// A double of HashiCorp Vault's transit API for one ed25519 key named `treasury` on the mount
// `transit`, on 127.0.0.1: GET /v1/transit/keys/treasury answers the public key, POST
// /v1/transit/sign/treasury signs the base64 input (vault:v1:<base64>). Only TOKEN is let in (or
// those `accept` names). Used
// by the backend's tests (test/keys/vault.test.ts) and the daemon's e2e (test/e2e/key-backends).
import { createPrivateKey, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const TOKEN = 'hvs.CANARYvaulttoken0123456789abcdef';

export interface Transit {
  url: string;
  seen: Array<{ method: string; url: string; token: string | undefined; body: string }>;
  /** From now on every request is answered with this HTTP status (e.g. 503, sealed); undefined: served again. */
  fail(status: number | undefined): void;
  /** From now on only these tokens are let in (a token expired, another issued): TOKEN alone by default. */
  accept(tokens: string[]): void;
  /** The token in use runs out (its TTL) after this many more signatures: nothing is let in after them. */
  expireAfterSigns(n: number): void;
  /** TCP connections made to it so far, and open now (how the client pools them). */
  connections(): { made: number; open: number };
  close(): Promise<void>;
}

/**
 * `rotated`: the key was rotated once (`vault write -f transit/keys/treasury/rotate`, or its
 * auto_rotate_period): version 2 is this other key and the latest; version 1 signs when asked by
 * key_version.
 */
/** `closeEvery`: every n-th answer says `connection: close` (a proxy in front ending connections). */
export async function transit(opts: { seed: Uint8Array; publicKey: Uint8Array; type?: string; status?: number; rotated?: { seed: Uint8Array; publicKey: Uint8Array }; closeEvery?: number }): Promise<Transit> {
  const keyOf = (k: { seed: Uint8Array; publicKey: Uint8Array }) =>
    createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(k.seed).toString('base64url'), x: Buffer.from(k.publicKey).toString('base64url') }, format: 'jwk' });
  const versions = [opts, ...(opts.rotated === undefined ? [] : [opts.rotated])];
  const latest = versions.length;
  const seen: Transit['seen'] = [];
  let failing = opts.status;
  let accepted = new Set([TOKEN]);
  let signsLeft = Infinity;
  let answers = 0;
  let made = 0;
  let open = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', token: req.headers['x-vault-token'] as string | undefined, body });
      const reply = (status: number, o: unknown) => {
        answers += 1;
        if (opts.closeEvery !== undefined && answers % opts.closeEvery === 0) res.setHeader('connection', 'close');
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(o));
      };
      if (!accepted.has(String(req.headers['x-vault-token']))) return reply(403, { errors: ['permission denied'] });
      if (failing !== undefined) return reply(failing, { errors: ['sealed'] });
      if (req.method === 'GET' && req.url === '/v1/transit/keys/treasury') {
        const keys = Object.fromEntries(versions.map((v, i) => [String(i + 1), { public_key: Buffer.from(v.publicKey).toString('base64') }]));
        return reply(200, { data: { type: opts.type ?? 'ed25519', latest_version: latest, keys } });
      }
      if (req.method === 'POST' && req.url === '/v1/transit/sign/treasury') {
        const asked = JSON.parse(body) as { input: string; key_version?: number };
        const version = asked.key_version ?? latest;
        const v = versions[version - 1];
        if (v === undefined) return reply(400, { errors: [`invalid key version ${version}`] });
        const input = Buffer.from(asked.input, 'base64');
        if (--signsLeft <= 0) accepted = new Set();
        return reply(200, { data: { signature: `vault:v${version}:${sign(null, input, keyOf(v)).toString('base64')}`, key_version: version } });
      }
      return reply(404, { errors: [] });
    });
  });
  server.on('connection', (socket: Socket) => {
    made += 1;
    open += 1;
    socket.on('close', () => (open -= 1));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    fail: (status) => {
      failing = status;
    },
    accept: (tokens) => {
      accepted = new Set(tokens);
    },
    expireAfterSigns: (n) => {
      signsLeft = n;
    },
    connections: () => ({ made, open }),
    close: () => new Promise((r) => server.close(() => r())),
  };
}
