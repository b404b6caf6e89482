// The API of SPEC §1 as the sandbox serves it, in the answer shapes of the real service (SPEC §6).
// Reads are fixed paths; the signed operations live wherever `endpoints` says, so a client
// configured with a non-default path or method is tested too.
import type { IncomingHttpHeaders } from 'node:http';
import { RawNumber, field, isPlainObject, parseLossless, sol } from './json.js';
import { HttpError, jsonReply, replyFromError, type Reply } from './reply.js';
import { checkBearer, verifySigned, type ReplayGuard, type SignedRequest, type VerifyConfig } from './verify.js';
import { SANDBOX_OPS, type SandboxEndpoint, type SandboxOp } from './world-types.js';
import type { SandboxWorld } from './world.js';

export interface ApiContext {
  world: SandboxWorld;
  verify: VerifyConfig;
  replay: ReplayGuard;
  basePath: string;
  /** What `GET /health` says the network is (the real service: "solana-mainnet"). */
  network: string;
  /** What a signed request already applied gets when it comes again (SandboxOptions.replays). */
  replays: 'refuse' | 'apply';
}

type Route =
  | { op: 'health' }
  | { op: 'leaderboard' }
  | { op: 'summary'; address: string }
  | { op: SandboxOp }
  | { op: 'unknown'; status: 404 | 405; allow?: string };

const DEFAULT_LEADERBOARD_LIMIT = 100;
const MAX_LEADERBOARD_LIMIT = 1000;

function isSignedOp(op: Route['op']): op is SandboxOp {
  return (SANDBOX_OPS as readonly string[]).includes(op);
}

/** '/v1/' and '/v1' are the same base; '/' is no base at all. */
export function normalizeBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, '');
  return trimmed === '' ? '' : trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

function normalizePath(path: string): string {
  const p = path.startsWith('/') ? path : `/${path}`;
  return p.length > 1 ? p.replace(/\/+$/, '') : p;
}

export function matchRoute(method: string, pathname: string, endpoints: Record<SandboxOp, SandboxEndpoint>, basePath: string): Route {
  if (basePath !== '' && pathname !== basePath && !pathname.startsWith(`${basePath}/`)) return { op: 'unknown', status: 404 };
  const rest = normalizePath(pathname.slice(basePath.length) || '/');
  const allowed: string[] = [];
  for (const op of SANDBOX_OPS) {
    const ep = endpoints[op];
    if (normalizePath(ep.path) !== rest) continue;
    if (ep.method === method) return { op };
    allowed.push(ep.method);
  }
  const read = matchRead(rest);
  if (read) {
    if (method === 'GET') return read;
    allowed.push('GET');
  }
  return allowed.length > 0 ? { op: 'unknown', status: 405, allow: allowed.join(', ') } : { op: 'unknown', status: 404 };
}

function matchRead(rest: string): Route | undefined {
  if (rest === '/health') return { op: 'health' };
  if (rest === '/rewards/leaderboard') return { op: 'leaderboard' };
  const m = /^\/rewards\/wallet\/([^/]+)$/.exec(rest);
  if (!m?.[1]) return undefined;
  try {
    return { op: 'summary', address: decodeURIComponent(m[1]) };
  } catch {
    return undefined;
  }
}

