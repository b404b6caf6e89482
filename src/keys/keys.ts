// Loading wallet keys. Like ssh, a key file anyone else can read is refused. Every message names
// the source (file, variable, credential) and never the key material; when a Redactor is given,
// the material is registered with it before anything can go wrong.
import { chmodSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import bs58 from 'bs58';
import type { InProcessKeySource } from '../domain.js';
import { FILE_LIMITS, readBounded, tooBigText } from '../config/read-bounded.js';
import { shownPath } from '../config/shown-key.js';
import { KeyError } from '../errors.js';
import type { Redactor } from '../log/redact.js';
import { deriveSigner, type Signer } from './signer.js';

export interface LoadKeyOptions {
  env: NodeJS.ProcessEnv;
  /** systemd's $CREDENTIALS_DIRECTORY; defaults to env.CREDENTIALS_DIRECTORY. */
  credentialsDir?: string;
  /** Relative key files resolve against this (the config file's folder); default cwd. */
  baseDir?: string;
  redactor?: Redactor;
}

function resolveKeyPath(file: string, baseDir: string | undefined): string {
  return isAbsolute(file) ? file : resolve(baseDir ?? process.cwd(), file);
}

function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function readSecretFile(path: string, label: string, checkMode: boolean): string {
  // One open, then everything on that descriptor (read-bounded.ts): the mode checked is the mode of
  // the file read, and a file over the limit is refused before a byte of it is read.
  const read = readBounded(path, FILE_LIMITS.keyFile);
  if (!read.ok) {
    if (read.reason === 'too_big') throw new KeyError('KEY_TOO_LARGE', `${label}: ${tooBigText('key file', read.size, FILE_LIMITS.keyFile)}`);
    if (read.reason !== 'error') throw new KeyError('KEY_UNREADABLE', `${label} is not a regular file`);
    if (read.code === 'ENOENT') throw new KeyError('KEY_MISSING', `${label} does not exist`);
    throw new KeyError('KEY_UNREADABLE', `${label} cannot be read (${read.code})`);
  }
  try {
    if (checkMode && (read.mode & 0o077) !== 0) {
      const octal = (read.mode & 0o777).toString(8).padStart(4, '0');
      throw new KeyError(
        'KEY_PERMISSIONS',
        `${label} is readable by group or others (mode ${octal}); restrict it with: chmod 600 ${shownPath(path)}`,
      );
    }
    return read.bytes.toString('utf8');
  } finally {
    read.bytes.fill(0); // it held a secret
  }
}

/** The key text of a source, unparsed. */
function readSource(source: InProcessKeySource, opts: LoadKeyOptions): { text: string; label: string } {
  if ('file' in source) {
    const path = resolveKeyPath(source.file, opts.baseDir);
    const label = `key file ${shownPath(path)}`;
    return { text: readSecretFile(path, label, true), label };
  }
  if ('env' in source) {
    const label = `environment variable ${source.env}`;
    const text = opts.env[source.env];
    if (text === undefined || text.trim() === '') throw new KeyError('KEY_MISSING', `${label} is not set`);
    return { text, label };
  }
  const label = `credential ${shownPath(source.credential)}`;
  const dir = opts.credentialsDir ?? opts.env['CREDENTIALS_DIRECTORY'];
  if (dir === undefined || dir === '') {
    throw new KeyError('KEY_MISSING', `${label} needs $CREDENTIALS_DIRECTORY (systemd LoadCredential=) to be set`);
  }
  if (source.credential === '' || /[/\\]|^\.\.?$/.test(source.credential)) {
    throw new KeyError('KEY_FORMAT', `${label}: a credential name is a plain file name`);
  }
  // systemd owns the credentials directory and its modes (0400 under a private mount), so the
  // group/other check that guards hand-made key files does not apply here.
  return { text: readSecretFile(join(dir, source.credential), `${label} (${shownPath(join(dir, source.credential))})`, false), label };
}

/**
 * A backend's secret (a PKCS#11 PIN, a Vault token) from where secrets may be: the environment, a
 * mode-0600 file, a systemd credential. Registered with the redactor before it is returned;
 * surrounding whitespace is dropped.
 */
export function readBackendSecret(source: InProcessKeySource, what: string, opts: LoadKeyOptions): string {
  const { text, label } = readSource(source, opts);
  const secret = text.trim();
  if (secret === '') throw new KeyError('KEY_MISSING', `${what} (${label}) is empty`);
  opts.redactor?.add(secret);
  return secret;
}

/** Key text decoded. */
interface ParsedKey {
  /** The 32-byte Ed25519 seed. */
  seed: Uint8Array;
  /** The public half of a 64-byte secret key, as given: unchecked (LoadedKey checks it against the seed). */
  givenPublicKey: Uint8Array | undefined;
}

/**
 * Turns key text into a 32-byte seed (and the given public half): a solana-keygen JSON array of 64
 * numbers, or base58 of a 64-byte secret key (seed ‖ public key) or of a 32-byte seed. Surrounding
 * whitespace is ignored.
 */
function parseKeyText(raw: string, label: string, redactor?: Redactor): ParsedKey {
  const text = raw.trim();
  let bytes: Uint8Array;
  try {
    bytes = keyBytes(text, label);
  } catch (err) {
    redactor?.add(text); // before the refusal goes anywhere
    throw err;
  }
  if (redactor !== undefined) {
    const seedView = bytes.subarray(0, 32);
    redactSeed(redactor, seedView);
    if (bytes.length === 64) redactSecretKey(redactor, bytes);
    // What solana-keygen writes is `[`, the seed's numbers, then the public half's: scrubbing the
    // seed's number list (registered above) leaves only the public half, which is no secret.
    // Registering the whole text as well would only slow each key's load. Any other spelling of
    // a key (spaces, line breaks, base58) is registered whole.
    if (!text.startsWith(`[${seedView.join(',')},`)) redactor.add(text);
  }
  const seed = bytes.slice(0, 32);
  const givenPublicKey = bytes.length === 64 ? bytes.slice(32) : undefined;
  bytes.fill(0);
  return { seed, givenPublicKey };
}

/** The bytes key text decodes to: 64 (seed ‖ public key) or 32 (a seed). */
function keyBytes(text: string, label: string): Uint8Array {
  let bytes: Uint8Array;
  if (text.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new KeyError('KEY_FORMAT', `${label} is not valid JSON (expected an array of 64 numbers, as solana-keygen writes)`);
    }
    if (!Array.isArray(parsed) || !parsed.every((n) => Number.isInteger(n) && (n as number) >= 0 && (n as number) <= 255)) {
      throw new KeyError('KEY_FORMAT', `${label} must be a JSON array of numbers 0-255, as solana-keygen writes`);
    }
    if (parsed.length !== 64) {
      throw new KeyError('KEY_LENGTH', `${label} holds ${parsed.length} numbers; a solana-keygen key has 64`);
    }
    bytes = Uint8Array.from(parsed as number[]);
  } else {
    try {
      bytes = bs58.decode(text);
    } catch {
      throw new KeyError(
        'KEY_BASE58',
        `${label} is not base58 (expected a 64-byte secret key or 32-byte seed in base58, or a JSON array of 64 numbers)`,
      );
    }
    if (bytes.length !== 64 && bytes.length !== 32) {
      bytes.fill(0);
      throw new KeyError('KEY_LENGTH', `${label} decodes to ${bytes.length} bytes; expected 64 (secret key) or 32 (seed)`);
    }
  }
  return bytes;
}

