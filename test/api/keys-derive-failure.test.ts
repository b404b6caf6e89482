// A deferred key whose derivation fails (OpenSSL refusing the seed, say) fails every later use the
// same way: its seed is zeroed after the one try, so a second call must not turn into another error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';

const failure = new Error('OpenSSL refused the seed');
vi.mock('../../src/api/signer.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/api/signer.js')>();
  return {
    ...real,
    deriveSigner: () => {
      throw failure;
    },
  };
});

const { loadKey, writeKeyFile } = await import('../../src/api/keys.js');
const { generateKeypair } = await import('../../src/api/signer.js');

const dir = mkdtempSync(join(tmpdir(), 'autoclaim-derive-'));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('a deferred key that failed to derive throws that same error at every signature and verify', () => {
  const { secretKey64, address } = generateKeypair();
  const file = join(dir, 'k.json');
  writeKeyFile(file, secretKey64);
  const key = loadKey({ file }, { env: {}, deferDerivation: true });
  expect(key.address).toBe(address);
  expect(() => key.sign(new Uint8Array([1]))).toThrow(failure);
  expect(() => key.sign(new Uint8Array([1]))).toThrow(failure);
  expect(() => key.verify()).toThrow(failure);
});
