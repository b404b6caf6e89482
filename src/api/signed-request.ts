// Builds a signed action request without sending it, in two halves: everything but the signature
// (recorded as `sending` before the wallet's signer is asked, SPEC §7), then the body with it,
// recorded before the first byte goes out (SPEC §2).
import type { ApiConfig, Lamports, SignedOp } from '../domain.js';
import { AutoclaimError, KeyError } from '../errors.js';
import { formatSol } from '../amount.js';
import { encodeSignature, type Signer } from '../keys/signer.js';
import { messageFor, templatesOf } from '../keys/message.js';
import type { SignAction } from '../keys/port.js';

export interface SignedInput {
  op: SignedOp;
  /** The wallet address (base58); must be the signer's. */
  wallet: string;
  /** deposit and mint only. */
  symbol?: string;
  /** deposit and mint only; signed and sent as its canonical decimal text. */
  amount?: Lamports;
  /** The plan's epoch ("YYYY-MM-DD"); needed only when the op's template signs `{epoch}`. */
  epoch?: string;
  /** For the signer's journal (SPEC §7); not signed. */
  planId?: string;
  stepId?: string;
}

export interface PreparedRequest {
  op: SignedOp;
  wallet: string;
  method: 'POST' | 'PUT';
  /** Relative to the base URL, e.g. "/rewards/claim". */
  path: string;
  url: string;
  /** Unix seconds; the same integer is in the `<prefix>-ts` header and the signed message. */
  ts: number;
  /** The exact text that was signed. */
  message: string;
  /** The exact JSON body that is sent. */
  body: string;
  /** Every header except Authorization, which the client adds when sending (never stored). */
  headers: Record<string, string>;
  /** The signature, encoded as the config says. */
  signature: string;
  /** The canonical amount text when the op moves an amount. */
  amountText: string | undefined;
}

export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/**
 * The JSON body. The amount is written as a JSON number whose text is byte-for-byte the signed
 * decimal string; JSON.stringify of a float could write 1e-9 or lose a digit.
 */
export function buildSignedBody(op: SignedOp, fields: { wallet: string; signature: string; symbol?: string; amountText?: string }): string {
  const str = (s: string): string => JSON.stringify(s);
  if (op === 'claim') return `{"wallet":${str(fields.wallet)},"signature":${str(fields.signature)}}`;
  if (fields.symbol === undefined || fields.amountText === undefined) {
    throw new AutoclaimError('INVALID_ACTION', `${op} needs a symbol and an amount`);
  }
  return `{"symbol":${str(fields.symbol)},"amount":${fields.amountText},"wallet":${str(fields.wallet)},"signature":${str(fields.signature)}}`;
}

/**
 * A request whose every part is known but its signature: what the executor records as `sending`
 * before it asks the wallet's signer (SPEC §7), and the action that signer is asked to sign.
 */
export interface UnsignedRequest extends Omit<PreparedRequest, 'body' | 'signature'> {
  /** What the signer is asked for; it renders `message` from it itself. */
  action: SignAction;
  symbol: string | undefined;
}

/** Everything of a signed request but its signature; nothing is signed. */
export function prepareUnsigned(config: ApiConfig, baseUrl: string, input: SignedInput, nowMs: number): UnsignedRequest {
  let amountText: string | undefined;
  if (input.op !== 'claim') {
    if (input.symbol === undefined || input.symbol === '') {
      throw new AutoclaimError('INVALID_ACTION', `${input.op} needs a symbol`);
    }
    if (input.amount === undefined || input.amount <= 0n) {
      throw new AutoclaimError('INVALID_ACTION', `${input.op} needs a positive amount`);
    }
    amountText = formatSol(input.amount);
  }
  const endpoint = config.endpoints[input.op];
  const ts = Math.floor(nowMs / 1000);
  const action: SignAction = { op: input.op, wallet: input.wallet, ts };
  if (input.symbol !== undefined) action.symbol = input.symbol;
  if (amountText !== undefined) action.amount = amountText;
  if (input.epoch !== undefined && input.epoch !== '') action.epoch = input.epoch;
  if (input.planId !== undefined) action.planId = input.planId;
  if (input.stepId !== undefined) action.stepId = input.stepId;
  let message: string;
  try {
    // The same rendering every signer does (keys/message.ts): what it must answer with.
    message = messageFor(templatesOf(config.endpoints), action);
  } catch (err) {
    throw new AutoclaimError('INVALID_ACTION', (err as Error).message);
  }
  const prefix = config.headerPrefix;
  return {
    op: input.op,
    wallet: input.wallet,
    method: endpoint.method,
    path: endpoint.path,
    url: joinUrl(baseUrl, endpoint.path),
    ts,
    message,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      [`${prefix}-ts`]: String(ts),
      [`${prefix}-wallet`]: input.wallet,
    },
    amountText,
    action,
    symbol: input.symbol,
  };
}

/** The request with its signature (already checked by the caller against message and address). */
export function sealSigned(config: Pick<ApiConfig, 'signatureEncoding'>, unsigned: UnsignedRequest, signature: Uint8Array): PreparedRequest {
  const encoded = encodeSignature(signature, config.signatureEncoding);
  const body = buildSignedBody(unsigned.op, {
    wallet: unsigned.wallet,
    signature: encoded,
    ...(unsigned.symbol !== undefined ? { symbol: unsigned.symbol } : {}),
    ...(unsigned.amountText !== undefined ? { amountText: unsigned.amountText } : {}),
  });
  const { action: _action, symbol: _symbol, ...rest } = unsigned;
  return { ...rest, body, signature: encoded };
}

/** Signs in process with a loaded key and builds the request (doctor's sample requests, tests). */
export function prepareSigned(
  config: ApiConfig,
  baseUrl: string,
  input: SignedInput,
  signer: Signer,
  nowMs: number,
): PreparedRequest {
  if (signer.address !== input.wallet) {
    throw new KeyError('KEY_MISMATCH', `the key loaded for wallet ${input.wallet} belongs to ${signer.address}`);
  }
  const unsigned = prepareUnsigned(config, baseUrl, input, nowMs);
  return sealSigned(config, unsigned, signer.sign(new TextEncoder().encode(unsigned.message)));
}
