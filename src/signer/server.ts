// The signer's unix socket: the only way in (no TCP: the unit has no network either).
//
// Who may connect is decided by the file system, not by SO_PEERCRED: Node's net module exposes no
// getsockopt, and a native addon for one check would be a dependency in the process that holds
// the keys. So: the socket is created under a umask of 0117, so mode 0660 from its bind (never,
// even for a moment, more open) — connect(2) on a unix socket needs write permission on it, so
// only its owner (the signer's user) and its group (shared with the daemon's user) can connect —
// and its directory must be the signer's (or root's) and writable by nobody else, the group (the
// daemon's) included: whoever can write it can put their own socket, or a symlink, in its place.
// Nothing is done to the socket by path after its bind but lstat and unlink, neither of which
// follows a symlink: a chmod would have changed the mode of whatever a symlink put there pointed
// to (a key file, the journal), opening it to the daemon's group.
import { lstatSync, statSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { AutoclaimError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { OWN_DIRECTORY_FIX, otherWriters } from './own-directory.js';
import { errorLine, MAX_LINE_BYTES } from './protocol.js';
import type { SignerHandler } from './service.js';

/** What the server asks of the handler (service.ts): the answers to a batch, after its commit. */
type BatchHandler = Pick<SignerHandler, 'answerAll'>;

export interface SignerServer {
  readonly path: string;
  close(): Promise<void>;
}

export const SOCKET_MODE = 0o660;

export async function listenSigner(path: string, handler: BatchHandler, logger: Logger): Promise<SignerServer> {
  checkDirectory(path);
  await removeStaleSocket(path);
  const connections = new Set<Socket>();
  const batcher = new Batcher(handler, logger);
  // allowHalfOpen: a client that ends its side right after asking is answered before its end.
  const server = createServer({ allowHalfOpen: true }, (socket) => serve(socket, batcher, logger, connections));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new AutoclaimError('LISTEN_FAILED', `the signer cannot listen on ${path} (${(err as { code?: string }).code ?? err.message})`, { cause: err })));
    // bind(2) happens inside listen(), synchronously: the umask covers the socket's creation only.
    const old = process.umask(0o117);
    try {
      server.listen(path, () => resolve());
    } finally {
      process.umask(old);
    }
  });
  const bound = boundSocketProblem(path);
  if (bound !== undefined) {
    await closeServer(server, connections, path, batcher);
    throw new AutoclaimError('LISTEN_FAILED', `the signer socket ${path} ${bound}`);
  }
  return { path, close: () => closeServer(server, connections, path, batcher) };
}

function checkDirectory(path: string): void {
  const dir = dirname(path);
  let st;
  try {
    st = statSync(dir);
  } catch (err) {
    throw new AutoclaimError('LISTEN_INVALID', `the signer socket's directory ${dir} cannot be used (${(err as { code?: string }).code ?? 'error'})`, { cause: err });
  }
  const writers = otherWriters(st);
  if (writers !== undefined) throw new AutoclaimError('LISTEN_INVALID', `the signer socket's directory ${dir} ${writers}: they could replace the socket; ${OWN_DIRECTORY_FIX}`);
}

/** Why what is at `path` right after the bind is not the signer's socket of mode 0660; undefined when it is. */
function boundSocketProblem(path: string): string | undefined {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    return `is gone right after it was made (${(err as { code?: string }).code ?? 'error'})`;
  }
  if (!st.isSocket()) return 'was replaced right after it was made (it is no longer a socket); is its directory the signer\'s alone?';
  const mode = st.mode & 0o777;
  if (mode !== SOCKET_MODE) return `has mode ${mode.toString(8)}, not 660`;
  return undefined;
}

