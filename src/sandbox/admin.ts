// The loopback-only control surface under /__sandbox/: read the ledger and stats, set wallets,
// queue faults, jump epochs. No auth, by design: the sandbox is a test tool bound to 127.0.0.1.
import { z } from 'zod';
import { AmountError, MAX_LAMPORTS, parseSol, type Lamports } from '../amount.js';
import { inSol, unitsOf } from '../rules/amounts.js';
import { isWalletAddress } from './derive.js';
import { faultSpecSchema, type FaultQueue } from './faults.js';
import { RawNumber, field, isPlainObject, parseLossless, sol, type JsonValue } from './json.js';
import { HttpError, jsonReply, replyFromError, type Reply } from './reply.js';
import type { StatsSnapshot } from './stats.js';
import type { LedgerEntry, SandboxWorld, WalletPatch, WalletState } from './world.js';

export const ADMIN_PREFIX = '/__sandbox';

interface AdminContext {
  world: SandboxWorld;
  faults: FaultQueue;
  stats(): StatsSnapshot;
  resetStats(): void;
}

/**
 * A ledger entry. A withdraw's amount is the vault's shares and a burn's the token's units (10^-9
 * either way): `amount_units` with its `unit`, never `amount_sol`, which a script sums as SOL.
 */
function ledgerJson(e: LedgerEntry): JsonValue {
  const amount = inSol(e.op) ? { amount_sol: sol(e.amountLamports) } : { amount_units: sol(e.amountLamports), unit: unitsOf({ kind: e.op, symbol: e.symbol }) };
  return {
    seq: e.seq,
    op: e.op,
    wallet: e.wallet,
    symbol: e.symbol,
    ...amount,
    amount_lamports: e.amountLamports.toString(),
    epoch: e.epoch,
    ts: e.ts,
    tx: e.tx,
    signature: e.signature,
    request_id: e.requestId,
  };
}

function walletJson(w: WalletState): JsonValue {
  const amounts = (m: Record<string, Lamports>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, sol(v)]));
  return {
    address: w.address,
    pending_sol: sol(w.pendingLamports),
    lifetime_sol: sol(w.lifetimeLamports),
    balance_sol: sol(w.balanceLamports),
    accrual_lamports_per_sec: w.accrualLamportsPerSec.toString(),
    tier: w.tier,
    tier_override: w.tierOverride,
    ranked: w.ranked,
    shares: amounts(w.shares),
    tokens: amounts(w.tokens),
    created_at: w.createdAt,
  };
}

function statsJson(s: StatsSnapshot): JsonValue {
  return {
    total: s.total,
    by_op: s.byOp,
    served_429: s.served429,
    limiter_429: s.limiter429,
    peak_per_minute: s.peakPerMinute,
    faults_fired: s.faultsFired,
  };
}

export function handleAdmin(method: string, pathname: string, rawBody: string, ctx: AdminContext): Reply {
  try {
    return route(method, pathname.slice(ADMIN_PREFIX.length), rawBody, ctx);
  } catch (err) {
    return replyFromError(err);
  }
}

function route(method: string, path: string, rawBody: string, ctx: AdminContext): Reply {
  const key = `${method} ${path.replace(/\/+$/, '')}`;
  switch (key) {
    case 'GET /ledger':
      return jsonReply(200, { entries: ctx.world.ledger().map(ledgerJson) });
    case 'GET /wallets':
      return jsonReply(200, { wallets: ctx.world.addresses() });
    case 'GET /faults':
      return jsonReply(200, { faults: ctx.faults.list().map((f) => ({ id: f.id, remaining: f.remaining, spec: f.spec })) });
    case 'POST /faults':
      return jsonReply(201, { ids: queueFaults(rawBody, ctx.faults) });
    case 'DELETE /faults':
      return jsonReply(200, { cleared: ctx.faults.clear() });
    case 'GET /epoch':
      return jsonReply(200, { epoch: ctx.world.epoch(), index: ctx.world.epochIndex() });
    case 'POST /epoch/advance':
      return jsonReply(200, { epoch: ctx.world.advanceEpoch(), index: ctx.world.epochIndex() });
    case 'GET /stats':
      return jsonReply(200, statsJson(ctx.stats()));
    case 'DELETE /stats':
      ctx.resetStats();
      return jsonReply(200, { reset: true });
  }
  const m = /^\/wallets\/([^/]+)$/.exec(path);
  if (m?.[1]) {
    const address = decodeURIComponent(m[1]);
    if (method === 'GET') {
      const w = ctx.world.wallet(address);
      if (!w) throw new HttpError(404, 'unknown_wallet', 'unknown wallet');
      return jsonReply(200, walletJson(w));
    }
    if (method === 'POST') {
      if (!isWalletAddress(address)) throw new HttpError(400, 'invalid_address', 'not a base58 Ed25519 public key');
      return jsonReply(200, walletJson(ctx.world.setWallet(address, parseWalletPatch(rawBody))));
    }
  }
  throw new HttpError(404, 'not_found', 'no such sandbox admin route');
}

