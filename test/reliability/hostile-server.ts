// An independent fake of the rewards API that lies (issue 11). It keeps its OWN ledger of what it
// really applied, and separates, for every request, what it DOES (apply to the ledger or not) from
// what it SAYS (status, body, how the bytes arrive). Every answer comes from a scripted Turn: each
// request of a wallet, read or signed, consumes the next one; when the script runs out the server
// is honest. The one lie no client can detect is never told: a 2xx with a success status always
// means the request was applied. Signatures are checked with tweetnacl, independently of the
// product's signer, and a signature seen before is refused as a replay.
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import {
  echoText,
  formatSol,
  HONEST_TURN,
  is2xx,
  parseSolText,
  SOL,
  DAY_MS,
  EPOCH_LIES,
  refusesTheRequest,
  type ActionBody,
  type Applied,
  type ClaimedLie,
  type Op,
  type ReadBody,
  type Turn,
  type WalletSetup,
  type Wire,
} from './hostile-types.js';

class WalletWorld {
  pending: bigint;
  lifetime = 0n;
  /** Days the epoch was moved on by the script, beyond the fake clock's own date. */
  bumps = 0;
  cursor = 0;
  /** Pending and lifetime of the last summary the client could read (undefined lifetime: not shown). */
  shown: bigint | undefined;
  shownLifetime: bigint | undefined;
  /**
   * What a claim may have been signed against (the client reads a summary right before it signs):
   * the summary shown before the last claim POST, and every one shown since, which a claim signed
   * and never sent (a crash between its record and its bytes) was signed against. A claim's
   * evidence is judged against its own, so `drop_short` is told short of each: relative to the
   * truth, a pending that jumped meanwhile made the lie's rise cover the drop the client saw, an
   * applied claim to any client (seed 441053537 found it after a POST; seed 645720800 with no POST
   * at all, the claim recorded `sending` and the process gone).
   */
  bases: Array<{ pending: bigint; lifetime: bigint | undefined }> = [];
  readonly signatures = new Set<string>();
  readonly ledger: Applied[] = [];
  readonly transcript: string[] = [];
  /** Requests the server refused as malformed (bad bearer, signature, timestamp) or replayed. */
  readonly refusals: string[] = [];

  constructor(readonly setup: WalletSetup) {
    this.pending = setup.pending;
  }

  next(): Turn {
    const turn = this.setup.script[this.cursor] ?? HONEST_TURN;
    this.cursor += 1;
    return turn;
  }

  epoch(): string {
    // The epoch is the UTC date of the sequence's fake clock, moved on by any scripted bumps.
    return new Date((Math.floor(this.setup.now() / DAY_MS) + this.bumps) * DAY_MS).toISOString().slice(0, 10);
  }

  note(line: string): void {
    this.transcript.push(`#${this.cursor} ${line}`);
  }
}

export interface HostileServer {
  url: string;
  register(setup: WalletSetup): void;
  /** What the server knows of a wallet; forget() drops it. */
  world(address: string): { ledger: readonly Applied[]; transcript: readonly string[]; refusals: readonly string[]; pending: bigint; epoch: string };
  forget(address: string): void;
  /** Adds a line to a wallet's transcript (the harness marks cycles, restarts and crashes). */
  mark(address: string, line: string): void;
  close(): Promise<void>;
}

const PATHS: Record<string, Op> = { '/v1/rewards/claim': 'claim', '/v1/actions/deposit': 'deposit', '/v1/actions/mint': 'mint' };
const SUCCESS_WORD: Record<Op, string> = { claim: 'claimed', deposit: 'submitted', mint: 'success' };