/** Registers a seed in every encoding it could be printed in. */
function redactSeed(redactor: Redactor, seed: Uint8Array): void {
  redactor.addBytes(seed, (b) => bs58.encode(b));
}

/**
 * Of a 64-byte secret key (seed ‖ public key), only the forms that do not start with the seed's
 * own form: its hex, number list and JSON array begin with the seed's hex and number list, so
 * scrubbing those leaves at most the public half, which is the wallet's address and no secret.
 * Its base64, base64url and base58 mix the two halves and are registered whole.
 */
function redactSecretKey(redactor: Redactor, secretKey64: Uint8Array): void {
  const whole = Buffer.from(secretKey64.buffer, secretKey64.byteOffset, secretKey64.byteLength); // a view, not a copy
  redactor.add(whole.toString('base64')).add(whole.toString('base64url')).add(bs58.encode(secretKey64));
}

/**
 * A loaded wallet key: derived when it is loaded, at start and at every reload, so a corrupt or
 * spliced key (a 64-byte key whose public half is not its seed's) stops the start before any
 * request, instead of waiting for its first signature.
 */
class LoadedKey implements Signer {
  readonly #signer: Signer;

  constructor(
    signer: Signer,
    /** Where the key came from (never the key), for messages about it. */
    readonly source: string,
  ) {
    this.#signer = signer;
  }

