// The AWS KMS backend against a local double of KMS's JSON protocol (test/support/kms-double.ts),
// reached through the SDK's endpoint override with static test credentials from the environment
// (the default chain): the public key is fetched at connect and must derive the address; Sign is
// asked with MessageType RAW and ED25519_SHA_512 over the message rendered from the action, and its
// signature verifies locally; a KMS that signs other bytes is refused by the daemon's check, a key
// of another spec or another address at connect. An opt-in live test runs when KMS_KEY_ID is set.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { systemClock } from '../../src/domain.js';
import { askSigner } from '../../src/executor/signing-guard.js';
import { KmsSigner } from '../../src/keys/backends/aws-kms.js';
import { checkSignResult } from '../../src/keys/check.js';
import { messageFor, templatesOf } from '../../src/keys/message.js';
import type { SignAction } from '../../src/keys/port.js';
import { generateKeypair } from '../../src/keys/signer.js';
import { KMS_KEY_ID, KMS_TEST_ENV, kmsDouble, type KmsDouble, type KmsDoubleOptions } from '../support/kms-double.js';

const templates = templatesOf(DEFAULT_ENDPOINTS);
const doubles: KmsDouble[] = [];
const signers: KmsSigner[] = [];
const saved: Record<string, string | undefined> = {};

beforeAll(() => {
  // The SDK's default credential chain reads the environment first.
  for (const [k, v] of Object.entries(KMS_TEST_ENV)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});
afterEach(async () => {
  for (const s of signers.splice(0)) await s.close();
  for (const d of doubles.splice(0)) await d.close();
});

async function double(opts: Partial<KmsDoubleOptions> = {}): Promise<{ kms: KmsDouble; address: string }> {
  const { secretKey64, address } = generateKeypair();
  const kms = await kmsDouble({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32), ...opts });
  doubles.push(kms);
  return { kms, address };
}

function signer(url: string, address: string, keyId = KMS_KEY_ID): KmsSigner {
  const s = new KmsSigner({ keyId, region: 'eu-west-1', endpoint: url }, address, templates);
  signers.push(s);
  return s;
}

const deposit = (wallet: string): SignAction => ({ op: 'deposit', wallet, symbol: 'SOL2X', amount: '1.5', ts: 1764000000, epoch: '2026-11-25' });

it("fetches the public key (the address derives from it) and signs the rendered message RAW with ED25519_SHA_512; the signature verifies locally", async () => {
  const { kms, address } = await double();
  const s = signer(kms.url, address);
  await s.connect(AbortSignal.timeout(10_000));
  const result = await s.sign(deposit(address), AbortSignal.timeout(10_000));
  expect(result.message).toBe(messageFor(templates, deposit(address)));
  expect(result.message).toBe(`${address}|SOL2X|1.5|1764000000`);
  expect(checkSignResult(address, result.message, result)).toHaveLength(64);
  expect(kms.seen.map((r) => r.target)).toEqual(['TrentService.GetPublicKey', 'TrentService.Sign']);
  expect(kms.seen[1]!.body).toMatchObject({ KeyId: KMS_KEY_ID, MessageType: 'RAW', SigningAlgorithm: 'ED25519_SHA_512', Message: Buffer.from(result.message).toString('base64') });
  expect(kms.seen.every((r) => r.signed)).toBe(true);
});

it('a KMS that signs other bytes is refused by the check before anything is sent (BAD_SIGNATURE)', async () => {
  const { kms, address } = await double({ signOther: new TextEncoder().encode('something else entirely') });
  const s = signer(kms.url, address);
  const result = await s.sign(deposit(address), AbortSignal.timeout(10_000));
  expect(() => checkSignResult(address, messageFor(templates, deposit(address)), result)).toThrow(expect.objectContaining({ code: 'BAD_SIGNATURE' }) as Error);
});

it('a key of another spec is refused at connect (KMS_KEY_SPEC), and Sign is never asked', async () => {
  const { kms, address } = await double({ keySpec: 'ECC_NIST_P256' });
  const s = signer(kms.url, address);
  await expect(s.connect(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'KMS_KEY_SPEC' });
  await expect(s.sign(deposit(address), AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'KMS_KEY_SPEC' });
  expect(kms.seen.map((r) => r.target)).not.toContain('TrentService.Sign');
});

it('a key of another address is refused at connect (KEY_MISMATCH), and so is every signature', async () => {
  const { kms } = await double();
  const other = generateKeypair();
  const s = signer(kms.url, other.address);
  await expect(s.connect(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'KEY_MISMATCH' });
  await expect(s.sign(deposit(other.address), AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'KEY_MISMATCH' });
  expect(kms.seen.map((r) => r.target)).not.toContain('TrentService.Sign');
});

