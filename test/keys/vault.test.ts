// The Vault transit backend against a local double of the transit API on 127.0.0.1: the public key
// is fetched at connect and must derive the address; signatures come back as vault:v1:<base64>
// over the message rendered from the action; the token is sent only as X-Vault-Token and never
// appears in a refusal. An opt-in live test runs when VAULT_ADDR (and VAULT_TOKEN, VAULT_KEY) are set.
import { afterEach, expect, it } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { VaultSigner } from '../../src/keys/backends/vault.js';
import { checkSignResult } from '../../src/keys/check.js';
import { messageFor, templatesOf } from '../../src/keys/message.js';
import { SignerRefused, type SignAction } from '../../src/keys/port.js';
import { generateKeypair } from '../../src/keys/signer.js';
import { Redactor } from '../../src/log/redact.js';
import { TOKEN, transit as startTransit, type Transit } from '../support/vault-transit.js';

const templates = templatesOf(DEFAULT_ENDPOINTS);
const doubles: Transit[] = [];
afterEach(async () => {
  for (const t of doubles.splice(0)) await t.close();
});

const transit = async (opts: Parameters<typeof startTransit>[0]) => {
  const t = await startTransit(opts);
  doubles.push(t);
  return t;
};

function vault(url: string, address: string, redactor = new Redactor()) {
  return new VaultSigner({ address: url, mount: 'transit', key: 'treasury', tokenEnv: 'VAULT_TOKEN_T' }, address, { env: { VAULT_TOKEN_T: TOKEN }, templates, redactor });
}

const claim = (wallet: string): SignAction => ({ op: 'claim', wallet, ts: 1764000000, epoch: '2026-11-25' });

it('fetches the public key, checks it derives the address, and signs the rendered message', async () => {
  const { secretKey64, address } = generateKeypair();
  const t = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32) });
  const redactor = new Redactor();
  const v = vault(t.url, address, redactor);
  await v.connect(AbortSignal.timeout(5000));
  const result = await v.sign(claim(address), AbortSignal.timeout(5000));
  expect(result.message).toBe(messageFor(templates, claim(address)));
  expect(checkSignResult(address, result.message, result)).toHaveLength(64);
  expect(t.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['GET /v1/transit/keys/treasury', 'POST /v1/transit/sign/treasury']);
  expect(t.seen.every((s) => s.token === TOKEN)).toBe(true);
  expect(redactor.redact(`token ${TOKEN}`)).not.toContain(TOKEN);
});

it('a key that is not the configured address is refused at connect (KEY_MISMATCH), and so is every signature', async () => {
  const { secretKey64 } = generateKeypair();
  const other = generateKeypair();
  const t = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32) });
  const v = vault(t.url, other.address);
  await expect(v.connect(AbortSignal.timeout(5000))).rejects.toMatchObject({ code: 'KEY_MISMATCH' });
  await expect(v.sign(claim(other.address), AbortSignal.timeout(5000))).rejects.toMatchObject({ code: 'KEY_MISMATCH' });
  expect(t.seen.filter((s) => s.method === 'POST')).toEqual([]);
});

it('refuses a key that is not ed25519, a wrong token, and says unavailable for a sealed Vault or one not listening — never printing the token', async () => {
  const { secretKey64, address } = generateKeypair();
  const rsa = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32), type: 'rsa-2048' });
  await expect(vault(rsa.url, address).connect(AbortSignal.timeout(5000))).rejects.toMatchObject({ code: 'VAULT_KEY_TYPE' });
  const sealed = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32), status: 503 });
  await expect(vault(sealed.url, address).connect(AbortSignal.timeout(5000))).rejects.toMatchObject({ code: 'SIGNER_UNAVAILABLE' });
  const wrongToken = new VaultSigner({ address: rsa.url, mount: 'transit', key: 'treasury', tokenEnv: 'T' }, address, { env: { T: 'hvs.wrong-token-0000000000' }, templates });
  const denied = await wrongToken.connect(AbortSignal.timeout(5000)).catch((e: unknown) => e);
  expect(denied).toBeInstanceOf(SignerRefused);
  expect((denied as SignerRefused).code).toBe('VAULT_DENIED');
  expect((denied as Error).message).not.toContain('hvs.wrong');
  const closed = vault('http://127.0.0.1:9', address);
  const down = await closed.connect(AbortSignal.timeout(5000)).catch((e: unknown) => e);
  expect((down as SignerRefused).code).toBe('SIGNER_UNAVAILABLE');
  expect((down as Error).message).not.toContain(TOKEN);
});

it('the token is read only from where secrets may be: a missing variable is a key error naming it', () => {
  const { address } = generateKeypair();
  expect(() => new VaultSigner({ address: 'http://127.0.0.1:1', mount: 'transit', key: 'k', tokenEnv: 'NOPE' }, address, { env: {}, templates })).toThrow(/NOPE is not set/);
});

it.skipIf(process.env['VAULT_ADDR'] === undefined || process.env['VAULT_KEY'] === undefined || process.env['VAULT_WALLET'] === undefined)(
  'live: signs with the Vault at $VAULT_ADDR (transit key $VAULT_KEY, address $VAULT_WALLET, token $VAULT_TOKEN)',
  async () => {
    const env = process.env as Record<string, string>;
    const v = new VaultSigner({ address: env['VAULT_ADDR']!, mount: env['VAULT_MOUNT'] ?? 'transit', key: env['VAULT_KEY']!, tokenEnv: 'VAULT_TOKEN' }, env['VAULT_WALLET']!, { env, templates });
    await v.connect(AbortSignal.timeout(10_000));
    const result = await v.sign(claim(env['VAULT_WALLET']!), AbortSignal.timeout(10_000));
    expect(checkSignResult(env['VAULT_WALLET']!, result.message, result)).toHaveLength(64);
  },
);