/** A socket left by a signer that died is removed; one a live signer answers on is not. */
async function removeStaleSocket(path: string): Promise<void> {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (!st.isSocket()) throw new AutoclaimError('LISTEN_INVALID', `${path} exists and is not a socket; not replacing it`);
  const live = await new Promise<boolean>((resolve) => {
    const c = createConnection(path);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
  if (live) throw new AutoclaimError('LISTEN_FAILED', `another signer is listening on ${path}`);
  unlinkSync(path);
}

/**
 * Group commit across connections: the request lines of every client that arrived while the
 * previous batch was being committed form the next batch — one journal commit (one fsync) for all
 * of them — and each client then gets its own answers, in the order it asked. One client with 32
 * requests in flight and 32 clients with one each (several daemons of a cluster) cost the same
 * number of commits. Batches run one at a time, so the handler never sees two at once.
 */
class Batcher {
  #queue: Array<{ socket: Socket; lines: string[]; thenEnd: string | undefined; paused: boolean }> = [];
  /** The batches running now, until none is left; undefined when idle. */
  #running: Promise<void> | undefined;
  /** A batch is in the handler (which may await: a remote key, an async journal). */
  #committing = false;

  constructor(
    private readonly handler: BatchHandler,
    private readonly logger: Logger,
  ) {}

  /** `lines` of `socket` go into the next batch; `thenEnd`, if given, is written last and the connection ended. */
  add(socket: Socket, lines: string[], thenEnd?: string): void {
    // A client that writes while a batch is in the handler is not read from again until these
    // lines are answered: at most one read's worth of a client's lines waits here. (Not paused
    // otherwise: pausing and resuming a socket cost ~50-100 µs a request, one at a time.)
    const paused = this.#committing;
    if (paused) socket.pause();
    this.#queue.push({ socket, lines, thenEnd, paused });
    if (this.#running !== undefined) return;
    // After the poll phase: the data of every client readable now joins this batch.
    this.#running = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#drain());
  }

  /** Resolves when no batch is running (a closing server waits for it before its journal closes). */
  async idle(): Promise<void> {
    await this.#running;
  }

  async #drain(): Promise<void> {
    try {
      await this.#drainQueue();
    } finally {
      this.#running = undefined;
    }
  }

  async #drainQueue(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0);
      const lines = batch.flatMap((b) => b.lines);
      let answers: string[] | undefined;
      this.#committing = true;
      try {
        answers = lines.length === 0 ? [] : splitAnswers(await this.handler.answerAll(lines), lines.length);
      } catch (err) {
        this.logger.error({ event: 'signer.batch_failed', err }, 'the signer could not answer a batch; its connections are closed unanswered');
      } finally {
        this.#committing = false;
      }
      let at = 0;
      for (const { socket, lines: own, thenEnd, paused } of batch) {
        // Gone, or ended (a line too long): its answers have nowhere to go.
        if (socket.destroyed || !socket.writable) {
          at += own.length;
          continue;
        }
        // No answers (a failure): the client sees its connection close, and asks again on a new
        // one; the identical request gets the identical signature, journalled once.
        if (answers === undefined) socket.destroy();
        else {
          const text = answers.slice(at, at + own.length).join('');
          if (thenEnd !== undefined) socket.end(text + thenEnd);
          else {
            if (text !== '') socket.write(text);
            // A client that does not read its answers is not read from either, until it does: what
            // waits for it here stays near one batch's answers, not every answer it ever asked for
            // (a public_keys line of 20 bytes is answered with every key's name and address).
            if (socket.writableNeedDrain) {
              socket.pause();
              socket.once('drain', () => socket.resume());
            } else if (paused) socket.resume();
          }
        }
        at += own.length;
      }
    }
  }
}

/** The handler's answers, one line each (JSON escapes a newline in a string), back into lines. */
function splitAnswers(text: string, count: number): string[] {
  const answers = text.split('\n').slice(0, -1).map((a) => `${a}\n`);
  if (answers.length !== count) throw new Error(`the handler gave ${answers.length} answer lines for ${count} requests`);
  return answers;
}

function serve(socket: Socket, batcher: Batcher, logger: Logger, connections: Set<Socket>): void {
  connections.add(socket);
  let buffered = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    let nl = buffered.indexOf('\n');
    const lines: string[] = [];
    while (nl >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim() !== '') lines.push(line.length > MAX_LINE_BYTES ? '' : line);
      nl = buffered.indexOf('\n');
    }
    if (Buffer.byteLength(buffered) > MAX_LINE_BYTES) {
      // No end of line in sight: answer what came before it, refuse it, and hang up rather than
      // buffer without bound.
      logger.warn({ event: 'signer.refused', code: 'BAD_REQUEST', why: 'line too long' }, 'refused a request line over the size limit; connection closed');
      socket.removeAllListeners('data');
      batcher.add(socket, lines, errorLine(null, 'BAD_REQUEST', `a request line is at most ${MAX_LINE_BYTES} bytes`));
      buffered = '';
      return;
    }
    if (lines.length > 0) batcher.add(socket, lines);
  });
  // The client ended its side: ours ends once everything it asked before is answered.
  socket.on('end', () => batcher.add(socket, [], ''));
  socket.on('error', (err) => logger.debug({ event: 'signer.connection_failed', err }, 'a client connection failed'));
  socket.on('close', () => connections.delete(socket));
}

/**
 * How long a stopping signer waits for its clients to take their last answers before it cuts them
 * off (one that does not read them would otherwise hold the stop for ever).
 */
const CLOSE_GRACE_MS = 1_000;

async function closeServer(server: Server, connections: Set<Socket>, path: string, batcher: Batcher): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // No new line is taken, but what is being signed is answered: its records are committed and
  // count, so an answer dropped here cost the daemon the epoch's claim (its fresh attempt carries
  // a new ts, another message: ALREADY_SIGNED_EPOCH).
  for (const c of connections) {
    c.removeAllListeners('data');
    c.pause();
  }
  await batcher.idle();
  for (const c of connections) c.end(() => c.destroy());
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
  clearTimeout(timer);
  for (const c of connections) c.destroy();
  await closed;
  try {
    unlinkSync(path);
  } catch {
    // Node removes it on close already; nothing else to do.
  }
}
