// A wallet's `key:` resolved (schema-keys.ts has its shapes, SPEC §7).
import { isAbsolute, resolve as resolvePath } from 'node:path';
import type { KeySource } from '../domain.js';
import type { RawWallet } from './schema.js';

function fromDir(p: string, dir: string): string {
  return isAbsolute(p) ? p : resolvePath(dir, p);
}

/** A wallet's `key:` as the YAML says it, resolved: paths against the config's folder, names camelCased. */
export function keySource(key: RawWallet['key'], dir: string): KeySource {
  if ('file' in key) return { file: fromDir(key.file, dir) };
  if ('env' in key) return { env: key.env };
  if ('credential' in key) return { credential: key.credential };
  if ('pkcs11' in key) {
    const k = key.pkcs11;
    return {
      pkcs11: {
        module: fromDir(k.module, dir),
        token: k.token,
        sessions: k.sessions,
        ...(k.label !== undefined ? { label: k.label } : {}),
        ...(k.id !== undefined ? { id: k.id.toLowerCase() } : {}),
        ...(k.pin_env !== undefined ? { pinEnv: k.pin_env } : {}),
        ...(k.pin_credential !== undefined ? { pinCredential: k.pin_credential } : {}),
      },
    };
  }
  if ('vault' in key) {
    const k = key.vault;
    return {
      vault: {
        address: k.address.replace(/\/+$/, ''),
        mount: k.mount,
        key: k.key,
        ...(k.namespace !== undefined ? { namespace: k.namespace } : {}),
        ...(k.token_env !== undefined ? { tokenEnv: k.token_env } : {}),
        ...(k.token_file !== undefined ? { tokenFile: fromDir(k.token_file, dir) } : {}),
        ...(k.token_credential !== undefined ? { tokenCredential: k.token_credential } : {}),
      },
    };
  }
  if ('aws_kms' in key) {
    const k = key.aws_kms;
    return { aws_kms: { keyId: k.key_id, region: k.region, ...(k.endpoint !== undefined ? { endpoint: k.endpoint } : {}) } };
  }
  return { signer: { socket: key.signer.socket, key: key.signer.key } };
}
