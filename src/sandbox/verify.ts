// Everything a signed request must get right before the world is touched: bearer, body shape,
// timestamp window, wallet header = body wallet, canonical amount text, and an Ed25519 signature
// over the configured template in the configured encoding (S below L, as RFC 8032 says). Replays
// are refused by signature.
// A signature that does not verify is a 401 naming the signature: from the server's side a wrong
// key and a wrong message template look the same, and both mean "your request is wrong".
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { AmountError, parseCanonicalSol, type Lamports } from '../amount.js';
import type { Clock, SignatureEncoding } from '../domain.js';
import { decodeAddress } from './derive.js';
import { RawNumber, field, isPlainObject, parseLossless } from './json.js';
import { HttpError } from './reply.js';
import type { SandboxEndpoint, SandboxOp } from './world-types.js';

export interface VerifyConfig {
  apiKey: string | undefined;
  headerPrefix: string;
  tsWindowSec: number;
  endpoints: Record<SandboxOp, SandboxEndpoint>;
  signatureEncoding: SignatureEncoding;
  clock: Clock;
  /** The world's current epoch, for templates that sign `{epoch}`. */
  epoch: () => string;
}

export interface SignedRequest {
  op: SandboxOp;
  wallet: string;
  symbol: string | undefined;
  /** Exactly the number text of the body, which is what was signed. */
  amountText: string | undefined;
  amountLamports: Lamports | undefined;
  tsSec: number;
  /** As sent, for the ledger. */
  signature: string;
  /** The decoded signature bytes in hex: one key per signature whatever its text encoding. */
  replayKey: string;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function singleHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  if (Array.isArray(v)) throw new HttpError(400, 'invalid_header', `header ${name} given more than once`);
  return v;
}

/**
 * Signed requests need the bearer when an API key is set; reads may omit it. A bearer that is
 * present but wrong is refused either way: it is a misconfigured client, and silence would hide it.
 */
export function checkBearer(headers: IncomingHttpHeaders, apiKey: string | undefined, required: boolean): void {
  if (apiKey === undefined) return;
  const auth = singleHeader(headers, 'authorization');
  if (auth === undefined) {
    if (required) throw new HttpError(401, 'unauthorized', 'missing bearer token', { 'www-authenticate': 'Bearer' });
    return;
  }
  const m = /^Bearer (.+)$/.exec(auth);
  // Compare digests so the comparison takes the same time whatever the lengths.
  if (!m?.[1] || !timingSafeEqual(digest(m[1]), digest(apiKey))) {
    throw new HttpError(401, 'unauthorized', 'invalid bearer token', { 'www-authenticate': 'Bearer' });
  }
}

function requireString(body: Record<string, unknown>, key: string): string {
  const v = field(body, key);
  if (typeof v !== 'string' || v.length === 0) throw new HttpError(400, 'invalid_body', `body field "${key}" must be a non-empty string`);
  return v;
}

function decodeSignature(text: string, encoding: SignatureEncoding): Uint8Array | undefined {
  try {
    switch (encoding) {
      case 'base58':
        return bs58.decode(text);
      case 'base64': {
        const buf = Buffer.from(text, 'base64');
        // Buffer.from ignores junk characters; only a round-trip proves the text was base64.
        return buf.toString('base64') === text ? new Uint8Array(buf) : undefined;
      }
      case 'hex':
        return /^(?:[0-9a-fA-F]{2})+$/.test(text) ? new Uint8Array(Buffer.from(text, 'hex')) : undefined;
    }
  } catch {
    return undefined;
  }
}

