// Test-side client for the sandbox: real Ed25519 signatures with tweetnacl and raw undici requests,
// with no dependency on src/api (the sandbox must stand on its own as the client's test bench).
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { Agent, request, type Dispatcher } from 'undici';
import type { Clock, SignatureEncoding } from '../../src/domain.js';

export interface TestWallet {
  address: string;
  secretKey: Uint8Array;
}

export function testWallet(label: string): TestWallet {
  const pair = nacl.sign.keyPair.fromSeed(new Uint8Array(createHash('sha256').update(`test-wallet-${label}`).digest()));
  return { address: bs58.encode(pair.publicKey), secretKey: pair.secretKey };
}

export function encodeSignature(sig: Uint8Array, encoding: SignatureEncoding): string {
  if (encoding === 'base58') return bs58.encode(sig);
  return Buffer.from(sig).toString(encoding);
}

export function sign(message: string, wallet: TestWallet, encoding: SignatureEncoding = 'base58'): string {
  return encodeSignature(nacl.sign.detached(new TextEncoder().encode(message), wallet.secretKey), encoding);
}

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

export async function send(
  dispatcher: Dispatcher,
  url: string,
  init: { method?: Dispatcher.HttpMethod; headers?: Record<string, string>; body?: string; headersTimeout?: number; bodyTimeout?: number } = {},
): Promise<Response> {
  const res = await request(url, {
    dispatcher,
    method: init.method ?? 'GET',
    headers: init.headers,
    body: init.body,
    headersTimeout: init.headersTimeout,
    bodyTimeout: init.bodyTimeout,
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

export interface SignedInit {
  wallet: TestWallet;
  /** Seconds; default the clock's now. */
  ts?: number;
  symbol?: string;
  /** The exact number text written in the body (and signed unless signedAmount is given). */
  amount?: string;
  signedAmount?: string;
  apiKey?: string | null;
  signer?: TestWallet;
  headerWallet?: string;
  encoding?: SignatureEncoding;
  message?: string;
  /** Replace the whole body text. */
  body?: string;
  signature?: string;
  headers?: Record<string, string>;
  headersTimeout?: number;
  bodyTimeout?: number;
  path?: string;
  method?: Dispatcher.HttpMethod;
}

export interface Signed {
  url: string;
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  body: string;
  signature: string;
}

export type TestOp = 'claim' | 'deposit' | 'mint' | 'withdraw' | 'burn';

/** Builds a signed claim (no symbol) or deposit/mint/withdraw/burn request exactly as SPEC §1 describes. */
export function buildSigned(baseUrl: string, clock: Clock, op: TestOp, init: SignedInit): Signed {
  const ts = String(init.ts ?? Math.floor(clock.now() / 1000));
  const w = init.wallet.address;
  const message =
    init.message ?? (op === 'claim' ? `${w}|${ts}` : `${w}|${init.symbol ?? ''}|${init.signedAmount ?? init.amount ?? ''}|${ts}`);
  const signature = init.signature ?? sign(message, init.signer ?? init.wallet, init.encoding);
  const body =
    init.body ??
    (op === 'claim'
      ? `{"wallet":${JSON.stringify(w)},"signature":${JSON.stringify(signature)}}`
      : `{"symbol":${JSON.stringify(init.symbol)},"amount":${init.amount},"wallet":${JSON.stringify(w)},"signature":${JSON.stringify(signature)}}`);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-svc-ts': ts,
    'x-svc-wallet': init.headerWallet ?? w,
    ...(init.apiKey === null || init.apiKey === undefined ? {} : { authorization: `Bearer ${init.apiKey}` }),
    ...init.headers,
  };
  const path = init.path ?? { claim: '/rewards/claim', deposit: '/actions/deposit', mint: '/actions/mint', withdraw: '/actions/withdraw', burn: '/actions/burn' }[op];
  return { url: `${baseUrl}${path}`, method: init.method ?? 'POST', headers, body, signature };
}

export function sendSigned(dispatcher: Dispatcher, s: Signed, timeouts: { headersTimeout?: number; bodyTimeout?: number } = {}): Promise<Response> {
  return send(dispatcher, s.url, { method: s.method, headers: s.headers, body: s.body, ...timeouts });
}

/** A private connection pool per test file, closed with it. */
export function testAgent(): Agent {
  return new Agent({ connections: 4 });
}

export function errorCode(json: unknown): string | undefined {
  const e = (json as { error?: { code?: unknown } } | undefined)?.error;
  return typeof e?.code === 'string' ? e.code : undefined;
}
