// Who may connect is the file system's decision (server.ts): a socket directory others can write
// to is refused, as is a path that is not a socket; a stale socket is replaced, a live one is not.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
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

  it('refuses a directory others can write to', async () => {
    const dir = join(t.dir, 'open');
    mkdirSync(dir);
    chmodSync(dir, 0o777);
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
});
