// The daemon's `signer` backend (key: { signer: { socket, key } }): a client of `autoclaim signer`
// over its unix socket (SPEC §7). It trusts the service no more than the network: at open, the
// service's public key for `key` must be the wallet's address; every answer's message must be the
// one the daemon builds from its own templates, and its signature must verify locally — the check
// the executor makes of every backend's answer (askSigner, keys/check.ts), not repeated here —
// else the action is refused, never sent. A refusal keeps the service's code.
import { createConnection, type Socket } from 'node:net';
import bs58 from 'bs58';
import type { SignerServiceKeyConfig } from '../../domain.js';
import { KeyError } from '../../errors.js';
import { messageFor, type MessageTemplates } from '../message.js';
import { SIGNER_UNAVAILABLE, SignerRefused, type SignAction, type SignResult, type WalletSigner } from '../port.js';
import { publicKeyOf } from '../check.js';
import { requestLine } from '../../signer/protocol.js';

export interface SignerServiceOptions {
  socket: string;
  /** The key's name in the service's signer.yaml. */
  key: string;
  /** The wallet's configured address. */
  address: string;
  /** The daemon's own templates (api.endpoints.<op>.message). */
  templates: MessageTemplates;
  /** How long opening (connect + public_keys) may take; default 5 s. */
  openTimeoutMs?: number;
}

/** An answer longer than this is not one of the service's. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Ids of requests given up at their deadline remembered at most (a service that never answers them). */
const MAX_ABANDONED = 10_000;

interface Pending {
  resolve: (answer: Record<string, unknown>) => void;
  reject: (err: Error) => void;
}

/** One connection to the service, answers matched to requests by id. */
class Connection {
  readonly #socket: Socket;
  readonly #pending = new Map<string, Pending>();
  /** Requests given up at their deadline, whose answers may still come: dropped when they do. */
  readonly #abandoned = new Set<string>();
  #buffered = '';
  #closed: Error | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.#data(chunk));
    socket.on('error', (err) => this.#fail(new SignerRefused('SIGNER_UNREACHABLE', `the signer connection failed (${(err as { code?: string }).code ?? err.message})`, { cause: err })));
    socket.on('close', () => this.#fail(new SignerRefused('SIGNER_UNREACHABLE', 'the signer closed the connection')));
  }

  static open(path: string, signal: AbortSignal): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      const onAbort = () => {
        socket.destroy();
        reject(new SignerRefused('SIGNER_TIMEOUT', `the signer at ${path} did not accept a connection in time`));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      socket.once('connect', () => {
        signal.removeEventListener('abort', onAbort);
        resolve(new Connection(socket));
      });
      socket.once('error', (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(new SignerRefused('SIGNER_UNREACHABLE', `the signer at ${path} cannot be reached (${(err as { code?: string }).code ?? err.message})`, { cause: err }));
      });
    });
  }

  get usable(): boolean {
    return this.#closed === undefined && !this.#socket.destroyed;
  }

  request(id: string, line: string, signal: AbortSignal): Promise<Record<string, unknown>> {
    if (this.#closed) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        // A late answer is dropped: the signature it may carry is never sent (the service has
        // journalled it, so it counts against the caps there: the safe side). The connection,
        // shared by every wallet of the socket, stays: the late answer is expected, not a lie.
        this.#pending.delete(id);
        if (this.#abandoned.size >= MAX_ABANDONED) this.#abandoned.clear();
        this.#abandoned.add(id);
        reject(new SignerRefused('SIGNER_TIMEOUT', 'the signer did not answer before the deadline; nothing was sent'));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(id, {
        resolve: (a) => {
          signal.removeEventListener('abort', onAbort);
          resolve(a);
        },
        reject: (e) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      // The requests of one tick (many wallets' turns at once) leave in one write.
      if (this.#socket.writableCorked === 0) {
        this.#socket.cork();
        process.nextTick(() => this.#socket.uncork());
      }
      this.#socket.write(line);
    });
  }

  close(): void {
    this.#socket.destroy();
  }

  #data(chunk: string): void {
    this.#buffered += chunk;
    let nl = this.#buffered.indexOf('\n');
    while (nl >= 0) {
      const line = this.#buffered.slice(0, nl);
      this.#buffered = this.#buffered.slice(nl + 1);
      this.#answer(line);
      nl = this.#buffered.indexOf('\n');
    }
    if (this.#buffered.length > MAX_ANSWER_BYTES) {
      this.#fail(new SignerRefused('SIGNER_UNREACHABLE', 'the signer sent a line over the size limit; the connection is dropped'));
      this.#socket.destroy();
    }
  }

  #answer(line: string): void {
    let answer: unknown;
    try {
      answer = JSON.parse(line);
    } catch {
      answer = undefined;
    }
    const id = (answer as { id?: unknown } | undefined)?.id;
    if (typeof id === 'string' && this.#abandoned.delete(id)) return;
    const pending = typeof id === 'string' ? this.#pending.get(id) : undefined;
    if (pending === undefined || answer === null || typeof answer !== 'object') {
      // Not an answer to anything asked: the stream cannot be trusted to pair answers any more. The
      // requests in flight were judged by nobody we can tell: like a connection that broke
      // (SIGNER_UNREACHABLE), each is asked once more on a new one, else put back to planned.
      this.#fail(new SignerRefused('SIGNER_UNREACHABLE', 'the signer sent an answer to no pending request; the connection is dropped'));
      this.#socket.destroy();
      return;
    }
    this.#pending.delete(id as string);
    pending.resolve(answer as Record<string, unknown>);
  }

  #fail(err: Error): void {
    this.#closed ??= err;
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }
}

