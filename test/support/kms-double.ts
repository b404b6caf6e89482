// A double of AWS KMS on 127.0.0.1 speaking its JSON protocol (awsJson1_1: POST / with
// X-Amz-Target TrentService.<Operation>, JSON bodies, blobs in base64, errors as { __type }), for
// one key: GetPublicKey answers its SubjectPublicKeyInfo, Sign signs the RAW message with
// ED25519_SHA_512. Options make it a liar (signs other bytes, another key spec) or refuse.
import { createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export const KMS_KEY_ID = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
/**
 * Static test credentials (the SDK's default chain reads them from the environment), and the SDK's
 * own warning about Node 20 silenced, so a test can hold the daemon's stderr empty.
 */
export const KMS_TEST_ENV = {
  AWS_ACCESS_KEY_ID: 'AKIDEXAMPLETEST00000',
  AWS_SECRET_ACCESS_KEY: 'test-secret-not-real-0000000000000000000',
  AWS_EC2_METADATA_DISABLED: 'true',
};

export interface KmsDouble {
  url: string;
  seen: Array<{ target: string; body: Record<string, unknown>; signed: boolean }>;
  /** TCP connections made to it so far. */
  connections(): number;
  /** From now on every request is answered with this error (undefined: served again). */
  fail(error: { type: string; status: number } | undefined): void;
  /** From now on only requests signed with this access key id are let in (credentials rotated). */
  acceptKeyId(id: string): void;
  close(): Promise<void>;
}

export interface KmsDoubleOptions {
  seed: Uint8Array;
  publicKey: Uint8Array;
  keySpec?: string;
  /** Sign these bytes instead of the message asked for. */
  signOther?: Uint8Array;
  /** Answer every request with this error type (and status). */
  error?: { type: string; status: number };
}

export async function kmsDouble(opts: KmsDoubleOptions): Promise<KmsDouble> {
  const key = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(opts.seed).toString('base64url'), x: Buffer.from(opts.publicKey).toString('base64url') }, format: 'jwk' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  const seen: KmsDouble['seen'] = [];
  let failing = opts.error;
  let keyId: string | undefined;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const body = (raw === '' ? {} : JSON.parse(raw)) as Record<string, unknown>;
      // The SDK signs every request (SigV4) with the credentials of its chain.
      seen.push({ target, body, signed: String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 Credential=AKIDEXAMPLETEST00000/') });
      const reply = (status: number, o: unknown, type?: string) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', ...(type !== undefined ? { 'x-amzn-errortype': type } : {}) });
        res.end(JSON.stringify(o));
      };
      if (req.method !== 'POST' || req.url !== '/') return reply(404, { __type: 'UnknownOperationException' }, 'UnknownOperationException');
      if (keyId !== undefined && !String(req.headers.authorization ?? '').startsWith(`AWS4-HMAC-SHA256 Credential=${keyId}/`)) {
        return reply(400, { __type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' }, 'UnrecognizedClientException');
      }
      if (failing !== undefined) return reply(failing.status, { __type: failing.type, message: 'refused by the double' }, failing.type);
      if (body.KeyId !== KMS_KEY_ID) return reply(400, { __type: 'NotFoundException', message: `Key '${String(body.KeyId)}' does not exist` }, 'NotFoundException');
      if (target === 'TrentService.GetPublicKey') {
        return reply(200, {
          KeyId: KMS_KEY_ID,
          KeySpec: opts.keySpec ?? 'ECC_NIST_EDWARDS25519',
          KeyUsage: 'SIGN_VERIFY',
          PublicKey: spki.toString('base64'),
          SigningAlgorithms: ['ED25519_SHA_512', 'ED25519_PH_SHA_512'],
        });
      }
      if (target === 'TrentService.Sign') {
        if (body.MessageType !== 'RAW' || body.SigningAlgorithm !== 'ED25519_SHA_512') return reply(400, { __type: 'ValidationException', message: 'expected RAW, ED25519_SHA_512' }, 'ValidationException');
        const message = opts.signOther ?? Buffer.from(String(body.Message), 'base64');
        return reply(200, { KeyId: KMS_KEY_ID, Signature: sign(null, message, key).toString('base64'), SigningAlgorithm: 'ED25519_SHA_512' });
      }
      return reply(400, { __type: 'UnknownOperationException' }, 'UnknownOperationException');
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    connections: () => connections,
    fail: (error) => {
      failing = error;
    },
    acceptKeyId: (id) => {
      keyId = id;
    },
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
