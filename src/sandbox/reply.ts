// What a handler returns instead of writing to the socket itself, so the server can decide — per
// fault — to send it, delay it, truncate it, replace it, or never send it at all.
import { BodySyntaxError, writeJson, type JsonValue } from './json.js';
import { WorldError, type WorldErrorCode } from './world.js';

export interface Reply {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

/** A refusal with its status; the body is always `{error: {code, message}}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export function jsonReply(status: number, value: JsonValue, headers?: Record<string, string>): Reply {
  return headers ? { status, body: writeJson(value), headers } : { status, body: writeJson(value) };
}

export function errorReply(status: number, code: string, message: string, headers?: Record<string, string>): Reply {
  return jsonReply(status, { error: { code, message } }, headers);
}

const WORLD_STATUS: Record<WorldErrorCode, number> = {
  invalid_address: 400,
  invalid_amount: 400,
  unknown_wallet: 404,
  unknown_symbol: 404,
  insufficient_balance: 422,
  insufficient_shares: 422,
  insufficient_tokens: 422,
  nothing_to_claim: 422,
};

export function replyFromError(err: unknown): Reply {
  if (err instanceof HttpError) return errorReply(err.status, err.code, err.message, err.headers);
  if (err instanceof WorldError) return errorReply(WORLD_STATUS[err.code], err.code, err.message);
  if (err instanceof BodySyntaxError) return errorReply(400, 'malformed_body', `body is not valid JSON: ${err.message}`);
  return errorReply(500, 'internal', 'internal sandbox error');
}