/** Verifies a signed request; throws HttpError with the status the refusal deserves. */
export function verifySigned(op: SandboxOp, headers: IncomingHttpHeaders, rawBody: string, cfg: VerifyConfig): SignedRequest {
  checkBearer(headers, cfg.apiKey, true);

  const contentType = singleHeader(headers, 'content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    throw new HttpError(415, 'unsupported_media_type', 'Content-Type must be application/json');
  }
  const body = parseLossless(rawBody);
  if (!isPlainObject(body)) throw new HttpError(400, 'invalid_body', 'body must be a JSON object');

  const wallet = requireString(body, 'wallet');
  const signature = requireString(body, 'signature');
  const needsAmount = op !== 'claim';
  const symbol = needsAmount || field(body, 'symbol') !== undefined ? requireString(body, 'symbol') : undefined;

  let amountText: string | undefined;
  let amountLamports: Lamports | undefined;
  const amount = field(body, 'amount');
  if (needsAmount || amount !== undefined) {
    if (!(amount instanceof RawNumber)) throw new HttpError(400, 'invalid_amount', 'amount must be a JSON number');
    amountText = amount.text;
    try {
      amountLamports = parseCanonicalSol(amountText);
    } catch (err) {
      if (!(err instanceof AmountError)) throw err;
      throw new HttpError(400, 'invalid_amount', `amount ${amountText}: ${err.message}`);
    }
  }

  const prefix = cfg.headerPrefix.toLowerCase();
  const tsText = singleHeader(headers, `${prefix}-ts`);
  if (tsText === undefined) throw new HttpError(400, 'missing_header', `missing ${prefix}-ts header`);
  if (!/^(0|[1-9][0-9]{0,14})$/.test(tsText)) throw new HttpError(400, 'invalid_timestamp', `${prefix}-ts must be integer Unix seconds`);
  const tsSec = Number(tsText);
  const nowSec = cfg.clock.now() / 1000;
  if (Math.abs(tsSec - nowSec) > cfg.tsWindowSec) {
    throw new HttpError(400, 'stale_timestamp', `${prefix}-ts is more than ${cfg.tsWindowSec}s away from the server clock`);
  }
  const walletHeader = singleHeader(headers, `${prefix}-wallet`);
  if (walletHeader === undefined) throw new HttpError(400, 'missing_header', `missing ${prefix}-wallet header`);
  if (walletHeader !== wallet) throw new HttpError(400, 'wallet_mismatch', `${prefix}-wallet header differs from the body's wallet`);

  const publicKey = decodeAddress(wallet);
  if (!publicKey) throw new HttpError(400, 'invalid_address', 'wallet is not a base58 Ed25519 public key');

  let message: string;
  try {
    message = renderMessage(cfg.endpoints[op].message, { wallet, ts: tsText, symbol, amount: amountText, epoch: cfg.epoch(), op });
  } catch (err) {
    throw new HttpError(400, 'invalid_body', err instanceof Error ? err.message : 'cannot render the signed message');
  }
  const sig = decodeSignature(signature, cfg.signatureEncoding);
  if (!sig || sig.length !== nacl.sign.signatureLength || !canonicalS(sig)) {
    throw new HttpError(401, 'invalid_signature', `signature is not a ${cfg.signatureEncoding} Ed25519 signature`);
  }
  if (!nacl.sign.detached.verify(new TextEncoder().encode(message), sig, publicKey)) {
    throw new HttpError(401, 'invalid_signature', 'signature does not verify for this wallet and message');
  }
  return { op, wallet, symbol, amountText, amountLamports, tsSec, signature, replayKey: Buffer.from(sig).toString('hex') };
}

/** L, the order of Ed25519's base point. */
const ED25519_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n;

/**
 * RFC 8032 §5.1.7: a signature whose S (its last 32 bytes, little-endian) is not below L is invalid.
 * tweetnacl does not ask, and verifies S + L as it verifies S: the same signature in other bytes,
 * which the replay guard (keyed by the bytes) took for a new one and applied a second time.
 */
function canonicalS(sig: Uint8Array): boolean {
  let s = 0n;
  for (let i = sig.length - 1; i >= 32; i--) s = (s << 8n) | BigInt(sig[i] ?? 0);
  return s < ED25519_ORDER;
}

/** What a message template may name; the client's templates use the same words. */
const MESSAGE_VARIABLES = ['wallet', 'ts', 'epoch', 'symbol', 'amount', 'op'] as const;
type MessageVariable = (typeof MESSAGE_VARIABLES)[number];

/** Placeholders a template names that the sandbox cannot fill: checked when the sandbox starts. */
export function unknownMessageVariables(template: string): string[] {
  return [...template.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1] ?? '').filter((name) => !(MESSAGE_VARIABLES as readonly string[]).includes(name));
}

/** The server's own rendering of a template; a placeholder with no value (a claim's `{amount}`) is refused. */
function renderMessage(template: string, vars: Partial<Record<MessageVariable, string>>): string {
  return template.replace(/\{([^{}]*)\}/g, (_m, name: string) => {
    const v = (MESSAGE_VARIABLES as readonly string[]).includes(name) ? vars[name as MessageVariable] : undefined;
    if (v === undefined) throw new Error(`message template uses {${name}} but this request has no value for it`);
    return v;
  });
}

/**
 * Signatures already applied. Entries older than the timestamp window can be forgotten: a request
 * carrying them is refused as stale before replay is even asked about.
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly windowSec: number,
  ) {}

  has(key: string): boolean {
    return this.seen.has(key);
  }

  remember(key: string, tsSec: number): void {
    this.seen.set(key, tsSec);
    if (this.seen.size > 10_000) {
      const oldest = this.clock.now() / 1000 - this.windowSec - 1;
      for (const [k, ts] of this.seen) if (ts < oldest) this.seen.delete(k);
    }
  }
}
