// A double of HashiCorp Vault's transit API for one ed25519 key named `treasury` on the mount
// `transit`, on 127.0.0.1: GET /v1/transit/keys/treasury answers the public key, POST
// /v1/transit/sign/treasury signs the base64 input (vault:v1:<base64>). Only TOKEN is let in (or
// those `accept` names). Used
// by the backend's tests (test/keys/vault.test.ts) and the daemon's e2e (test/e2e/key-backends).
import { createPrivateKey, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const TOKEN = 'hvs.CANARYvaulttoken0123456789abcdef';

export interface Transit {
  url: string;
  seen: Array<{ method: string; url: string; token: string | undefined; body: string }>;
  /** From now on every request is answered with this HTTP status (e.g. 503, sealed); undefined: served again. */
  fail(status: number | undefined): void;
  /** From now on only these tokens are let in (a token expired, another issued): TOKEN alone by default. */
  accept(tokens: string[]): void;
  close(): Promise<void>;
}

export async function transit(opts: { seed: Uint8Array; publicKey: Uint8Array; type?: string; status?: number }): Promise<Transit> {
  const key = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(opts.seed).toString('base64url'), x: Buffer.from(opts.publicKey).toString('base64url') }, format: 'jwk' });
  const seen: Transit['seen'] = [];
  let failing = opts.status;
  let accepted = new Set([TOKEN]);
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', token: req.headers['x-vault-token'] as string | undefined, body });
      const reply = (status: number, o: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(o));
      };
      if (!accepted.has(String(req.headers['x-vault-token']))) return reply(403, { errors: ['permission denied'] });
      if (failing !== undefined) return reply(failing, { errors: ['sealed'] });
      if (req.method === 'GET' && req.url === '/v1/transit/keys/treasury') {
        return reply(200, { data: { type: opts.type ?? 'ed25519', latest_version: 1, keys: { '1': { public_key: Buffer.from(opts.publicKey).toString('base64') } } } });
      }
      if (req.method === 'POST' && req.url === '/v1/transit/sign/treasury') {
        const input = Buffer.from((JSON.parse(body) as { input: string }).input, 'base64');
        return reply(200, { data: { signature: `vault:v1:${sign(null, input, key).toString('base64')}`, key_version: 1 } });
      }
      return reply(404, { errors: [] });
    });
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
    close: () => new Promise((r) => server.close(() => r())),
  };
}