/**
 * The connection to one service socket, shared by every wallet that signs through it: a daemon of
 * 10,000 wallets opens one, not 10,000 (each a file descriptor in both processes), and what its
 * wallets ask at once reaches the service together, for one journal commit. Closed when the last
 * wallet using it closes.
 */
class Channel {
  static readonly #open = new Map<string, Channel>();
  #users = 0;
  #connection: Connection | undefined;
  #opening: Promise<Connection> | undefined;

  private constructor(readonly path: string) {}

  static acquire(path: string): Channel {
    let channel = Channel.#open.get(path);
    if (channel === undefined) {
      channel = new Channel(path);
      Channel.#open.set(path, channel);
    }
    channel.#users++;
    return channel;
  }

  async release(): Promise<void> {
    if (--this.#users > 0) return;
    Channel.#open.delete(this.path);
    const opening = this.#opening;
    this.#opening = undefined;
    this.#connection?.close();
    this.#connection = undefined;
    if (opening !== undefined) (await opening.catch(() => undefined))?.close();
  }

  /**
   * The open connection, or a new one when there is none or it broke (the service restarted).
   * Concurrent callers share one attempt.
   */
  connect(signal: AbortSignal): Promise<Connection> {
    if (this.#connection?.usable === true) return Promise.resolve(this.#connection);
    this.#opening ??= Connection.open(this.path, signal).then(
      (c) => {
        this.#connection = c;
        this.#opening = undefined;
        // Released while it opened: nobody will close it.
        if (this.#users === 0) c.close();
        return c;
      },
      (err: unknown) => {
        this.#opening = undefined;
        throw err;
      },
    );
    return this.#opening;
  }
}

let nextId = 0;

export class SignerServiceBackend implements WalletSigner {
  readonly backend = 'signer' as const;
  readonly address: string;
  readonly #opts: SignerServiceOptions;
  readonly #channel: Channel;
  #closed = false;

  get location(): string {
    return `signer ${this.#opts.socket}`;
  }

  private constructor(opts: SignerServiceOptions) {
    this.#opts = opts;
    this.address = opts.address;
    this.#channel = Channel.acquire(opts.socket);
  }

  /** Connects and checks that the service's key `key` is the wallet's address (KeyError if not). */
  static async open(opts: SignerServiceOptions): Promise<SignerServiceBackend> {
    if (publicKeyOf(opts.address) === undefined) throw new KeyError('KEY_INVALID', `wallet address ${opts.address} is not an Ed25519 public key`);
    const backend = new SignerServiceBackend(opts);
    const signal = AbortSignal.timeout(opts.openTimeoutMs ?? 5_000);
    let answer: Record<string, unknown>;
    try {
      const id = `pk-${process.pid}-${nextId++}`;
      answer = await (await backend.#channel.connect(signal)).request(id, `${JSON.stringify({ op: 'public_keys', id })}\n`, signal);
    } catch (err) {
      await backend.close();
      throw new KeyError('KEY_MISSING', `signer ${opts.socket}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const keys = Array.isArray(answer.keys) ? (answer.keys as Array<{ key?: unknown; address?: unknown }>) : [];
    const entry = keys.find((k) => k.key === opts.key);
    if (entry === undefined) {
      await backend.close();
      throw new KeyError('KEY_MISSING', `signer ${opts.socket} holds no key named ${opts.key}`);
    }
    if (entry.address !== opts.address) {
      await backend.close();
      throw new KeyError('KEY_MISMATCH', `signer ${opts.socket}: key ${opts.key} is the key of address ${String(entry.address)}, but the wallet is configured with address ${opts.address}`);
    }
    return backend;
  }

  async sign(action: SignAction, signal: AbortSignal): Promise<SignResult> {
    if (action.wallet !== this.address) throw new SignerRefused('KEY_MISMATCH', `this signer signs for ${this.address}, not ${action.wallet}`);
    if (this.#closed) throw new SignerRefused('SIGNER_UNAVAILABLE', `the signer client for ${this.#opts.socket} is closed`);
    // Built before asking: a template that cannot be rendered is refused here, with nothing asked.
    const expected = messageFor(this.#opts.templates, action);
    const id = `${process.pid}-${nextId++}`;
    const line = requestLine(id, this.#opts.key, action);
    let answer: Record<string, unknown>;
    try {
      answer = await (await this.#channel.connect(signal)).request(id, line, signal);
    } catch (err) {
      if (!(err instanceof SignerRefused) || err.code !== 'SIGNER_UNREACHABLE' || signal.aborted) throw err;
      // The connection broke (the service restarted): once more on a new one. Safe even if the
      // first copy was signed: the service answers the identical request with the identical
      // signature, journalled once.
      try {
        answer = await (await this.#channel.connect(signal)).request(id, line, signal);
      } catch (again) {
        if (!(again instanceof SignerRefused) || again.code !== 'SIGNER_UNREACHABLE' || signal.aborted) throw again;
        // Still down: it never judged the action. SIGNER_UNAVAILABLE puts the step back to planned
        // (a refusal would cost a deposit whose claim was sent its epoch).
        throw new SignerRefused(SIGNER_UNAVAILABLE, `${again.message}; nothing was signed`, { cause: again });
      }
    }
    const error = answer.error as { code?: unknown; message?: unknown } | undefined;
    if (error !== undefined) {
      const code = typeof error.code === 'string' && /^[A-Z_]{1,40}$/.test(error.code) ? error.code : 'SIGNER_BAD_ANSWER';
      throw new SignerRefused(code, `the signer refused: ${code}${typeof error.message === 'string' ? ` (${error.message.slice(0, 200)})` : ''}`);
    }
    if (answer.message !== expected) {
      throw new SignerRefused('SIGNER_WRONG_MESSAGE', 'the signer signed another message than the one this daemon builds for the action (templates differ?); not sent');
    }
    let signature: Uint8Array;
    try {
      signature = bs58.decode(typeof answer.signature === 'string' ? answer.signature : '');
    } catch {
      // Not base58: an empty signature, which the executor's check refuses (BAD_SIGNATURE).
      signature = new Uint8Array();
    }
    // Verified by the executor (askSigner: keys/check.ts), as every backend's answer is: once.
    return { message: expected, signature };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#channel.release();
  }
}

/**
 * The port's shape for a wallet with `key: { signer: { socket, key } }` (backends/index.ts): like
 * the other remote backends it is made at once and connected by connectSigners, which fetches the
 * service's public keys and checks the wallet's address before anything is signed.
 */
export class SignerServiceClient implements WalletSigner {
  readonly backend = 'signer' as const;
  #backend: SignerServiceBackend | undefined;
  /** The open in progress, shared by the signatures that wait for it. */
  #opening: Promise<SignerServiceBackend> | undefined;

  constructor(
    readonly config: SignerServiceKeyConfig,
    readonly address: string,
    readonly templates: MessageTemplates,
  ) {}

  get location(): string {
    return `signer ${this.config.socket}`;
  }

  async connect(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const opened = await SignerServiceBackend.open({ socket: this.config.socket, key: this.config.key, address: this.address, templates: this.templates });
    const previous = this.#backend;
    this.#backend = opened;
    await previous?.close();
  }

  async sign(action: SignAction, signal: AbortSignal): Promise<SignResult> {
    // Not connected: the service was down when this client was made (a reload connects in the
    // background, once). Connect now, its key checked against the address before any signature.
    const backend = this.#backend ?? (await this.openNow(signal));
    return backend.sign(action, signal);
  }

  private async openNow(signal: AbortSignal): Promise<SignerServiceBackend> {
    this.#opening ??= this.connect(signal).then(
      () => {
        this.#opening = undefined;
        return this.#backend as SignerServiceBackend;
      },
      (err: unknown) => {
        this.#opening = undefined;
        throw err;
      },
    );
    try {
      return await this.#opening;
    } catch (err) {
      // The service not answering (the cause a SignerRefused of the connection) never judged the
      // action: back to planned. Its key missing or of another address is its answer: refused, as
      // a start refuses it.
      if (!(err instanceof KeyError) || err.cause instanceof SignerRefused) {
        throw new SignerRefused(SIGNER_UNAVAILABLE, `the signer service at ${this.config.socket} is not connected (${err instanceof Error ? err.message : String(err)})`, { cause: err });
      }
      throw new SignerRefused(err.code === 'KEY_MISSING' ? 'UNKNOWN_KEY' : err.code, err.message, { cause: err });
    }
  }

  async close(): Promise<void> {
    await this.#backend?.close();
  }
}