function queueFaults(rawBody: string, faults: FaultQueue): number[] {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    throw new HttpError(400, 'malformed_body', 'body is not valid JSON');
  }
  const specs = z.array(faultSpecSchema).safeParse(Array.isArray(body) ? body : [body]);
  if (!specs.success) throw new HttpError(400, 'invalid_fault', z.prettifyError(specs.error));
  return specs.data.map((s) => faults.add(s));
}

const SOL_FIELDS = { pending_sol: 'pendingLamports', lifetime_sol: 'lifetimeLamports', balance_sol: 'balanceLamports' } as const;
const LAMPORT_FIELDS = {
  pending_lamports: 'pendingLamports',
  lifetime_lamports: 'lifetimeLamports',
  balance_lamports: 'balanceLamports',
  accrual_lamports_per_sec: 'accrualLamportsPerSec',
} as const;

/** Amounts may be JSON numbers or strings; both are read exactly, never through a float. */
function parseWalletPatch(rawBody: string): WalletPatch {
  const body = rawBody.trim() === '' ? {} : parseLossless(rawBody);
  if (!isPlainObject(body)) throw new HttpError(400, 'invalid_body', 'body must be a JSON object');
  const patch: WalletPatch = {};
  for (const key of Object.keys(body)) {
    const value = field(body, key);
    const text = value instanceof RawNumber ? value.text : typeof value === 'string' ? value : undefined;
    if (key in SOL_FIELDS) {
      patch[SOL_FIELDS[key as keyof typeof SOL_FIELDS]] = amount(key, text, (t) => parseSol(t));
    } else if (key in LAMPORT_FIELDS) {
      patch[LAMPORT_FIELDS[key as keyof typeof LAMPORT_FIELDS]] = amount(key, text, (t) => {
        if (!/^[0-9]{1,20}$/.test(t)) throw new AmountError('expected an integer count of lamports', t);
        return BigInt(t);
      });
    } else if (key === 'tier') {
      if (value !== null && typeof value !== 'string') throw new HttpError(400, 'invalid_body', 'tier must be a string or null');
      patch.tier = value;
    } else if (key === 'ranked') {
      if (typeof value !== 'boolean') throw new HttpError(400, 'invalid_body', 'ranked must be true or false');
      patch.ranked = value;
    } else if (key === 'shares' || key === 'tokens') {
      patch[key] = holdings(key, value);
    } else {
      throw new HttpError(400, 'invalid_body', `unknown field "${key}"`);
    }
  }
  return patch;
}

/** `{"SOL2X": 1.5}`: units held per symbol, written like SOL amounts. */
function holdings(key: string, value: unknown): Record<string, Lamports> {
  if (!isPlainObject(value)) throw new HttpError(400, 'invalid_body', `${key} must be an object of symbol → amount`);
  const out: Record<string, Lamports> = {};
  for (const symbol of Object.keys(value)) {
    const v = field(value, symbol);
    out[symbol] = amount(`${key}.${symbol}`, v instanceof RawNumber ? v.text : typeof v === 'string' ? v : undefined, (t) => parseSol(t));
  }
  return out;
}

function amount(key: string, text: string | undefined, parse: (t: string) => Lamports): Lamports {
  if (text === undefined) throw new HttpError(400, 'invalid_amount', `${key} must be a number or a decimal string`);
  try {
    const v = parse(text);
    if (v > MAX_LAMPORTS) throw new AmountError('amount exceeds u64 lamports', text);
    return v;
  } catch (err) {
    if (err instanceof AmountError) throw new HttpError(400, 'invalid_amount', `${key}: ${err.message}`);
    throw err;
  }
}