it("maps KMS's refusals to codes: a missing key, access denied, a disabled key, and unavailable for a 5xx or a closed port", async () => {
  const { kms, address } = await double();
  await expect(signer(kms.url, address, 'alias/nope').connect(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'KMS_NO_KEY' });
  const denied = await double({ error: { type: 'AccessDeniedException', status: 400 } });
  await expect(signer(denied.kms.url, denied.address).connect(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'KMS_DENIED' });
  const disabled = await double({ error: { type: 'DisabledException', status: 400 } });
  await expect(signer(disabled.kms.url, disabled.address).connect(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'KMS_KEY_STATE' });
  const internal = await double({ error: { type: 'KMSInternalException', status: 500 } });
  await expect(signer(internal.kms.url, internal.address).connect(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'SIGNER_UNAVAILABLE' });
  await expect(signer('http://127.0.0.1:9', address).connect(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'SIGNER_UNAVAILABLE' });
});

it.skipIf(process.env['KMS_KEY_ID'] === undefined || process.env['KMS_WALLET'] === undefined || process.env['AWS_REGION'] === undefined)(
  'live: signs with the KMS key $KMS_KEY_ID in $AWS_REGION (address $KMS_WALLET), credentials from the default chain',
  async () => {
    const env = process.env;
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
    const live = new KmsSigner({ keyId: env['KMS_KEY_ID']!, region: env['AWS_REGION']! }, env['KMS_WALLET']!, templates);
    signers.push(live);
    const result = await live.sign(deposit(env['KMS_WALLET']!), AbortSignal.timeout(20_000));
    expect(checkSignResult(env['KMS_WALLET']!, result.message, result)).toHaveLength(64);
  },
);

// Helper 36: KMS failing under a running daemon. A Sign over its quota (ThrottlingException, HTTP
// 400: ECC Sign requests are capped per account and region), credentials that ran out or were
// rotated (ExpiredTokenException, UnrecognizedClientException), access taken away or the key
// disabled: none judges the action, yet each was a refusal (KMS_REFUSED, KMS_DENIED,
// KMS_KEY_STATE) — a deposit after its claim lost for the epoch. At a signature they are
// SIGNER_UNAVAILABLE (the step back to planned); a key that does not exist stays a refusal.
it('at a signature, throttling, expired or rotated credentials, access denied and a disabled key put the step back; a deleted key is refused', async () => {
  const { kms, address } = await double();
  const s = signer(kms.url, address);
  await s.connect(AbortSignal.timeout(10_000));
  const ask = () => askSigner(s, deposit(address), messageFor(templates, deposit(address)), 10_000, systemClock);
  for (const type of ['ThrottlingException', 'ExpiredTokenException', 'UnrecognizedClientException', 'AccessDeniedException', 'DisabledException', 'KMSInvalidStateException']) {
    kms.fail({ type, status: 400 });
    expect({ type, verdict: await ask() }).toMatchObject({ type, verdict: { ok: false, unanswered: true, code: 'SIGNER_UNAVAILABLE' } });
  }
  kms.fail({ type: 'NotFoundException', status: 400 });
  expect(await ask()).toMatchObject({ ok: false, unanswered: false, code: 'KMS_NO_KEY' });
  kms.fail(undefined);
  expect(await ask()).toMatchObject({ ok: true });
});

// The SDK resolves its credential chain once per client and keeps static credentials (the
// environment, ~/.aws/credentials) for the client's life. Credentials refused at a signature drop
// the client: it is made anew, the chain read again, and the request asked once more.
it('credentials rotated under it are read again at the refusal, and the signature is made', async () => {
  const { kms, address } = await double();
  const s = signer(kms.url, address);
  await s.connect(AbortSignal.timeout(10_000));
  const ask = () => askSigner(s, deposit(address), messageFor(templates, deposit(address)), 10_000, systemClock);
  expect(await ask()).toMatchObject({ ok: true });
  const rotated = 'AKIDEXAMPLEROTATED01';
  kms.acceptKeyId(rotated);
  process.env['AWS_ACCESS_KEY_ID'] = rotated;
  try {
    expect(await ask()).toMatchObject({ ok: true });
  } finally {
    process.env['AWS_ACCESS_KEY_ID'] = KMS_TEST_ENV.AWS_ACCESS_KEY_ID;
  }
});

// Helper 36: every wallet's KmsSigner made its own SDK client — its own credential resolution (an
// instance role: one IMDS round per wallet, at the first signature and at each refresh, which IMDS
// throttles) and its own pool of TLS connections: 10,000 wallets, 10,000 of each. The wallets of
// one region and endpoint now share one client, closed with the last of them.
it('the wallets of one region and endpoint share one client: one connection, not one per wallet', async () => {
  const { kms, address } = await double();
  const wallets = [signer(kms.url, address), signer(kms.url, address), signer(kms.url, address)];
  for (const s of wallets) {
    await s.connect(AbortSignal.timeout(10_000));
    expect(await s.sign(deposit(address), AbortSignal.timeout(10_000))).toHaveProperty('signature');
  }
  expect(kms.connections()).toBe(1);
  // Closing one leaves the others signing.
  await wallets[0]!.close();
  expect(await wallets[1]!.sign(deposit(address), AbortSignal.timeout(10_000))).toHaveProperty('signature');
});
