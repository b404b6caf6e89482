// Who may connect is the file system's decision (server.ts): a socket directory others can write
// to is refused, as is a path that is not a socket; a stale socket is replaced, a live one is not.
import { chmodSync, lstatSync, mkdirSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SignerHandler } from '../../src/signer/service.js';
import { listenSigner } from '../../src/signer/server.js';
import { tempDir } from '../e2e/helpers.js';
import { captureLog } from '../support/log.js';

const handler: SignerHandler = { answer: () => Promise.resolve(''), answerAll: () => Promise.resolve(''), counts: { signed: 0, refused: {} } };

describe('the signer socket and its directory', () => {
  const t = tempDir('autoclaim-signer-dir-');
  afterAll(() => t.cleanup());

  // The group is the daemon's: it, like any other user, could replace the socket.
  it.each([
    ['others', 'open', 0o777],
    ['its group', 'group', 0o770],
  ])('refuses a directory %s can write to', async (_who, name, mode) => {
    const dir = join(t.dir, name);
    mkdirSync(dir);
    chmodSync(dir, mode);
    await expect(listenSigner(join(dir, 's.sock'), handler, captureLog().logger)).rejects.toMatchObject({ code: 'LISTEN_INVALID' });
  });

  it('refuses to replace a file that is not a socket, and a socket a live process answers on', async () => {
    const file = join(t.dir, 'not-a-socket');
    writeFileSync(file, '');
    await expect(listenSigner(file, handler, captureLog().logger)).rejects.toMatchObject({ code: 'LISTEN_INVALID' });
    const live = join(t.dir, 'live.sock');
    const other = createServer();
    await new Promise<void>((r) => other.listen(live, () => r()));
    await expect(listenSigner(live, handler, captureLog().logger)).rejects.toMatchObject({ code: 'LISTEN_FAILED' });
    await new Promise<void>((r) => other.close(() => r()));
  });

  it('never changes the mode of what a symlink put in the socket\'s place points to (a key file made readable by the group)', async () => {
    // Whoever can write the socket's directory swaps the socket, right after it is bound, for a
    // symlink to a file of the signer's; a chmod by path would then open that file to the group.
    const dir = join(t.dir, 'swap');
    mkdirSync(dir, 0o700);
    const key = join(dir, 'treasury.json');
    writeFileSync(key, '[]', { mode: 0o600 });
    const sock = join(dir, 's.sock');
    const listening = listenSigner(sock, handler, captureLog().logger);
    // listen() binds synchronously inside a microtask of listenSigner; its 'listening' event comes
    // in a later tick. Microtasks run first, so this loop sees the socket before listenSigner resumes.
    let swapped = false;
    for (let i = 0; i < 10_000 && !swapped; i++) {
      await Promise.resolve();
      try {
        if (lstatSync(sock).isSocket()) {
          unlinkSync(sock);
          symlinkSync(key, sock);
          swapped = true;
        }
      } catch {
        // not bound yet
      }
    }
    expect(swapped).toBe(true);
    const server = await listening.catch((err: unknown) => err);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(server).toMatchObject({ code: 'LISTEN_FAILED' });
  });

  it('stops reading a client that does not read its answers, until it does', async () => {
    // Each answer is 1 MiB (as public_keys is for a large signer.yaml): a client asking without
    // reading would otherwise have every answer held in the signer's memory.
    const asked: string[] = [];
    const big: SignerHandler = {
      answer: () => Promise.resolve(''),
      answerAll: (lines) => {
        asked.push(...lines);
        return Promise.resolve(lines.map((l) => `${JSON.stringify({ id: l, pad: 'x'.repeat(1 << 20) })}\n`).join(''));
      },
      counts: { signed: 0, refused: {} },
    };
    const sock = join(t.dir, 'slow.sock');
    const server = await listenSigner(sock, big, captureLog().logger);
    const client = createConnection(sock);
    client.pause();
    await new Promise<void>((r) => client.once('connect', () => r()));
    client.write('a\n');
    for (let i = 0; i < 500 && asked.length < 1; i++) await sleep(10);
    expect(asked).toEqual(['a']);
    client.write('b\n');
    await sleep(300);
    expect(asked).toEqual(['a']);
    // Read: the signer reads again, and answers b.
    let received = 0;
    client.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    client.resume();
    for (let i = 0; i < 500 && asked.length < 2; i++) await sleep(10);
    expect(asked).toEqual(['a', 'b']);
    for (let i = 0; i < 500 && received <= 2 << 20; i++) await sleep(10);
    expect(received).toBeGreaterThan(2 << 20);
    client.destroy();
    await server.close();
  });
});