  get address(): string {
    return this.#signer.address;
  }

  sign(message: Uint8Array): Uint8Array {
    return this.#signer.sign(message);
  }

  toJSON(): { address: string; source: string } {
    return { address: this.address, source: this.source };
  }
}

/** A key for key text; a 64-byte key whose public half is not its seed's is refused. */
function keyFromText(raw: string, label: string, redactor: Redactor | undefined): LoadedKey {
  const { seed, givenPublicKey } = parseKeyText(raw, label, redactor);
  try {
    const { signer, publicKey } = deriveSigner(seed);
    if (givenPublicKey !== undefined && bs58.encode(givenPublicKey) !== signer.address) {
      throw new KeyError('KEY_INCONSISTENT', `${label}: the public half of the 64-byte secret key does not match its private half (corrupt or spliced key)`);
    }
    if (givenPublicKey === undefined && redactor !== undefined) {
      // A bare seed: the 64-byte secret key it stands for can be printed too.
      const secretKey64 = new Uint8Array(64);
      secretKey64.set(seed);
      secretKey64.set(publicKey, 32);
      redactSecretKey(redactor, secretKey64);
      secretKey64.fill(0);
    }
    return new LoadedKey(signer, label);
  } finally {
    seed.fill(0);
  }
}

/** Loads a wallet key and returns a signer for it. Throws KeyError with a distinct code per problem. */
export function loadKey(source: InProcessKeySource, opts: LoadKeyOptions): Signer & { readonly source: string } {
  const { text, label } = readSource(source, opts);
  return keyFromText(text, label, opts.redactor);
}

/**
 * The derived address must be the configured one: signing for the wrong wallet is refused. The
 * message names the key's source when the signer knows it, so the operator knows which file to fix.
 */
export function checkAddress(signer: Signer & { readonly source?: string }, expected: string, walletName: string): void {
  if (signer.address !== expected) {
    const what = signer.source ?? `the key loaded for wallet ${walletName}`;
    throw new KeyError(
      'KEY_MISMATCH',
      `${what} is the key of address ${signer.address}, but wallet ${walletName} is configured with address ${expected}`,
    );
  }
}

/** Writes a solana-keygen JSON key file with mode 0600; never overwrites an existing file. */
export function writeKeyFile(path: string, secretKey64: Uint8Array): void {
  if (secretKey64.length !== 64) throw new KeyError('KEY_LENGTH', `a secret key is 64 bytes, got ${secretKey64.length}`);
  try {
    writeFileSync(path, `${JSON.stringify([...secretKey64])}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if (errnoCode(err) === 'EEXIST') throw new KeyError('KEY_EXISTS', `key file ${path} already exists; not overwriting it`);
    throw new KeyError('KEY_UNREADABLE', `key file ${path} cannot be written (${errnoCode(err) ?? 'error'})`);
  }
  chmodSync(path, 0o600); // the mode passed to open() is only applied on creation and filtered by umask
}
