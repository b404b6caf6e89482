// SoftHSM2 for tests (Debian's softhsm2 and opensc's pkcs11-tool, installed by .ci/run): a token
// directory of the test's own under its own SOFTHSM2_CONF, tokens initialised on it and an Ed25519
// key pair generated on each (sensitive, never extractable). MODULE is undefined when the module is
// not installed: tests then skip, saying so.
import { execFileSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';

export const MODULE = ['/usr/lib/softhsm/libsofthsm2.so', '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so', '/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so'].find((p) =>
  existsSync(p),
);

export const SKIP_REASON = 'SoftHSM2 is not installed (apt-get install softhsm2 opensc): PKCS#11 not tested';

/** A token directory under `dir` and the softhsm2.conf that points to it; its path is SOFTHSM2_CONF. */
export function softhsmConf(dir: string): string {
  mkdirSync(join(dir, 'tokens'), { recursive: true });
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  return conf;
}

/** A token labelled `label` with an Ed25519 key pair (CKA_LABEL `key`, CKA_ID 01) made on it; the address of its public key. */
export function makeToken(conf: string, label: string, pin: string, key = 'wk'): string {
  const tool = (...args: string[]): string =>
    execFileSync(args[0]!, args.slice(1), { env: { ...process.env, SOFTHSM2_CONF: conf }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (MODULE === undefined) throw new Error(SKIP_REASON);
  tool('softhsm2-util', '--init-token', '--free', '--label', label, '--so-pin', '12345678', '--pin', pin);
  tool('pkcs11-tool', '--module', MODULE, '--token-label', label, '--login', '--pin', pin, '--keypairgen', '--key-type', 'EC:edwards25519', '--label', key, '--id', '01');
  const pem = join(conf, '..', `${label}.pem`);
  tool('pkcs11-tool', '--module', MODULE, '--token-label', label, '--read-object', '--type', 'pubkey', '--id', '01', '-o', pem);
  const x = createPublicKey(readFileSync(pem)).export({ format: 'jwk' }).x ?? '';
  return bs58.encode(Buffer.from(x, 'base64url'));
}
