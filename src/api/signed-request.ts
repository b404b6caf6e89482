// Builds a signed action request without sending it, so the worker can commit the step as
// `sending` (with the exact body and signature) before the first byte goes out (SPEC §2).
import type { ApiConfig, Lamports, SignedOp } from '../domain.js';
import { AutoclaimError, KeyError } from '../errors.js';
import { formatSol } from '../amount.js';
import { renderTemplate, templateVariables, type TemplateVariable } from './endpoints.js';
import { encodeSignature, type Signer } from '../keys/signer.js';

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
  const vars: Partial<Record<TemplateVariable, string>> = { wallet: input.wallet, ts: String(ts), op: input.op };
  if (input.symbol !== undefined) vars.symbol = input.symbol;
  if (amountText !== undefined) vars.amount = amountText;
  if (input.epoch !== undefined && input.epoch !== '') vars.epoch = input.epoch;
  else if (templateVariables(endpoint.message).includes('epoch')) {
    // Refused before signing: a message with the wrong epoch would be refused by the server,
    // and one with a made-up epoch could be accepted for the wrong one.
    throw new AutoclaimError('INVALID_ACTION', `the ${input.op} message template signs {epoch}, but no epoch is known for this ${input.op}`);
  }
  const message = renderTemplate(endpoint.message, vars);
  const signature = encodeSignature(signer.sign(new TextEncoder().encode(message)), config.signatureEncoding);
  const body = buildSignedBody(input.op, {
    wallet: input.wallet,
    signature,
    ...(input.symbol !== undefined ? { symbol: input.symbol } : {}),
    ...(amountText !== undefined ? { amountText } : {}),
  });
  const prefix = config.headerPrefix;
  return {
    op: input.op,
    wallet: input.wallet,
    method: endpoint.method,
    path: endpoint.path,
    url: joinUrl(baseUrl, endpoint.path),
    ts,
    message,
    body,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      [`${prefix}-ts`]: String(ts),
      [`${prefix}-wallet`]: input.wallet,
    },
    signature,
    amountText,
  };
}
