// The backend shapes of a wallet's `key:` (SPEC §7) load, and a PKCS#11 token label or a Vault key
// name is not mistaken for a secret, while a literal PIN or token still is.
import { expect, it } from 'vitest';
import { findLiteralSecrets } from '../../src/config/secrets.js';
import { KeySource } from '../../src/config/schema-keys.js';
import { ConfigSource, IssueList } from '../../src/config/positions.js';

function secrets(key: unknown): string[] {
  const issues = new IssueList(ConfigSource.withoutText('c.yaml'));
  return findLiteralSecrets({ wallets: [{ name: 'w', key }] }, issues).map((p) => p.join('.'));
}

it('a PKCS#11 token label and a Vault or signer key name are names, not secrets', () => {
  expect(secrets({ pkcs11: { module: '/usr/lib/softhsm/libsofthsm2.so', token: 'autoclaim', label: 'treasury', pin_env: 'HSM_PIN' } })).toEqual([]);
  expect(secrets({ vault: { address: 'https://vault:8200', key: 'treasury', token_env: 'VAULT_TOKEN' } })).toEqual([]);
  expect(secrets({ signer: { socket: '/run/autoclaim-signer/sock', key: 'treasury' } })).toEqual([]);
});

it('a literal PIN, password or token elsewhere is still refused', () => {
  expect(secrets({ pkcs11: { module: '/m.so', token: 't', label: 'l', pin: '1234', password: 'x' } })).toEqual(['wallets.0.key.pkcs11.password']);
  expect(secrets({ vault: { address: 'https://vault:8200', key: 'k', token: 'hvs.abc' } })).toEqual(['wallets.0.key.vault.token']);
});

it('parses every key shape, and refuses a pkcs11 key without exactly one PIN source or one of label/id', () => {
  expect(KeySource.safeParse({ pkcs11: { module: '/m.so', token: 't', label: 'l', pin_env: 'P' } }).success).toBe(true);
  expect(KeySource.safeParse({ pkcs11: { module: '/m.so', token: 't', label: 'l' } }).success).toBe(false);
  expect(KeySource.safeParse({ pkcs11: { module: '/m.so', token: 't', label: 'l', id: '01', pin_env: 'P' } }).success).toBe(false);
  expect(KeySource.safeParse({ vault: { address: 'https://v:8200', key: 'k', token_file: '/etc/t' } }).success).toBe(true);
  expect(KeySource.safeParse({ vault: { address: 'https://v:8200', key: 'k' } }).success).toBe(false);
  expect(KeySource.safeParse({ aws_kms: { key_id: 'alias/treasury', region: 'eu-west-1' } }).success).toBe(true);
  expect(KeySource.safeParse({ signer: { socket: '/run/autoclaim-signer/sock', key: 'treasury' } }).success).toBe(true);
  expect(KeySource.safeParse({ signer: { socket: 'relative', key: 'treasury' } }).success).toBe(false);
});
