// The Vault transit backend against a local double of the transit API on 127.0.0.1: the public key
// is fetched at connect and must derive the address; signatures come back as vault:v1:<base64>
// over the message rendered from the action; the token is sent only as X-Vault-Token and never
// appears in a refusal. An opt-in live test runs when VAULT_ADDR (and VAULT_TOKEN, VAULT_KEY) are set.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { systemClock } from '../../src/domain.js';
import { askSigner } from '../../src/executor/signing-guard.js';
import { VaultSigner } from '../../src/keys/backends/vault.js';
import { checkSignResult } from '../../src/keys/check.js';
import { messageFor, templatesOf } from '../../src/keys/message.js';
import { SignerRefused, type SignAction } from '../../src/keys/port.js';
import { generateKeypair } from '../../src/keys/signer.js';
import { Redactor } from '../../src/log/redact.js';
import { tempDir } from '../e2e/helpers.js';
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

// Helper 36: a token runs out under a running daemon (its TTL; Vault Agent writes the renewed or
// new one to its sink file, token_file). The token was read once, at start: every signature after
// the TTL was VAULT_DENIED, a refusal — a deposit after its claim lost for the epoch, and every
// step refused until a restart. A 401/403 now reads token_file again and, if it holds another
// token, asks once more with it; a token refused still is SIGNER_UNAVAILABLE at a signature (the
// step back to planned: Vault never judged the action), as it is at start a refusal to start.
it('a token rotated in token_file under it is read again at the 403 and signs; a token refused still puts the step back, not refused', async () => {
  const { secretKey64, address } = generateKeypair();
  const t = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32) });
  const { dir, cleanup } = tempDir('autoclaim-vault-token-');
  try {
    const file = join(dir, 'token');
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    const redactor = new Redactor();
    const v = new VaultSigner({ address: t.url, mount: 'transit', key: 'treasury', tokenFile: file }, address, { env: {}, templates, redactor });
    await v.connect(AbortSignal.timeout(5000));
    const ask = (ts: number) => askSigner(v, { ...claim(address), ts }, messageFor(templates, { ...claim(address), ts }), 5000, systemClock);
    expect(await ask(1764000001)).toMatchObject({ ok: true });
    const renewed = 'hvs.CANARYrenewedtoken9876543210fedcba';
    t.accept([renewed]);
    writeFileSync(file, `${renewed}\n`, { mode: 0o600 });
    expect(await ask(1764000002)).toMatchObject({ ok: true });
    expect(redactor.redact(renewed)).not.toContain(renewed);
    t.accept(['hvs.someone-elses-token']);
    const denied = await ask(1764000003);
    expect(denied).toMatchObject({ ok: false, unanswered: true, code: 'SIGNER_UNAVAILABLE' });
    expect(denied.ok ? '' : denied.detail).toMatch(/HTTP 403/);
    expect(denied.ok ? '' : denied.detail).not.toContain('CANARY');
  } finally {
    cleanup();
  }
});

// Helper 36: a transit key rotated (by hand, or by its auto_rotate_period, months into a run) has
// a new latest version, another key; the wallet's address is still version 1's, and Vault signs
// with version 1 when asked by key_version. The daemon took only the latest version's public key:
// the next start (or a reload) refused the wallet (KEY_MISMATCH) — exit 78 for a routine rotation.
it('a rotated key: the version whose public key derives the address is found and signs, not the latest', async () => {
  const { secretKey64, address } = generateKeypair();
  const next = generateKeypair().secretKey64;
  const t = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32), rotated: { seed: next.slice(0, 32), publicKey: next.slice(32) } });
  const v = vault(t.url, address);
  await v.connect(AbortSignal.timeout(5000));
  const result = await v.sign(claim(address), AbortSignal.timeout(5000));
  expect(checkSignResult(address, result.message, result)).toHaveLength(64);
  expect(JSON.parse(t.seen.at(-1)!.body)).toMatchObject({ key_version: 1 });
});

// Helper 36: a signer made by a reload connects at its first signature. A token refused there (run
// out since) was VAULT_DENIED out of sign, a refusal; like a token refused at a signature it puts
// the step back. A key that is not the address's stays a refusal (above).
it('a signer first connected at a signature, its token refused: the step is put back, not refused', async () => {
  const { secretKey64, address } = generateKeypair();
  const t = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32) });
  t.accept([]);
  const v = vault(t.url, address);
  const denied = await askSigner(v, claim(address), messageFor(templates, claim(address)), 5000, systemClock);
  expect(denied).toMatchObject({ ok: false, unanswered: true, code: 'SIGNER_UNAVAILABLE' });
  expect(denied.ok ? '' : denied.detail).toMatch(/HTTP 403/);
  t.accept([TOKEN]);
  expect(await askSigner(v, claim(address), messageFor(templates, claim(address)), 5000, systemClock)).toMatchObject({ ok: true });
});