export async function startHostileServer(): Promise<HostileServer> {
  const wallets = new Map<string, WalletWorld>();
  const timers = new Set<NodeJS.Timeout>();
  let txs = 0;

  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  /** Writes an answer the way `wire` says; `delivered` runs only if every byte went out. */
  const send = (res: ServerResponse, status: number, text: string, wire: Wire, timeoutMs: number, delivered?: () => void): void => {
    const socket = res.socket;
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
    if (status >= 300 && status < 400) headers['location'] = '/v1/elsewhere';
    if (status === 429 || status === 503) headers['retry-after'] = '1';
    const whole = (): void => {
      if (res.destroyed || socket?.destroyed === true) return;
      res.writeHead(status, headers).end(text, () => delivered?.());
    };
    if (wire === 'whole' || text.length < 2) return whole();
    if (wire === 'slow_headers') return later(Math.ceil(timeoutMs * 1.6), whole);
    if (wire === 'drip') {
      // Each byte comes before an idle timeout would fire; the whole body takes ~2.5 timeouts.
      const gap = Math.max(10, Math.floor(timeoutMs / 3));
      const tail = Math.min(text.length - 1, 8);
      res.writeHead(status, headers);
      res.write(text.slice(0, text.length - tail));
      let i = text.length - tail;
      const drip = (): void => {
        if (res.destroyed || socket?.destroyed === true) return;
        if (i >= text.length) return void res.end(() => delivered?.());
        res.write(text[i] ?? '');
        i += 1;
        later(gap, drip);
      };
      return later(gap, drip);
    }
    // reset and truncated: raw bytes on the socket, so the framing itself can lie.
    if (socket === null) return;
    const cut = wire === 'reset' ? text.slice(0, Math.floor(text.length / 2)) : text;
    const length = wire === 'truncated' ? Buffer.byteLength(text) + 32 : Buffer.byteLength(text);
    const head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Status'}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\nconnection: close\r\n\r\n`;
    socket.write(head + cut, () => {
      if (wire === 'reset') socket.resetAndDestroy();
      else socket.end();
    });
  };

  const plain = (res: ServerResponse, status: number, code: string, message: string): void =>
    send(res, status, JSON.stringify({ error: { code, message } }), 'whole', 0);

  const summary = (address: string, res: ServerResponse): void => {
    const w = wallets.get(address);
    if (w === undefined) return plain(res, 404, 'UNKNOWN_WALLET', 'no such wallet');
    const turn = w.next();
    w.pending += turn.jump;
    if (turn.epochBump) w.bumps += 1;
    w.bumps += turn.epochJump;
    const say = turn.read;
    const pending = w.pending;
    // The rollover is this read's own: the epoch it shows is the new one. Shown the old one, pending
    // moved exactly into lifetime in one epoch is an applied claim to any client, a lie no client
    // can detect, which hostile-types.ts says is never told (a random seed found it told).
    if (say.body === 'rollover_drop') w.bumps += 1;
    const epoch = turn.epochSays === 'true' ? w.epoch() : EPOCH_LIES[turn.epochSays];
    // What this read shows: the truth, or one of the inconsistent summaries (hostile-types.ts).
    let shownPending = pending;
    let shownLifetime: bigint | undefined = w.lifetime;
    if (say.body === 'drop_flat' || say.body === 'drop_short' || say.body === 'drop_no_lifetime' || say.body === 'rollover_drop') shownPending = 0n;
    if (say.body === 'drop_short') {
      // Risen by a quarter of the drop from the base that makes it lowest: short of every base.
      const bases = w.bases.length > 0 ? w.bases : [{ pending, lifetime: w.lifetime }];
      shownLifetime = bases.map((b) => (b.lifetime ?? w.lifetime) + b.pending / 4n).reduce((a, b) => (b < a ? b : a));
    }
    if (say.body === 'rollover_drop') shownLifetime = w.lifetime + pending;
    if (say.body === 'lifetime_fell') shownLifetime = w.lifetime / 2n;
    if (say.body === 'no_lifetime' || say.body === 'drop_no_lifetime') shownLifetime = undefined;
    const truth: Record<string, unknown> = { address, epoch, pending_sol: 'PENDING', lifetime_sol: 'LIFETIME', rank: 7, tier: 'Gold' };
    if (shownLifetime === undefined) delete truth['lifetime_sol'];
    if (say.echo !== undefined) truth['notice'] = echoText(say.echo, w.setup.secrets, undefined);
    truth['breakdown'] = [{ vault: 'SOL2X', volume: 12.5, score: 3 }];
    // Amounts as JSON numbers with their exact text.
    const truthText = JSON.stringify(truth).replace('"PENDING"', formatSol(shownPending)).replace('"LIFETIME"', formatSol(shownLifetime ?? 0n));
    const echo = say.echo === undefined ? 'service unavailable' : echoText(say.echo, w.setup.secrets, undefined);
    const bodies: Record<ReadBody, string> = {
      truth: truthText,
      no_lifetime: truthText,
      empty: '',
      unreadable: truthText.slice(0, Math.floor(truthText.length * 0.6)),
      error_object: JSON.stringify({ error: { code: 'UNAVAILABLE', message: echo } }),
      text: `<html><body>502 Bad Gateway: ${echo}</body></html>`,
      drop_flat: truthText,
      drop_short: truthText,
      drop_no_lifetime: truthText,
      lifetime_fell: truthText,
      rollover_drop: truthText,
    };
    const readable = say.body !== 'empty' && say.body !== 'unreadable' && say.body !== 'error_object' && say.body !== 'text';
    const shows = readable && is2xx(say.status) && (say.wire === 'whole' || say.wire === 'drip');
    w.note(
      `GET summary${turn.jump > 0n ? ` (pending +${formatSol(turn.jump)})` : ''}${turn.epochBump || turn.epochJump !== 0 || turn.epochSays !== 'true' ? ` (epoch → ${epoch})` : ''}` +
        ` → ${say.status} ${say.body} ${say.wire}${say.echo ? ` echo ${say.echo.what}/${say.echo.form}@${say.echo.pad}` : ''}: pending ${formatSol(pending)}` +
        (shownPending !== pending || shownLifetime !== w.lifetime ? ` (shown: pending ${formatSol(shownPending)}, lifetime ${shownLifetime === undefined ? 'missing' : formatSol(shownLifetime)}; lifetime is ${formatSol(w.lifetime)})` : ''),
    );
    send(res, say.status, bodies[say.body], say.wire, w.setup.timeoutMs, () => {
      if (!shows) return;
      w.shown = shownPending;
      w.shownLifetime = shownLifetime;
      w.bases.push({ pending: shownPending, lifetime: shownLifetime });
    });
  };

  /** Why a signed request must be refused, or undefined when it is well formed, fresh and new. */
  const problem = (op: Op, w: WalletWorld, req: IncomingMessage, body: Record<string, unknown>, raw: string): string | undefined => {
    if (req.headers['authorization'] !== `Bearer ${w.setup.secrets.apiKey}`) return 'bearer missing or wrong';
    if (req.headers['x-svc-wallet'] !== w.setup.address) return 'x-svc-wallet is not the body wallet';
    const tsText = req.headers['x-svc-ts'];
    if (typeof tsText !== 'string' || !/^[0-9]+$/.test(tsText)) return 'x-svc-ts missing';
    const ts = Number(tsText);
    if (Math.abs(ts * 1000 - w.setup.now()) > 300_000) return `x-svc-ts ${ts} is not within 5 minutes of ${Math.floor(w.setup.now() / 1000)}`;
    let message = `${w.setup.address}|${ts}`;
    if (op !== 'claim') {
      const amountText = /"amount":(-?[0-9][0-9.eE+-]*)/.exec(raw)?.[1];
      if (typeof body['symbol'] !== 'string' || body['symbol'] === '') return 'symbol missing';
      if (amountText === undefined || parseSolText(amountText) === undefined || parseSolText(amountText) === 0n) return `amount ${amountText} is not a positive decimal`;
      message = `${w.setup.address}|${body['symbol']}|${amountText}|${ts}`;
    }
    let sig: Uint8Array;
    try {
      sig = bs58.decode(String(body['signature']));
    } catch {
      return 'signature is not base58';
    }
    if (sig.length !== 64 || !nacl.sign.detached.verify(new TextEncoder().encode(message), sig, bs58.decode(w.setup.address))) return `bad signature over ${message}`;
    if (w.signatures.has(String(body['signature']))) return 'replayed signature';
    return undefined;
  };

  const claimedText = (lie: ClaimedLie, base: bigint): string | undefined => {
    const values: Record<ClaimedLie, string | undefined> = {
      true: formatSol(base),
      inflated: formatSol(base * 10n + SOL),
      huge: '1000000',
      deflated: formatSol(base / 2n),
      negative: `-${formatSol(base > 0n ? base : SOL)}`,
      zero: '0',
      text: '"lots"',
      missing: undefined,
      exponent: '1e3',
    };
    return values[lie];
  };

  const action = (op: Op, req: IncomingMessage, raw: string, res: ServerResponse): void => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return plain(res, 400, 'BAD_JSON', 'request body is not JSON');
    }
    const w = wallets.get(String(body['wallet']));
    if (w === undefined) return plain(res, 404, 'UNKNOWN_WALLET', 'no such wallet');
    const turn = w.next();
    const signature = String(body['signature']);
    const refused = problem(op, w, req, body, raw);
    if (op === 'claim') w.bases = [{ pending: w.shown ?? w.pending, lifetime: w.shownLifetime }];
    let applied = false;
    let lamports = 0n;
    if (refused === undefined) {
      w.signatures.add(signature);
      if (turn.does === 'apply' && !refusesTheRequest(turn.say)) {
        if (op === 'claim') {
          lamports = w.pending;
          applied = lamports > 0n;
          if (applied) {
            w.lifetime += lamports;
            w.pending = 0n;
          }
        } else {
          lamports = parseSolText(/"amount":([0-9.]+)/.exec(raw)?.[1] ?? '') ?? 0n;
          applied = true;
        }
      }
      if (applied) {
        w.ledger.push({
          op,
          address: w.setup.address,
          signature,
          ts: Number(req.headers['x-svc-ts']),
          at: w.setup.now(),
          epoch: w.epoch(),
          lamports,
          symbol: typeof body['symbol'] === 'string' ? body['symbol'] : undefined,
          shownBefore: op === 'claim' ? w.shown : undefined,
        });
      }
    } else {
      w.refusals.push(`${op}: ${refused}`);
    }

    const say = turn.say;
    let status = say.status;
    let kind: ActionBody = say.body;
    if (refused !== undefined) {
      status = refused === 'replayed signature' ? 409 : 401;
      kind = 'error_object';
    } else if (kind === 'honest') {
      status = applied ? 200 : 409;
      kind = applied ? 'success' : 'error_object';
    }
    // The undetectable lie is never told: a 2xx success status means it was applied.
    if (!applied && is2xx(status) && kind === 'success') kind = 'pending';

    const echo = say.echo === undefined ? (refused ?? 'not applied') : echoText(say.echo, w.setup.secrets, signature);
    const extra: Record<string, unknown> = say.echo === undefined ? {} : { detail: echo };
    const claimed = op === 'claim' ? claimedText(say.claimed, applied ? lamports : w.pending) : undefined;
    const withClaimed = (o: Record<string, unknown>): string => {
      const text = JSON.stringify({ ...o, ...(claimed !== undefined ? { claimed_sol: 'CLAIMED' } : {}), tx: `tx${(txs += 1)}`, epoch: w.epoch(), ...extra });
      return claimed === undefined ? text : text.replace('"CLAIMED"', claimed);
    };
    const bodies: Record<Exclude<ActionBody, 'honest'>, () => string> = {
      success: () => withClaimed({ status: SUCCESS_WORD[op] }),
      failed: () => withClaimed({ status: 'failed' }),
      rejected: () => withClaimed({ status: 'rejected' }),
      error_status: () => withClaimed({ status: 'error' }),
      error_object: () => JSON.stringify({ error: { code: refused === undefined ? 'X' : 'REFUSED', message: echo } }),
      pending: () => withClaimed({ status: 'pending' }),
      other_status: () => withClaimed({ status: 'queued' }),
      no_status: () => withClaimed({}),
      empty: () => '',
      unreadable: () => withClaimed({ status: 'pending' }).slice(0, 17),
      text: () => `upstream error: ${echo}`,
    };
    const text = bodies[kind]();
    w.note(
      `POST ${op}${op === 'claim' ? '' : ` ${/"amount":([0-9.]+)/.exec(raw)?.[1] ?? '?'} ${String(body['symbol'])}`} ts=${String(req.headers['x-svc-ts'])}` +
        ` → ${refused !== undefined ? `REFUSED (${refused})` : applied ? `APPLIED ${formatSol(lamports)}` : 'not applied'}` +
        ` → said ${status} ${kind}${op === 'claim' && claimed !== undefined ? ` claimed_sol=${claimed}` : ''} ${say.wire}` +
        `${say.echo ? ` echo ${say.echo.what}/${say.echo.form}@${say.echo.pad}` : ''}`,
    );
    send(res, status, text, refused === undefined ? say.wire : 'whole', w.setup.timeoutMs);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://h').pathname;
      const raw = Buffer.concat(chunks).toString('utf8');
      if (req.method === 'GET' && path.startsWith('/v1/rewards/wallet/')) return summary(decodeURIComponent(path.slice('/v1/rewards/wallet/'.length)), res);
      const op = PATHS[path];
      if (req.method === 'POST' && op !== undefined) return action(op, req, raw, res);
      plain(res, 404, 'NOT_FOUND', 'no such route');
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    register: (setup) => void wallets.set(setup.address, new WalletWorld(setup)),
    world: (address) => {
      const w = wallets.get(address);
      if (w === undefined) throw new Error(`the hostile server does not know ${address}`);
      return { ledger: w.ledger, transcript: w.transcript, refusals: w.refusals, pending: w.pending, epoch: w.epoch() };
    },
    forget: (address) => void wallets.delete(address),
    mark: (address, line) => void wallets.get(address)?.transcript.push(`-- ${line}`),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