/** The wallet a request is about, for matching faults; never trusted for anything else. */
export function peekWallet(route: Route, headers: IncomingHttpHeaders, rawBody: string, headerPrefix: string): string | undefined {
  if (route.op === 'summary') return route.address;
  if (!isSignedOp(route.op)) return undefined;
  const h = headers[`${headerPrefix.toLowerCase()}-wallet`];
  if (typeof h === 'string') return h;
  try {
    const body = parseLossless(rawBody);
    const w = isPlainObject(body) ? field(body, 'wallet') : undefined;
    return typeof w === 'string' ? w : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Answers one API request; every refusal becomes `{error: {code, message}}` with its status.
 * `requestId` is the answer's `x-request-id`, written into the ledger with what it applied.
 */
export function handleApi(route: Route, query: URLSearchParams, headers: IncomingHttpHeaders, rawBody: string, ctx: ApiContext, requestId?: string): Reply {
  try {
    switch (route.op) {
      case 'unknown':
        if (route.status === 405) throw new HttpError(405, 'method_not_allowed', 'method not allowed', { allow: route.allow ?? '' });
        throw new HttpError(404, 'not_found', 'no such route');
      case 'health':
        return jsonReply(200, { status: 'ok', network: ctx.network, ts: Math.floor(ctx.world.clock.now() / 1000) });
      case 'leaderboard':
        checkBearer(headers, ctx.verify.apiKey, false);
        return leaderboard(query, ctx);
      case 'summary':
        checkBearer(headers, ctx.verify.apiKey, false);
        return summary(route.address, ctx);
      case 'claim':
      case 'deposit':
      case 'mint':
      case 'withdraw':
      case 'burn':
        return signed(route.op, headers, rawBody, ctx, requestId);
    }
  } catch (err) {
    return replyFromError(err);
  }
}

function leaderboard(query: URLSearchParams, ctx: ApiContext): Reply {
  const raw = query.get('limit');
  let limit = DEFAULT_LEADERBOARD_LIMIT;
  if (raw !== null) {
    if (!/^[1-9][0-9]{0,8}$/.test(raw)) throw new HttpError(400, 'invalid_limit', 'limit must be a positive integer');
    limit = Math.min(Number(raw), MAX_LEADERBOARD_LIMIT);
  }
  const rows = ctx.world.leaderboard(limit).map((r) => ({
    rank: r.rank,
    address: r.address,
    score: new RawNumber(r.score),
    total_rewards_sol: sol(r.totalRewardsLamports),
  }));
  return jsonReply(200, rows);
}

function summary(address: string, ctx: ApiContext): Reply {
  const s = ctx.world.summary(address);
  return jsonReply(200, {
    address: s.address,
    epoch: s.epoch,
    pending_sol: sol(s.pendingLamports),
    lifetime_sol: sol(s.lifetimeLamports),
    rank: s.rank,
    tier: s.tier,
    breakdown: s.breakdown.map((b) => ({ vault: b.vault, volume: new RawNumber(b.volume), score: new RawNumber(b.score) })),
  });
}

function signed(op: SandboxOp, headers: IncomingHttpHeaders, rawBody: string, ctx: ApiContext, requestId: string | undefined): Reply {
  const req = verifySigned(op, headers, rawBody, ctx.verify);
  if (ctx.replays === 'refuse' && ctx.replay.has(req.replayKey)) throw new HttpError(409, 'replayed_signature', 'this signature was already used');
  const reply = apply(op, req, ctx.world, requestId);
  ctx.replay.remember(req.replayKey, req.tsSec);
  return reply;
}

/** The real service's answers: claim, mint, withdraw and burn say "success"; a deposit is "submitted" (its rebalance is queued). */
function apply(op: SandboxOp, req: SignedRequest, world: SandboxWorld, requestId: string | undefined): Reply {
  if (op === 'claim') {
    const entry = world.claim(req.wallet, req.signature, requestId);
    return jsonReply(200, { status: 'success', claimed_sol: sol(entry.amountLamports), tx: entry.tx, epoch: entry.epoch });
  }
  // verifySigned guarantees both for every operation but claim
  const symbol = req.symbol as string;
  const amount = req.amountLamports as bigint;
  switch (op) {
    case 'deposit': {
      const r = world.deposit(req.wallet, symbol, amount, req.signature, requestId);
      return jsonReply(200, {
        status: 'submitted',
        tx: r.entry.tx,
        vault: r.vault,
        queued_rebalance: true,
        share_mint: r.shareMint,
        estimated_shares: sol(r.estimatedShares),
      });
    }
    case 'mint': {
      const r = world.mint(req.wallet, symbol, amount, req.signature, requestId);
      return jsonReply(200, { status: 'success', tx: r.entry.tx, mint: r.mint, received: sol(r.received) });
    }
    case 'withdraw':
    case 'burn': {
      const r = op === 'withdraw' ? world.withdraw(req.wallet, symbol, amount, req.signature, requestId) : world.burn(req.wallet, symbol, amount, req.signature, requestId);
      return jsonReply(200, { status: 'success', tx: r.entry.tx, received: sol(r.received) });
    }
  }
}
