import bs58 from 'bs58';
import { execFileSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { checkAddress, loadKey, writeKeyFile } from '../../src/keys/keys.js';
import { generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import { verifySignature } from '../../src/keys/verify.js';
import { KeyError } from '../../src/errors.js';
import { REDACTED, Redactor } from '../../src/log/redact.js';
import { thrown } from '../support/errors.js';

// Counts key derivations (OpenSSL private-key imports); otherwise node:crypto itself.
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  return { ...crypto, createPrivateKey: vi.fn(crypto.createPrivateKey) };
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'autoclaim-keys-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const keyError = (fn: () => unknown): KeyError => thrown(KeyError, fn);

/** No key material, in any encoding, in a message. */
function expectNoSecret(message: string, secret: Uint8Array): void {
  const seed = secret.slice(0, 32);
  for (const s of [bs58.encode(secret), bs58.encode(seed), Buffer.from(seed).toString('hex'), Buffer.from(seed).toString('base64'), [...seed].join(',')]) {
    expect(message).not.toContain(s);
  }
}

const noEnv = { env: {} as NodeJS.ProcessEnv };

describe('loadKey from a file', () => {
  it('accepts a solana-keygen file with mode 0600 and signs for its address', () => {
    const { secretKey64, address } = generateKeypair();
    const file = join(dir, 'treasury.json');
    writeKeyFile(file, secretKey64);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const signer = loadKey({ file }, noEnv);
    expect(signer.address).toBe(address);
    const msg = new TextEncoder().encode('hello');
    expect(verifySignature(msg, signer.sign(msg), address)).toBe(true);
  });

  it('resolves a relative path against baseDir', () => {
    const { secretKey64, address } = generateKeypair();
    mkdirSync(join(dir, 'keys'));
    writeKeyFile(join(dir, 'keys', 'w.json'), secretKey64);
    expect(loadKey({ file: './keys/w.json' }, { ...noEnv, baseDir: dir }).address).toBe(address);
  });

  it('refuses a file readable by group or others, saying how to fix it', () => {
    const { secretKey64 } = generateKeypair();
    const file = join(dir, 'open.json');
    writeKeyFile(file, secretKey64);
    for (const mode of [0o644, 0o640, 0o604]) {
      chmodSync(file, mode);
      const err = keyError(() => loadKey({ file }, noEnv));
      expect(err.code).toBe('KEY_PERMISSIONS');
      expect(err.message).toContain(file);
      expect(err.message).toContain(`chmod 600 ${file}`);
      expect(err.message).toContain(`0${mode.toString(8)}`);
      expectNoSecret(err.message, secretKey64);
    }
    chmodSync(file, 0o400);
    expect(() => loadKey({ file }, noEnv)).not.toThrow();
  });

  it('names a missing file', () => {
    const err = keyError(() => loadKey({ file: join(dir, 'nope.json') }, noEnv));
    expect(err.code).toBe('KEY_MISSING');
    expect(err.message).toContain('nope.json');
  });

  it('distinguishes wrong length, wrong format and a corrupt public half', () => {
    const { secretKey64 } = generateKeypair();
    const write = (name: string, text: string) => {
      const file = join(dir, name);
      writeFileSync(file, text, { mode: 0o600 });
      return file;
    };
    const cases: Array<[string, string]> = [
      [write('short.json', JSON.stringify([...secretKey64.slice(0, 63)])), 'KEY_LENGTH'],
      [write('notjson.json', '[1,2,'), 'KEY_FORMAT'],
      [write('big.json', JSON.stringify([...secretKey64.slice(0, 63), 256])), 'KEY_FORMAT'],
      [write('words.json', JSON.stringify(['a', ...secretKey64.slice(1)])), 'KEY_FORMAT'],
      [write('bad58.txt', 'not base58 at all! 0OIl'), 'KEY_BASE58'],
    ];
    const spliced = secretKey64.slice();
    spliced.set(generateKeypair().secretKey64.slice(32), 32);
    cases.push([write('spliced.json', JSON.stringify([...spliced])), 'KEY_INCONSISTENT']);
    for (const [file, code] of cases) {
      const err = keyError(() => loadKey({ file }, noEnv));
      expect(err.code, file).toBe(code);
      expect(err.message).toContain(file);
      expectNoSecret(err.message, secretKey64);
    }
  });

  it('registers the key material with the redactor', () => {
    const { secretKey64 } = generateKeypair();
    const file = join(dir, 'k.json');
    writeKeyFile(file, secretKey64);
    const redactor = new Redactor();
    loadKey({ file }, { ...noEnv, redactor });
    const line = `leak ${JSON.stringify([...secretKey64])} ${bs58.encode(secretKey64)} ${Buffer.from(secretKey64.slice(0, 32)).toString('hex')}`;
    expectNoSecret(redactor.redact(line), secretKey64);
    expect(redactor.redact(line)).toContain('[REDACTED]');
  });

  it('refuses a directory or a FIFO at the key path, without blocking on the FIFO', () => {
    const sub = join(dir, 'sub');
    mkdirSync(sub, { mode: 0o700 });
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    for (const file of [sub, fifo]) {
      const err = keyError(() => loadKey({ file }, noEnv));
      expect(err.code).toBe('KEY_UNREADABLE');
      expect(err.message).toBe(`key file ${file} is not a regular file`);
    }
  });

  it('derives the key once: the public half of a 64-byte key is checked against the signer\'s own', () => {
    const { secretKey64, address } = generateKeypair();
    const file = join(dir, 'k.json');
    writeKeyFile(file, secretKey64);
    const imports = vi.mocked(createPrivateKey);
    imports.mockClear();
    signerFromSeed(secretKey64.slice(0, 32));
    const oneDerivation = imports.mock.calls.length;
    expect(oneDerivation).toBeGreaterThan(0);
    imports.mockClear();
    expect(loadKey({ file }, { ...noEnv, redactor: new Redactor() }).address).toBe(address);
    expect(imports.mock.calls.length).toBe(oneDerivation);
  });

  it('a spliced key (another seed under this public half) is refused at load, naming the file and no secret', () => {
    const { secretKey64 } = generateKeypair();
    const other = generateKeypair();
    const spliced = secretKey64.slice();
    spliced.set(other.secretKey64.subarray(0, 32), 0);
    const file = join(dir, 'spliced.json');
    writeKeyFile(file, spliced);
    const err = keyError(() => loadKey({ file }, noEnv));
    expect(err.code).toBe('KEY_INCONSISTENT');
    expect(err.message).toContain(file);
    expectNoSecret(err.message, spliced);
  });

  it('writeKeyFile never overwrites an existing file', () => {
    const file = join(dir, 'k.json');
    writeKeyFile(file, generateKeypair().secretKey64);
    expect(keyError(() => writeKeyFile(file, generateKeypair().secretKey64)).code).toBe('KEY_EXISTS');
  });
});

describe('what loading a key registers with the redactor', () => {
  /**
   * Every printed form of the 64-byte key and of its seed, and what must be left of it: nothing,
   * or, where the form starts with the seed's own form (hex, number list), the public half — the
   * wallet's address in another encoding, no secret.
   */
  function expectations(secretKey64: Uint8Array, fileText: string | undefined): Array<[string, string, string]> {
    const seed = secretKey64.slice(0, 32);
    const pub = secretKey64.slice(32);
    const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
    const list = (b: Uint8Array) => [...b].join(',');
    const all: Array<[string, string, string]> = [];
    for (const [what, bytes] of [['seed', seed], ['64-byte key', secretKey64]] as const) {
      const tail = bytes.length === 64 ? pub : new Uint8Array(0);
      const json = JSON.stringify([...bytes]);
      all.push(
        [`${what} hex`, hex(bytes), `${REDACTED}${hex(tail)}`],
        [`${what} base64`, Buffer.from(bytes).toString('base64'), REDACTED],
        [`${what} base64url`, Buffer.from(bytes).toString('base64url'), REDACTED],
        [`${what} base58`, bs58.encode(bytes), REDACTED],
        [`${what} number list`, list(bytes), tail.length > 0 ? `${REDACTED},${list(tail)}` : REDACTED],
        [`${what} JSON array`, json, tail.length > 0 ? `[${REDACTED},${list(tail)}]` : `[${REDACTED}]`],
      );
    }
    if (fileText !== undefined) {
      // What solana-keygen writes loses its seed's numbers, like the JSON array above; any other
      // spelling of a key file is registered whole, so printing it leaves nothing.
      const canonical = fileText.trim() === JSON.stringify([...secretKey64]);
      all.push(['raw key file text', fileText, `${canonical ? `[${REDACTED},${list(pub)}]` : REDACTED}${fileText.slice(fileText.trimEnd().length)}`]);
    }
    return all;
  }

  function expectScrubbed(redactor: Redactor, secretKey64: Uint8Array, fileText?: string): void {
    const seed = secretKey64.slice(0, 32);
    const seedForms = [Buffer.from(seed).toString('hex'), Buffer.from(seed).toString('base64'), bs58.encode(seed), [...seed].join(',')];
    for (const [what, form, left] of expectations(secretKey64, fileText)) {
      const out = redactor.redact(`printed: ${form} (end)`);
      expect(out, what).toBe(`printed: ${left} (end)`);
      for (const s of seedForms) expect(out, what).not.toContain(s);
    }
  }

  it('from a solana-keygen key file', () => {
    const { secretKey64 } = generateKeypair();
    const file = join(dir, 'k.json');
    writeKeyFile(file, secretKey64);
    const redactor = new Redactor();
    loadKey({ file }, { ...noEnv, redactor });
    expectScrubbed(redactor, secretKey64, readFileSync(file, 'utf8'));
  });

  it('from base58 of the 64-byte key, and from base58 of the bare seed', () => {
    const { secretKey64 } = generateKeypair();
    for (const text of [bs58.encode(secretKey64), `${bs58.encode(secretKey64.slice(0, 32))}\n`]) {
      const redactor = new Redactor();
      loadKey({ env: 'K' }, { env: { K: text }, redactor });
      expectScrubbed(redactor, secretKey64);
    }
  });

  it('from a file that is not canonical JSON, and from one that fails to parse', () => {
    const { secretKey64 } = generateKeypair();
    const pretty = `${JSON.stringify([...secretKey64], null, 2)}\n`;
    const file = join(dir, 'pretty.json');
    writeFileSync(file, pretty, { mode: 0o600 });
    const redactor = new Redactor();
    loadKey({ file }, { ...noEnv, redactor });
    expect(redactor.redact(`x ${pretty.trim()} y`)).toBe(`x ${REDACTED} y`);
    expectScrubbed(redactor, secretKey64);

    const broken = join(dir, 'broken.json');
    const text = JSON.stringify([...secretKey64]).slice(0, -1);
    writeFileSync(broken, text, { mode: 0o600 });
    const failed = new Redactor();
    expect(keyError(() => loadKey({ file: broken }, { ...noEnv, redactor: failed })).code).toBe('KEY_FORMAT');
    expect(failed.redact(`x ${text} y`)).toBe(`x ${REDACTED} y`);
  });
});

describe('a loaded key holds its bytes out of print', () => {
  // The spellings the redactor does not register (util.inspect's `<Buffer 0a 1b …>`, a
  // Uint8Array's JSON `{"0":10,…}`) are closed by structure: the key lives in #private fields.
  it('shows no spelling of its bytes to util.inspect or JSON.stringify', () => {
    const { secretKey64, address } = generateKeypair();
    const key = loadKey({ env: 'K' }, { env: { K: bs58.encode(secretKey64) } });
    expect(key.address).toBe(address);
    const seen = `${inspect(key, { depth: Infinity, showHidden: true, getters: true })} ${JSON.stringify(key)}`;
    const seed = Buffer.from(secretKey64.subarray(0, 32));
    const spaced = [...seed.subarray(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    for (const form of [spaced, seed.toString('hex').slice(0, 16), seed.toString('base64').slice(0, 12), `"0":${seed[0]},"1":${seed[1]}`, [...seed.subarray(0, 6)].join(',')]) {
      expect(seen).not.toContain(form);
    }
    expectNoSecret(seen, secretKey64);
  });
});

describe('loadKey from the environment', () => {
  it('accepts base58 of a 64-byte secret key and of a 32-byte seed, with a trailing newline', () => {
    const { secretKey64, address } = generateKeypair();
    const env = {
      FULL: bs58.encode(secretKey64),
      SEED: `${bs58.encode(secretKey64.slice(0, 32))}\n`,
      JSONKEY: JSON.stringify([...secretKey64]),
    };
    expect(loadKey({ env: 'FULL' }, { env }).address).toBe(address);
    expect(loadKey({ env: 'SEED' }, { env }).address).toBe(address);
    expect(loadKey({ env: 'JSONKEY' }, { env }).address).toBe(address);
  });

  it('names an unset variable, a wrong length and bad base58, without the value', () => {
    const { secretKey64 } = generateKeypair();
    const env = { SHORT: bs58.encode(secretKey64.slice(0, 40)), BAD: 'l0l-not-base58', EMPTY: '' };
    expect(keyError(() => loadKey({ env: 'UNSET' }, { env })).code).toBe('KEY_MISSING');
    expect(keyError(() => loadKey({ env: 'EMPTY' }, { env })).code).toBe('KEY_MISSING');
    const short = keyError(() => loadKey({ env: 'SHORT' }, { env }));
    expect(short.code).toBe('KEY_LENGTH');
    expect(short.message).toContain('environment variable SHORT');
    expect(short.message).not.toContain(env.SHORT);
    expect(keyError(() => loadKey({ env: 'BAD' }, { env })).code).toBe('KEY_BASE58');
    const spliced = secretKey64.slice();
    spliced[40] = (spliced[40] ?? 0) ^ 0xff;
    expect(keyError(() => loadKey({ env: 'X' }, { env: { X: bs58.encode(spliced) } })).code).toBe('KEY_INCONSISTENT');
  });
});

describe('loadKey from a systemd credential', () => {
  it('reads $CREDENTIALS_DIRECTORY/name in either format', () => {
    const { secretKey64, address } = generateKeypair();
    const creds = join(dir, 'creds');
    mkdirSync(creds, { mode: 0o700 });
    writeFileSync(join(creds, 'treasury'), JSON.stringify([...secretKey64]), { mode: 0o400 });
    writeFileSync(join(creds, 'b58'), `${bs58.encode(secretKey64)}\n`, { mode: 0o440 });
    expect(loadKey({ credential: 'treasury' }, { env: { CREDENTIALS_DIRECTORY: creds } }).address).toBe(address);
    expect(loadKey({ credential: 'b58' }, { env: {}, credentialsDir: creds }).address).toBe(address);
  });

  it('names a missing credential or directory, and refuses path tricks', () => {
    const creds = join(dir, 'creds');
    mkdirSync(creds);
    expect(keyError(() => loadKey({ credential: 'nope' }, { env: { CREDENTIALS_DIRECTORY: creds } })).code).toBe('KEY_MISSING');
    const noDir = keyError(() => loadKey({ credential: 'treasury' }, { env: {} }));
    expect(noDir.code).toBe('KEY_MISSING');
    expect(noDir.message).toContain('CREDENTIALS_DIRECTORY');
    expect(keyError(() => loadKey({ credential: '../etc' }, { env: { CREDENTIALS_DIRECTORY: creds } })).code).toBe('KEY_FORMAT');
  });
});

describe('checkAddress', () => {
  it('passes a matching address and names both on a mismatch', () => {
    const a = generateKeypair();
    const b = generateKeypair();
    const signer = loadKey({ env: 'K' }, { env: { K: bs58.encode(a.secretKey64) } });
    expect(() => checkAddress(signer, a.address, 'treasury')).not.toThrow();
    const err = keyError(() => checkAddress(signer, b.address, 'treasury'));
    expect(err.code).toBe('KEY_MISMATCH');
    expect(err.message).toContain('treasury');
    expect(err.message).toContain(a.address);
    expect(err.message).toContain(b.address);
  });
});
