// The signer's unix socket: the only way in (no TCP: the unit has no network either).
//
// Who may connect is decided by the file system, not by SO_PEERCRED: Node's net module exposes no
// getsockopt, and a native addon for one check would be a dependency in the process that holds
// the keys. So: the socket is created under a umask of 0117 (never, even for a moment, more open)
// and chmod 0660 — connect(2) on a unix socket needs write permission on it, so only its owner
// (the signer's user) and its group (shared with the daemon's user) can connect — and its
// directory must not be writable by others, or they could put their own socket in its place.
import { chmodSync, lstatSync, statSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { AutoclaimError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { errorLine, MAX_LINE_BYTES } from './protocol.js';
import type { SignerHandler } from './service.js';

export interface SignerServer {
  readonly path: string;
  close(): Promise<void>;
}

export const SOCKET_MODE = 0o660;

export async function listenSigner(path: string, handler: SignerHandler, logger: Logger): Promise<SignerServer> {
  checkDirectory(path);
  await removeStaleSocket(path);
  const connections = new Set<Socket>();
  const server = createServer((socket) => serve(socket, handler, logger, connections));
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
  chmodSync(path, SOCKET_MODE);
  const mode = statSync(path).mode & 0o777;
  if (mode !== SOCKET_MODE) {
    await closeServer(server, connections, path);
    throw new AutoclaimError('LISTEN_FAILED', `the signer socket ${path} has mode ${mode.toString(8)}, not 660`);
  }
  return { path, close: () => closeServer(server, connections, path) };
}

function checkDirectory(path: string): void {
  const dir = dirname(path);
  let mode: number;
  try {
    mode = statSync(dir).mode;
  } catch (err) {
    throw new AutoclaimError('LISTEN_INVALID', `the signer socket's directory ${dir} cannot be used (${(err as { code?: string }).code ?? 'error'})`, { cause: err });
  }
  if ((mode & 0o002) !== 0) {
    throw new AutoclaimError('LISTEN_INVALID', `the signer socket's directory ${dir} is writable by others (mode ${(mode & 0o7777).toString(8)}); anyone could replace the socket. Use a directory of the signer's own (systemd: RuntimeDirectory=)`);
  }
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

function serve(socket: Socket, handler: SignerHandler, logger: Logger, connections: Set<Socket>): void {
  connections.add(socket);
  let buffered = '';
  let pending: Promise<void> = Promise.resolve();
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
    // Every request that arrived together is journalled in one commit, then all are answered, in
    // order: a later chunk's answers wait for this one's (answerAll may await a remote backend).
    if (lines.length > 0) {
      const answered = handler.answerAll(lines);
      pending = pending
        .then(async () => {
          const text = await answered;
          if (!socket.destroyed) socket.write(text);
        })
        .catch((err: unknown) => {
          // Not a refusal (those are answers): a fault of the signer's own. Nothing was answered
          // for these lines, so the connection goes rather than answer later ones out of order.
          logger.error({ event: 'signer.connection_failed', err }, 'the signer failed to answer a request; connection closed');
          socket.destroy();
        });
    }
    if (Buffer.byteLength(buffered) > MAX_LINE_BYTES) {
      // No end of line in sight: answer once and hang up rather than buffer without bound.
      logger.warn({ event: 'signer.refused', code: 'BAD_REQUEST', why: 'line too long' }, 'refused a request line over the size limit; connection closed');
      socket.end(errorLine(null, 'BAD_REQUEST', `a request line is at most ${MAX_LINE_BYTES} bytes`));
      buffered = '';
    }
  });
  socket.on('error', (err) => logger.debug({ event: 'signer.connection_failed', err }, 'a client connection failed'));
  socket.on('close', () => connections.delete(socket));
}

async function closeServer(server: Server, connections: Set<Socket>, path: string): Promise<void> {
  for (const c of connections) c.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  try {
    unlinkSync(path);
  } catch {
    // Node removes it on close already; nothing else to do.
  }
}
